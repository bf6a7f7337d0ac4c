import { useEffect, useState } from "react";
import type { DisplayStatus, RollupStatus } from "../../../shared/fleet/types";
import { countWords } from "../../../shared/fleet/views";
import { STATUS_WORDS } from "../../../shared/fleet/words";
import { matchParts } from "../state/selectors";
import { dispatch } from "../state/dispatch";
import { useFleet } from "../state/store";

/** Re-renders relative times; a UI clock, not a poll of any server. */
const CLOCK_MS = 5_000;

export function useNow(intervalMs = CLOCK_MS): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}

/**
 * A status as a coloured word. A stalled run has its own look and word (not the green of a run
 * that moves); an acknowledged failure is dimmed and says so.
 */
export function StatusChip({
  status,
  asOf,
  stalled,
  heldUp,
  acknowledged,
  label,
}: {
  status: DisplayStatus;
  asOf?: string | null;
  stalled?: boolean;
  /** Stalled because the provider says the run waits (e.g. for capacity): the stalled look, its own word. */
  heldUp?: boolean;
  acknowledged?: boolean;
  label?: string;
}) {
  const isStalled = Boolean(stalled) && status === "running";
  const isHeldUp = isStalled && Boolean(heldUp);
  const handled = Boolean(acknowledged) && status === "failed";
  return (
    <span
      className={`chip chip-${status} ${isStalled ? "chip-stalled" : ""} ${handled ? "chip-acknowledged" : ""}`}
      data-status={status}
      data-stalled={isStalled || undefined}
      data-held-up={isHeldUp || undefined}
      title={
        asOf
          ? `last known as of ${asOf}`
          : isHeldUp
            ? "Running, but the provider says it is waiting (e.g. for capacity); it goes on by itself"
            : isStalled
              ? "Running, but no new activity for longer than the stall time (Settings)"
              : undefined
      }
    >
      {label ?? (isHeldUp ? "held up" : isStalled ? "stalled" : STATUS_WORDS[status])}
      {handled ? " · seen" : null}
    </span>
  );
}

/** Text that may be long (labels and titles from servers): one line, ellipsized, the full text on hover. */
export function Clipped({ text, className, testId }: { text: string; className?: string; testId?: string }) {
  return (
    <span className={`clipped ${className ?? ""}`} title={text} data-testid={testId}>
      {text}
    </span>
  );
}

/** Counts as coloured words: "1 needs approval", "2 running". */
export function CountWords({ counts, seenFailures = 0 }: { counts: Partial<Record<RollupStatus, number>>; seenFailures?: number }) {
  // Acknowledged failures are counted apart, in a quiet colour: handled looks handled.
  const entries = countWords({ ...counts, failed: Math.max(0, (counts.failed ?? 0) - seenFailures) });
  const seen = seenFailures > 0 ? `${seenFailures} failed, seen` : null;
  return (
    <span className="counts" title={[...entries.map((entry) => entry.words), seen].filter(Boolean).join(", ")}>
      {entries.map(({ status, words }) => (
        <span key={status} className={`count count-${status}`} data-testid={`count-${status}`}>
          {words}
        </span>
      ))}
      {seen ? (
        <span className="count count-acknowledged" data-testid="count-acknowledged">
          {seen}
        </span>
      ) : null}
    </span>
  );
}

/** The failure of the last command run at this place, shown where the user acted. */
export function PlaceError({ place }: { place: string }) {
  const failure = useFleet((s) => s.failures.get(place));
  if (!failure) return null;
  return (
    <span className="place-error" role="alert" data-testid="command-error" data-place={place} title={failure}>
      {failure}
      <button type="button" className="place-error-dismiss" aria-label="Dismiss the error" onClick={() => dispatch("failure.dismiss", "button", { place })}>
        ×
      </button>
    </span>
  );
}

/** The DOM id of a tree or inbox row, for `aria-activedescendant` (row ids hold `/`, `:` and `#`). */
export function rowDomId(rowId: string): string {
  return `row-${encodeURIComponent(rowId)}`;
}

/** Text with the search's matches marked. */
export function Highlighted({ text, search }: { text: string; search: string }) {
  if (!search) return <>{text}</>;
  return (
    <>
      {matchParts(text, search).map((part, index) =>
        part.match ? (
          <mark key={index} data-testid="match">
            {part.text}
          </mark>
        ) : (
          part.text
        ),
      )}
    </>
  );
}
