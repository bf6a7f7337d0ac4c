// The confirm of a command T3 cannot take back once it has it (deny and stop, stop the session): it
// opens on its safe answer, "Keep it" (safe-confirm.ts), so Enter or Esc keeps things as they are;
// the destructive button is one Tab away, and must be chosen.
import { useEffect } from "react";
import { dispatch } from "../state/dispatch";
import type { PendingConfirm } from "../state/slices/actions";
import { useFleet } from "../state/store";
import { useSafeConfirm } from "./safe-confirm";

export function ConfirmAction({
  pending,
  question,
  confirmLabel,
  testId,
}: {
  pending: PendingConfirm;
  question: string;
  confirmLabel: string;
  testId: string;
}) {
  const { safeRef, keep } = useSafeConfirm();
  useEffect(
    () => () => {
      // Leaving the agent (or the card going away) drops the question: nothing is sent unasked.
      if (useFleet.getState().confirming === pending) useFleet.getState().askConfirm(null);
    },
    [pending],
  );
  const keepIt = () => keep(() => dispatch("action.cancel", "button"));
  return (
    <span
      className="confirm"
      role="group"
      aria-label={question}
      data-testid="confirm-action"
      onKeyDown={(event) => {
        // Esc here rather than the window's (which would close the agent).
        if (event.key !== "Escape") return;
        event.preventDefault();
        event.stopPropagation();
        keepIt();
      }}
    >
      <span className="confirm-text">{question}</span>
      <button ref={safeRef} type="button" data-testid="confirm-keep" aria-keyshortcuts="Escape" onClick={keepIt}>
        Keep it
        <kbd aria-hidden="true">Esc</kbd>
      </button>
      <button type="button" className="danger" data-testid={testId} onClick={() => dispatch("action.confirm", "button", {})}>
        {confirmLabel}
      </button>
    </span>
  );
}
