import { useEffect, useState } from "react";
import type { DisplayStatus } from "../../../shared/fleet/types";
import { countWords } from "../../../shared/fleet/views";
import { STATUS_WORDS } from "../../../shared/fleet/words";
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

export function StatusChip({ status, asOf, stalled, label }: { status: DisplayStatus; asOf?: string | null; stalled?: boolean; label?: string }) {
  return (
    <span className={`chip chip-${status}`} data-status={status} title={asOf ? `last known as of ${asOf}` : undefined}>
      {label ?? STATUS_WORDS[status]}
      {stalled ? <span className="chip-flag"> · stalled</span> : null}
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
export function CountWords({ counts }: { counts: Partial<Record<DisplayStatus, number>> }) {
  const entries = countWords(counts);
  return (
    <span className="counts" title={entries.map((entry) => entry.words).join(", ")}>
      {entries.map(({ status, words }) => (
        <span key={status} className={`count count-${status}`} data-testid={`count-${status}`}>
          {words}
        </span>
      ))}
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
      <button type="button" className="place-error-dismiss" aria-label="Dismiss the error" onClick={() => useFleet.getState().clearFailure(place)}>
        ×
      </button>
    </span>
  );
}
