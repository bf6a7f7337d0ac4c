// "Handled today" (issue 25 point 2): what the user did to agents since local midnight, newest
// first, as the fleet service keeps it (so it survives a reload of the window).
import { handledWords } from "../../../shared/fleet/handled";
import { clockTime } from "../state/format";
import { useFleet } from "../state/store";
import { PlaceError } from "./common";
import { ListDialog } from "./ListDialog";

export function HandledToday() {
  const handled = useFleet((s) => s.handled);
  return (
    <ListDialog title="Handled today" testId="handled-today">
      {handled === null ? (
        <p className="hint">Reading the list…</p>
      ) : handled.length === 0 ? (
        <p className="hint" data-testid="handled-empty">
          Nothing handled yet today. Approvals, answers, acknowledgements, snoozes and stops show here.
        </p>
      ) : (
        <ol className="action-list" aria-label="Handled since midnight, newest first">
          {handled.map((entry) => (
            <li key={entry.id} data-testid="handled-entry" data-key={entry.key}>
              <time dateTime={new Date(entry.at).toISOString()} className="action-list-time">
                {clockTime(entry.at)}
              </time>
              <span>{handledWords(entry, clockTime)}</span>
            </li>
          ))}
        </ol>
      )}
      <PlaceError place="handled" />
    </ListDialog>
  );
}
