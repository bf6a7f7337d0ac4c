// Interrupt, saying what happens to the messages T3 queued behind the running turn: they start
// next, unless the user interrupts and holds them (their queued runs are cancelled in T3 and the
// fleet keeps their text, to send or discard later: electron/fleet/interrupt-hold.ts).
import { useEffect, useState } from "react";
import type { TranscriptItem } from "../../../shared/fleet/facts";
import type { AgentView } from "../../../shared/fleet/types";
import { commands } from "../state/commands";
import { focusTargets } from "../state/focus";
import { useFleet } from "../state/store";
import { CommandButton } from "./CommandButton";
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
function InterruptConfirm({ agentKey, queued, close }: { agentKey: string; queued: string[]; close: () => void }) {
  const { safeRef, keep } = useSafeConfirm();
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
      <button type="button" className="danger" data-testid="interrupt-start-next" onClick={() => (close(), void commands.interrupt(agentKey))}>
        Interrupt
      </button>
      <button type="button" className="danger" data-testid="interrupt-hold" onClick={() => (close(), void commands.interrupt(agentKey, true))}>
        Interrupt and hold queued
      </button>
    </span>
  );
}

export function InterruptAction({ agent }: { agent: AgentView }) {
  const items = useFleet((s) => s.details.get(agent.key)?.items ?? NONE);
  const queued = queuedTexts(items);
  const [confirming, setConfirming] = useState(false);
  const hasQueue = queued.length > 0;
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
  if (confirming && hasQueue) return <InterruptConfirm agentKey={agent.key} queued={queued} close={() => setConfirming(false)} />;
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
