// Interrupt, saying what happens to the messages T3 queued behind the running turn: they start
// next, unless the user interrupts and holds them (their queued runs are cancelled in T3 and the
// fleet keeps their text, to send or discard later: electron/fleet/interrupt-hold.ts).
import { useEffect, useRef, useState } from "react";
import type { TranscriptItem } from "../../../shared/fleet/facts";
import type { AgentView } from "../../../shared/fleet/types";
import { commands } from "../state/commands";
import { focusTargets } from "../state/focus";
import { useFleet } from "../state/store";
import { CommandButton } from "./CommandButton";

const NONE: TranscriptItem[] = [];

/** The messages waiting in T3's queue behind the running turn, as the open transcript shows them. */
function queuedTexts(items: TranscriptItem[]): string[] {
  return items.flatMap((item) => (item.type === "message" && item.queue?.state === "queued" ? [item.text] : []));
}

function quoted(texts: string[]): string {
  const shown = texts.slice(0, 2).map((text) => `“${text.length > 60 ? `${text.slice(0, 59)}…` : text}”`);
  return texts.length > 2 ? `${shown.join(", ")} and ${texts.length - 2} more` : shown.join(" and ");
}

export function InterruptAction({ agent }: { agent: AgentView }) {
  const items = useFleet((s) => s.details.get(agent.key)?.items ?? NONE);
  const queued = queuedTexts(items);
  const [confirming, setConfirming] = useState(false);
  const hasQueue = queued.length > 0;
  // The question opens on its safe answer: Enter or Space keeps the turn running.
  const keepRunning = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (confirming) keepRunning.current?.focus();
  }, [confirming]);
  useEffect(() => {
    // The `i` key asks first too when messages wait behind the turn.
    focusTargets.interrupt = (key) => {
      if (key !== agent.key || !hasQueue) return false;
      setConfirming(true);
      return true;
    };
    return () => {
      focusTargets.interrupt = undefined;
    };
  }, [agent.key, hasQueue]);
  if (confirming && hasQueue) {
    const count = queued.length === 1 ? "1 queued message" : `${queued.length} queued messages`;
    return (
      <span className="confirm" role="group" aria-label="Interrupt the running turn?" data-testid="interrupt-confirm">
        <span className="confirm-text" data-testid="interrupt-confirm-text">
          Interrupt? {count} then start{queued.length === 1 ? "s" : ""} next: {quoted(queued)}. Hold {queued.length === 1 ? "it" : "them"} to keep{" "}
          {queued.length === 1 ? "it" : "them"} from starting: T3 cancels the queued turn{queued.length === 1 ? "" : "s"} and the fleet keeps the text here to
          send or discard.
        </span>
        <button type="button" className="danger" data-testid="interrupt-start-next" onClick={() => (setConfirming(false), void commands.interrupt(agent.key))}>
          Interrupt
        </button>
        <button type="button" className="danger" data-testid="interrupt-hold" onClick={() => (setConfirming(false), void commands.interrupt(agent.key, true))}>
          Interrupt and hold queued
        </button>
        <button type="button" ref={keepRunning} data-testid="interrupt-keep-running" onClick={() => setConfirming(false)}>
          Keep running
        </button>
      </span>
    );
  }
  return (
    <CommandButton
      id="agent.interrupt"
      testId="interrupt"
      label={hasQueue ? "Interrupt…" : "Interrupt"}
      title={
        hasQueue ? "Stop the running turn: asks first, since messages are queued behind it" : "Stop the running turn; messages queued behind it then start"
      }
      {...(hasQueue && { onRun: () => setConfirming(true) })}
    />
  );
}
