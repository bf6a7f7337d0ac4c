import { useState } from "react";
import { messageIntent } from "../../../shared/fleet/delivery";
import type { AgentView } from "../../../shared/fleet/types";
import { commands } from "../state/effects";
import { useFleet } from "../state/store";

/** Shows what a message would do before it is sent, and updates it live (design §4). */
export function Composer({ agent }: { agent: AgentView }) {
  const env = useFleet((s) => s.environments.get(agent.environmentId));
  const [text, setText] = useState("");
  const [sending, setSending] = useState(false);
  // Live from the fleet view; the service recomputes it at send time and refuses if it changed.
  const intent = messageIntent(agent, env);
  const label =
    intent.kind === "steer"
      ? "Steer the running turn"
      : intent.kind === "queue"
        ? "Start a new turn after the running one"
        : intent.kind === "new-turn"
          ? "Start a new turn"
          : `Cannot send: ${intent.reason}`;

  const send = async () => {
    if (intent.kind === "refused" || text.trim() === "" || sending) return;
    setSending(true);
    try {
      await commands.send(agent.key, text, intent.kind);
      setText("");
    } finally {
      setSending(false);
    }
  };

  return (
    <form
      className="composer"
      data-testid="composer"
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      <div className={`intent intent-${intent.kind}`} data-testid="intent" data-intent={intent.kind}>
        {label}
        {intent.kind !== "refused" && intent.note ? <span className="intent-note"> — {intent.note}</span> : null}
      </div>
      <textarea
        aria-label="Message"
        value={text}
        placeholder={intent.kind === "refused" ? "" : "Message this agent (Enter sends, Shift+Enter for a new line)"}
        disabled={intent.kind === "refused"}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault();
            void send();
          }
        }}
      />
      <button type="submit" className="primary" disabled={intent.kind === "refused" || text.trim() === "" || sending}>
        Send
      </button>
    </form>
  );
}
