import { useEffect, useRef, useState } from "react";
import { INPUT_LIMITS } from "../../../shared/bridge/contract";
import { messageIntent, intentHeadline } from "../../../shared/fleet/delivery";
import type { RunningMessageMode } from "../../../shared/fleet/facts";
import type { AgentView } from "../../../shared/fleet/types";
import { dispatch } from "../state/dispatch";
import { focusTargets } from "../state/focus";
import { useFleet } from "../state/store";
import { PlaceError } from "./common";

/** The longest message the bridge accepts: the contract's own limit, so the counter and the bridge agree. */
export const MESSAGE_MAX_CHARS = INPUT_LIMITS.messageText;

/** From this share of the limit on, the composer says the message is near it. */
const NEAR_LIMIT = 0.9;

/** What a screen reader hears of the length: nothing until near the limit, then one sentence per stage. */
export function limitWords(length: number): string {
  if (length > MESSAGE_MAX_CHARS) return `Too long to send: the limit is ${MESSAGE_MAX_CHARS.toLocaleString("en")} characters.`;
  if (length >= MESSAGE_MAX_CHARS * NEAR_LIMIT) return `Near the limit of ${MESSAGE_MAX_CHARS.toLocaleString("en")} characters.`;
  return "";
}

/** A message whose answer was lost with the connection, until T3 Fleet's receipts are back (slices/lost-sends.ts). */
export const LOST_SEND_WORDS = "This message may have been sent: see its receipt when T3 Fleet is back.";
/** The same, once T3 Fleet's receipts are back without it: it never reached T3 Fleet. */
export const LOST_SEND_NOT_RECEIVED_WORDS = "T3 Fleet has no record of this message, so it was not sent. Send it again when ready.";

