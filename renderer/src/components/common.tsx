import { useEffect, useState } from "react";
import type { DisplayStatus } from "../../../shared/fleet/types";
import { STATUS_WORDS } from "../../../shared/fleet/words";

/** Re-renders relative times; a UI clock, not a poll of any server. */
const CLOCK_MS = 5_000;

export function useNow(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), CLOCK_MS);
    return () => clearInterval(timer);
  }, []);
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
