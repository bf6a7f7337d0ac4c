// "Handled today" (issue 25 point 2): what the user did to agents since local midnight, newest
// first, as the fleet service keeps it (so it survives a reload of the window). Each entry opens
// its agent, while the fleet still has it.
import { handledWords, letGoWords } from "../../../shared/fleet/handled";
import { dispatch } from "../state/dispatch";
import { useFleetFacts } from "../state/fleet-facts";
import { focusTargets } from "../state/focus";
import { clockTime } from "../state/format";
import { useFleet } from "../state/store";
import { PlaceError } from "./common";
import { ListDialog } from "./ListDialog";

/** Closes the list and opens the agent, with focus on it (the list's own close would send focus back to the pane). */
function openEntry(key: string): void {
  dispatch("list.close", "button");
  void dispatch("agent.open", "button", { key })?.then(() => focusTargets.panel?.());
}

export function HandledToday() {
  const handled = useFleet((s) => s.handled);
  const letGo = useFleet((s) => s.handledLetGo);
  const { agents } = useFleetFacts();
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
          {handled.map((entry) => {
            const words = handledWords(entry, clockTime);
            const present = agents.has(entry.key);
            return (
              <li key={entry.id} className="handled-entry" data-testid="handled-entry" data-key={entry.key}>
                <time dateTime={new Date(entry.at).toISOString()} className="action-list-time">
                  {clockTime(entry.at)}
                </time>
                {present ? (
                  <button
                    type="button"
                    className="link-button action-list-main"
                    data-testid="handled-open"
                    title="Open this agent"
                    onClick={() => openEntry(entry.key)}
                  >
                    {words}
                  </button>
                ) : (
                  <span className="action-list-main" title="This agent is no longer in the fleet">
                    {words}
                  </span>
                )}
              </li>
            );
          })}
        </ol>
      )}
      {handled !== null && letGo > 0 ? (
        <p className="hint" data-testid="handled-let-go">
          {letGoWords(letGo)}
        </p>
      ) : null}
      <PlaceError place="handled" />
    </ListDialog>
  );
}
