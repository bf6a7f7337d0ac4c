// A dialog that shows a list the user opened from the inbox (handled today, snoozed): Esc or Close
// shuts it and focus goes back to the list it came from.
import { type ReactNode, useEffect, useRef } from "react";
import { focusWhenStill } from "../state/focus";
import { dispatch } from "../state/dispatch";

export function ListDialog({ title, testId, children }: { title: string; testId: string; children: ReactNode }) {
  const closeRef = useRef<HTMLButtonElement>(null);
  useEffect(() => closeRef.current?.focus(), []);
  const close = () => {
    dispatch("list.close", "button");
    requestAnimationFrame(focusWhenStill("pane"));
  };
  const titleId = `${testId}-title`;
  return (
    <div className="dialog-backdrop" onClick={(event) => event.target === event.currentTarget && close()}>
      <div
        className="dialog list-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        data-testid={testId}
        onKeyDown={(event) => {
          if (event.key !== "Escape") return;
          event.stopPropagation();
          close();
        }}
      >
        <h2 id={titleId}>{title}</h2>
        {children}
        <div className="dialog-actions">
          <button ref={closeRef} type="button" onClick={close}>
            Close
          </button>
        </div>
      </div>
    </div>
  );
}
