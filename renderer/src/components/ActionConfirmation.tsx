// The brief confirmation of the last action (issue 25 point 2): what was done, to which agent, on
// which machine, with Undo where T3 allows it. Its live region is always rendered, so each
// confirmation is announced once, politely; it stays long enough to read and to undo, longer while
// the pointer or focus is on it. With an agent open it sits in the agent view, above the composer,
// taking its own line: laid over the window it covered the composer's Send row (issue 40 point 7).
import { useEffect, useState } from "react";
import { dispatch } from "../state/dispatch";
import { useFleet } from "../state/store";
import { ActionButton } from "./ActionButton";
import { PlaceError } from "./common";

/** How long a confirmation stays when the user leaves it alone. */
export const CONFIRMATION_SHOWN_MS = 10_000;

export function ActionConfirmation({ inPanel = false }: { inPanel?: boolean }) {
  const confirmation = useFleet((s) => s.confirmation);
  const [held, setHeld] = useState(false);
  useEffect(() => {
    if (!confirmation || held) return;
    const timer = setTimeout(() => useFleet.getState().clearConfirmation(confirmation.id), CONFIRMATION_SHOWN_MS);
    return () => clearTimeout(timer);
  }, [confirmation, held]);
  return (
    <div
      className={`action-confirmation ${inPanel ? "action-confirmation-in-panel" : ""}`}
      data-testid="action-confirmation"
      data-shown={confirmation ? "true" : "false"}
      onMouseEnter={() => setHeld(true)}
      onMouseLeave={() => setHeld(false)}
      onFocus={() => setHeld(true)}
      onBlur={() => setHeld(false)}
    >
      <p role="status" aria-live="polite" aria-atomic="true" data-testid="action-confirmation-text">
        {confirmation?.text ?? ""}
      </p>
      {confirmation?.undo ? <ActionButton id="action.undo" testId="undo" label="Undo" title="Take this back" /> : null}
      {confirmation ? (
        <button
          type="button"
          className="action-confirmation-dismiss"
          aria-label="Dismiss"
          onClick={() => dispatch("confirmation.dismiss", "button", { id: confirmation.id })}
        >
          ×
        </button>
      ) : null}
      <PlaceError place="undo" />
    </div>
  );
}