/** Shows what a message would do before it is sent, and updates it live. */
export function Composer({ agent }: { agent: AgentView }) {
  const env = useFleet((s) => s.environments.get(agent.environmentId));
  // The draft is the agent's: opening another agent shows that one's, so Enter never sends one agent's words to another.
  const text = useFleet((s) => s.drafts.get(agent.key) ?? "");
  const setDraft = useFleet((s) => s.setDraft);
  const setText = (next: string) => setDraft(agent.key, next);
  const [sending, setSending] = useState(false);
  const [choice, setChoice] = useState<RunningMessageMode | undefined>(undefined);
  // A message whose answer was lost is shown as it left, and Send waits, until T3 Fleet's receipts
  // are back: there it is either its receipt, or comes back here to be sent again (under its first id).
  const lost = useFleet((s) => s.lostSends.get(agent.key));
  const lostHeld = lost !== undefined && !lost.checked;
  const notReceived = lost?.checked ? lost : undefined;
  // Taken back into the editable text once, when the receipts came back without it (state adjusted while rendering).
  const [returned, setReturned] = useState<typeof notReceived>(undefined);
  if (notReceived !== returned) {
    setReturned(notReceived);
    if (notReceived) setText(notReceived.text);
  }
  const shown = lostHeld ? lost.text : text;
  const textRef = useRef<HTMLTextAreaElement>(null);
  // A request to focus the composer ("m") while sending is refused (e.g. the agent is starting) is
  // kept, with where focus was, and honoured once the composer can take it, unless focus moved.
  const focusWanted = useRef<Element | null>(null);
  useEffect(() => {
    focusTargets.composer = () => {
      const area = textRef.current;
      if (!area) return;
      if (area.disabled) focusWanted.current = document.activeElement;
      else area.focus();
    };
    return () => {
      focusTargets.composer = undefined;
    };
  }, []);
  // Live from the fleet view; the service recomputes it at send time and refuses if it changed.
  // The user's choice between steering and queueing applies where the agent offers both.
  const intent = messageIntent(agent, env, choice);
  const canChoose = (intent.kind === "steer" || intent.kind === "queue") && intent.choices.includes("steer") && intent.choices.includes("queue");
  const label = intentHeadline(intent);
  // Waiting for something first (an approval to answer) is no fault: the message can be written meanwhile.
  const waiting = intent.kind === "refused" && intent.wait === true;
  const closed = intent.kind === "refused" && !waiting;
  useEffect(() => {
    const wantedFrom = focusWanted.current;
    if (closed || wantedFrom === null) return;
    focusWanted.current = null;
    if (document.activeElement === wantedFrom) textRef.current?.focus();
  }, [closed]);
  const tooLong = shown.length > MESSAGE_MAX_CHARS;
  const machine = env?.label ?? agent.environmentId;

  const send = async () => {
    if (intent.kind === "refused" || text.trim() === "" || sending || tooLong || lostHeld) return;
    setSending(true);
    try {
      // Lost: the store holds the message (shown above while its fate is unknown).
      if ((await dispatch("agent.send", "button", { key: agent.key, text, intent: intent.kind })) !== "failed") {
        setText("");
        // A choice of steer or queue was for that message: the next starts from the fleet's default for the agent's state.
        setChoice(undefined);
      }
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
      <div className={`intent intent-${waiting ? "wait" : intent.kind}`} data-testid="intent" data-intent={intent.kind} data-wait={waiting}>
        {label}
        {intent.kind !== "refused" && intent.note ? <span className="intent-note"> — {intent.note}</span> : null}
      </div>
      {canChoose ? (
        <div className="segmented run-choice" role="radiogroup" aria-label="While the agent runs">
          <button type="button" role="radio" aria-checked={intent.kind === "steer"} data-testid="choose-steer" onClick={() => setChoice("steer")}>
            Steer this run
          </button>
          <button type="button" role="radio" aria-checked={intent.kind === "queue"} data-testid="choose-queue" onClick={() => setChoice("queue")}>
            Queue after it
          </button>
        </div>
      ) : null}
      {lostHeld || (notReceived && text === notReceived.text) ? (
        <p className="composer-lost" role="status" data-testid="lost-send" data-checked={lostHeld ? "false" : "true"}>
          {lostHeld ? LOST_SEND_WORDS : LOST_SEND_NOT_RECEIVED_WORDS}
        </p>
      ) : null}
      <textarea
        ref={textRef}
        aria-label={`Message to ${agent.title} on ${machine}`}
        value={shown}
        readOnly={lostHeld}
        placeholder={waiting ? "Write it now; it can be sent once that is done" : closed ? "" : "Message this agent (Enter sends, Shift+Enter for a new line)"}
        disabled={closed}
        aria-invalid={tooLong}
        aria-describedby={`counter-${agent.key}`}
        onChange={(event) => {
          setText(event.target.value);
          // Cleared by the user: a message T3 Fleet never received is not brought back after a reload.
          if (notReceived && event.target.value.trim() === "") dispatch("agent.forget-lost-send", "button", { key: agent.key });
        }}
        onKeyDown={(event) => {
          if (event.key === "Escape") {
            event.currentTarget.blur();
            event.stopPropagation();
          } else if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault();
            void send();
          }
        }}
      />
      <div className="composer-footer">
        <span className={`counter ${tooLong ? "counter-over" : ""}`} data-testid="message-counter" id={`counter-${agent.key}`}>
          {shown.length.toLocaleString("en")} / {MESSAGE_MAX_CHARS.toLocaleString("en")}
          {tooLong ? " — too long to send" : ""}
        </span>
        {/* Announced once when the message nears the limit and once when it passes it, never per keystroke. */}
        <span className="sr-only" aria-live="polite" data-testid="message-limit-announcer">
          {limitWords(shown.length)}
        </span>
        <PlaceError place={`composer:${agent.key}`} />
        {/* The target, restated beside Send: a message never goes to an agent the user did not mean. */}
        <span className="composer-target" data-testid="composer-target" title={`${agent.title} on ${machine}`}>
          to <strong className="clipped target-agent">{agent.title}</strong> on <strong className="target-machine">{machine}</strong>
        </span>
        <button
          type="submit"
          className="primary"
          data-testid="send"
          disabled={intent.kind === "refused" || shown.trim() === "" || sending || tooLong || lostHeld}
        >
          {intent.kind === "queue" ? "Queue" : "Send"}
          <span className="sr-only">
            {" "}
            to {agent.title} on {machine}
          </span>
          <kbd aria-hidden="true">Enter</kbd>
        </button>
      </div>
    </form>
  );
}
