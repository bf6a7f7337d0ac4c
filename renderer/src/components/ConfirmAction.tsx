// The one-key confirm of a command T3 cannot take back once it has it (deny and stop, stop the
// session): the confirm button takes focus, so Enter sends it and Esc keeps things as they are.
import { useEffect, useRef } from "react";
import { commands } from "../state/commands";
import type { PendingConfirm } from "../state/slices/actions";
import { useFleet } from "../state/store";

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
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    confirmRef.current?.focus();
    // Leaving the agent (or the card going away) drops the question: nothing is sent unasked.
    return () => {
      if (useFleet.getState().confirming === pending) useFleet.getState().askConfirm(null);
    };
  }, [pending]);
  const keep = () => useFleet.getState().askConfirm(null);
  return (
    <span
      className="confirm"
      role="group"
      aria-label={question}
      data-testid="confirm-action"
      onKeyDown={(event) => {
        // The one key, here rather than the window's keys (Enter there opens the selected agent).
        if (event.key !== "Enter" && event.key !== "Escape") return;
        event.preventDefault();
        event.stopPropagation();
        if (event.key === "Enter" && event.target === confirmRef.current) void commands.confirmPending();
        else keep();
      }}
    >
      <span className="confirm-text">{question}</span>
      <button ref={confirmRef} type="button" className="danger" data-testid={testId} aria-keyshortcuts="Enter" onClick={() => void commands.confirmPending()}>
        {confirmLabel}
        <kbd aria-hidden="true">Enter</kbd>
      </button>
      <button type="button" aria-keyshortcuts="Escape" onClick={keep}>
        Keep it
        <kbd aria-hidden="true">Esc</kbd>
      </button>
    </span>
  );
}
