// Interrupt, saying what happens to the messages T3 queued behind the running turn: they start
// next, unless the user interrupts and holds them (their queued runs are cancelled in T3 and the
// fleet keeps their text, to send or discard later: electron/fleet/interrupt-hold.ts).
// The question is the store's (slices/actions.ts `confirming`), asked by the interrupt's handler
// (state/action-handlers.ts), so the key, the button and the palette ask alike.
import { useEffect, useMemo } from "react";
import type { TranscriptItem } from "../../../shared/fleet/facts";
import type { AgentView } from "../../../shared/fleet/types";
import { dispatch } from "../state/dispatch";
import { useTranscriptDetail } from "../state/open-detail";
import { useFleet } from "../state/store";
import { ActionButton } from "./ActionButton";
import { useSafeConfirm } from "./safe-confirm";

const NONE: TranscriptItem[] = [];

/** The messages waiting in T3's queue behind the running turn, as the open transcript shows them. */
function queuedTexts(items: TranscriptItem[]): string[] {
  return items.flatMap((item) => (item.type === "message" && item.queue?.state === "queued" ? [item.text] : []));
}

function quoted(texts: string[]): string {
  const shown = texts.slice(0, 2).map((text) => `“${text.length > 60 ? `${text.slice(0, 59)}…` : text}”`);
  return texts.length > 2 ? `${shown.join(", ")} and ${texts.length - 2} more` : shown.join(" and ");
}

/** The question before interrupting a turn with messages queued behind it; it opens on "Keep running". */
function InterruptConfirm({ queued }: { queued: string[] }) {
  const { safeRef, keep } = useSafeConfirm();
  const pending = useFleet((s) => s.confirming);
  useEffect(
    () => () => {
      // Leaving the agent (or the queue emptying) drops the question: nothing is sent unasked.
      if (useFleet.getState().confirming === pending) useFleet.getState().askConfirm(null);
    },
    [pending],
  );
  const close = () => dispatch("action.cancel", "button");
  const count = queued.length === 1 ? "1 queued message" : `${queued.length} queued messages`;
  return (
    <span
      className="confirm"
      role="group"
      aria-label="Interrupt the running turn?"
      data-testid="interrupt-confirm"
      onKeyDown={(event) => {
        // Esc keeps the turn running here, rather than the window's Esc (which would close the agent).
        if (event.key !== "Escape") return;
        event.preventDefault();
        event.stopPropagation();
        keep(close);
      }}
    >
      <span className="confirm-text" data-testid="interrupt-confirm-text">
        Interrupt? {count} then start{queued.length === 1 ? "s" : ""} next: {quoted(queued)}. Hold {queued.length === 1 ? "it" : "them"} to keep{" "}
        {queued.length === 1 ? "it" : "them"} from starting: T3 cancels the queued turn{queued.length === 1 ? "" : "s"} and the fleet keeps the text here to
        send or discard.
      </span>
      <button type="button" ref={safeRef} data-testid="interrupt-keep-running" aria-keyshortcuts="Escape" onClick={() => keep(close)}>
        Keep running
        <kbd aria-hidden="true">Esc</kbd>
      </button>
      <button type="button" className="danger" data-testid="interrupt-start-next" onClick={() => dispatch("action.confirm", "button", {})}>
        Interrupt
      </button>
      <button type="button" className="danger" data-testid="interrupt-hold" onClick={() => dispatch("action.confirm", "button", { holdQueued: true })}>
        Interrupt and hold queued
      </button>
    </span>
  );
}

export function InterruptAction({ agent }: { agent: AgentView }) {
  // As the transcript reads it: a streamed token is no change to what is queued.
  const items = useTranscriptDetail(agent.key)?.items ?? NONE;
  const queued = useMemo(() => queuedTexts(items), [items]);
  const asked = useFleet((s) => s.confirming?.action === "interrupt" && s.confirming.key === agent.key);
  const hasQueue = queued.length > 0;
  if (asked && hasQueue) return <InterruptConfirm queued={queued} />;
  return (
    <ActionButton
      id="agent.interrupt"
      testId="interrupt"
      label={hasQueue ? "Interrupt…" : "Interrupt"}
      title={
        hasQueue ? "Stop the running turn: asks first, since messages are queued behind it" : "Stop the running turn; messages queued behind it then start"
      }
    />
  );
}
