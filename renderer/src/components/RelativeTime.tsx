import { useClock } from "../state/clock";
import { relativeTime } from "../state/format";

/** "12s ago": the only thing the UI clock re-renders. */
export function RelativeTime({ iso, className = "time" }: { iso: string | null; className?: string }) {
  const now = useClock();
  return <span className={className}>{relativeTime(iso, now)}</span>;
}
