// Delivery rules (docs/architecture.md, "The fleet model and its rules"), pure and protocol-neutral: what a message would do right now, and
// the states a send goes through. What a running agent does with a message is a capability fact of
// its adapter (shared/fleet/facts.ts), never guessed here.
import type { RunningMessageMode } from "./facts";
import { driverName } from "./provider-name";
import type { AgentView, EnvironmentView } from "./types";

/**
 * - `steer`: folded into the running turn `runId`;
 * - `queue`: starts a new turn after the running turn `runId`;
 * - `new-turn`: starts a turn now (nothing runs). `note` is said before sending; for a stuck start
 *   it is the warning that comes with sending anyway.
 * `choices` lists what the user may pick instead while a turn runs (protocol 2 offers both).
 */
export type Intent =
  | { kind: "steer"; runId: string; note: string | null; choices: RunningMessageMode[] }
  /** `unobserved`: no test has seen what this harness does with it (the note says so). */
  | { kind: "queue"; runId: string; note: string | null; choices: RunningMessageMode[]; unobserved?: true }
  /** `insteadOffer`: the safer way out to offer beside sending (a stuck start: stop the session). */
  | { kind: "new-turn"; note: string | null; insteadOffer?: "stop" }
  /**
   * `wait`: not a fault, only something to do or wait for first (answer the approval, let the turn
   * start); said calmly, and the message can be written meanwhile.
   */
  | { kind: "refused"; reason: string; wait?: true };

export type IntentKind = Intent["kind"];

/** Why nothing goes to an environment that is still connecting, and what to do. */
export function connectingReason(label: string): string {
  return `${label} is still connecting, so its agents' state is not confirmed yet. Send again once it shows online.`;
}

function offlineReason(env: EnvironmentView): string | null {
  const { connection } = env;
  switch (connection.phase) {
    case "online":
      return null;
    case "unauthorized":
      return `${env.label} no longer accepts this pairing. Pair it again.`;
    case "incompatible":
      return `${env.label} cannot be used: ${connection.error}`;
    case "connecting":
      return connectingReason(env.label);
    default:
      return `${env.label} is offline.`;
  }
}

/** What the message will do while the turn runs, as this harness was seen to do it (shared/t3/protocol1/harnesses.ts). */
function runningNote(agent: AgentView, mode: RunningMessageMode): string | null {
  // A finishing turn takes no steer: a message starts the next turn.
  if (agent.status === "waiting") return "The turn is finishing: T3 starts a new turn with it after this one.";
  // What a harness does is the driver's behaviour, whatever the instance is called.
  const name = driverName(agent.providerDriver ?? agent.providerInstanceId);
  switch (agent.capabilities.runningMessage) {
    case "interrupts-reply":
      return `${name} stops the reply it is writing and continues this turn with your message.`;
    case "after-reply":
      return `${name} reads it when its current reply ends, in this same turn.`;
    case "next-turn":
      return `${name} finishes this turn first; T3 then starts a new turn with your message.`;
    case "unobserved":
      return `Not yet observed for ${name}: T3 hands it over while this turn runs, and the fleet says afterwards whether it joined this turn or started a new one.`;
    default:
      // Protocol 2: the user chooses, and T3 reports what became of the message.
      return mode === "queue" ? "T3 starts a new turn with it after the running one." : null;
  }
}

/** The composer's headline for an intent. */
export function intentHeadline(intent: Intent): string {
  switch (intent.kind) {
    case "refused":
      return intent.wait ? intent.reason : `Cannot send: ${intent.reason}`;
    case "new-turn":
      return "Start a new turn";
    case "queue":
      return intent.unobserved ? "Send while the turn runs" : "Start a new turn after the running one";
    case "steer":
      return "Steer the running turn";
  }
}

/**
 * What a message to this agent would do now. `preferred` is the user's choice between steering
 * and queueing where the agent offers both; otherwise the agent's default applies.
 */
export function messageIntent(agent: AgentView | undefined, env: EnvironmentView | undefined, preferred?: RunningMessageMode): Intent {
  if (!env) return { kind: "refused", reason: "This environment is no longer paired." };
  const offline = offlineReason(env);
  if (offline) return { kind: "refused", reason: offline };
  if (env.readOnly) return { kind: "refused", reason: `The pairing with ${env.label} is read-only (no orchestration:operate scope).` };
  if (!agent) return { kind: "refused", reason: "This agent is no longer on its environment." };
  switch (agent.status) {
    case "needs-approval":
      return { kind: "refused", reason: "Answer the approval above first; your message can be sent after.", wait: true };
    case "needs-input":
      return { kind: "refused", reason: "Answer the question above first; your message can be sent after.", wait: true };
    case "needs-auth":
      return { kind: "refused", reason: `The provider's login on ${env.label} must be refreshed first.` };
    case "deleted":
      return { kind: "refused", reason: "This thread was deleted." };
    case "starting":
      return { kind: "refused", reason: "The turn is starting: a message now can start a second turn. Send it once the agent runs.", wait: true };
    case "stuck":
      return {
        kind: "new-turn",
        note: "The session has been starting for a long time and may be stuck. Sending anyway can start a second turn that never ends; stopping the session is the safer way out.",
        insteadOffer: "stop",
      };
    case "unknown":
      return { kind: "refused", reason: "The agent's state is not confirmed." };
    case "running":
    case "queued":
    case "waiting": {
      const runId = agent.activeRunId;
      if (!runId) {
        if (agent.status === "waiting") return { kind: "new-turn", note: "The last answer is final; background work is still finishing." };
        return { kind: "refused", reason: "The agent's turn is changing; send it in a moment.", wait: true };
      }
      const choices = agent.capabilities.whileRunning;
      const mode = preferred && choices.includes(preferred) ? preferred : choices[0];
      if (!mode) return { kind: "refused", reason: "T3 takes no message while this agent runs. Interrupt it first." };
      const note = runningNote(agent, mode);
      if (mode === "steer") return { kind: "steer", runId, note, choices };
      return agent.capabilities.runningMessage === "unobserved"
        ? { kind: "queue", runId, note, choices, unobserved: true }
        : { kind: "queue", runId, note, choices };
    }
    default:
      if (agent.lifecycle === "archived") return { kind: "refused", reason: "This thread is archived. Unarchive it in T3 to message it." };
      return { kind: "new-turn", note: agent.status === "failed" ? "The failed turn stays; this starts a new one." : null };
  }
}

export type DeliveryKind = "message" | "approval" | "input" | "interrupt" | "stop" | "cancel-queued";

export type DeliveryState =
  /** Dispatched, no answer yet. */
  | "sending"
  /** The server accepted the command ({sequence}). */
  | "accepted"
  /** Observed in the thread: the message (with the turn it joined or started) or the effect. */
  | "delivered"
  /** Assistant output after the message. */
  | "answered"
  /** The server said no; never shown as delivered. */
  | "refused"
  /** The connection dropped before an answer: reconciled on reconnect with the same commandId. */
  | "uncertain"
  /**
   * Kept by the fleet, not sent: a message held back when its turn was interrupted (its queued run
   * in T3 was cancelled). Sent with this commandId when the user releases it; never dropped.
   */
  | "held"
  /** A held message the user discarded: never sent. */
  | "discarded";

export interface Delivery {
  /** The client commandId, generated once per send. */
  commandId: string;
  agentKey: string;
  kind: DeliveryKind;
  state: DeliveryState;
  /** A message's text; for `cancel-queued`, the text of the message it withdraws. */
  text: string | null;
  /** A message's id in the thread; for `cancel-queued`, the id of the message it withdraws. */
  messageId: string | null;
  /**
   * A held message (and the send it becomes when released): the id of the queued message it was
   * held from, so the fleet shows one receipt per message (shared/fleet/receipts.ts).
   */
  heldFrom?: string;
  requestId: string | null;
  intent: IntentKind | null;
  /**
   * For messages: what was observed — the turn it joined (steered) or started, the queue it waits
   * in (position 1 is next), or its queued turn cancelled before it started.
   */
  observed: { outcome: "steered" | "new-turn" | "queued" | "cancelled"; turnId: string; queuePosition?: number | null } | null;
  reason: string | null;
  /** A refusal's words as T3 gave them, where `reason` says it in the fleet's (an agent that left: electron/fleet/departures.ts). */
  serverWords?: string;
  /** Sent against the fleet's own advice (a session stuck starting): what the user accepted. */
  warning?: string;
  /**
   * A message T3 Fleet was sending when it restarted (electron/fleet/delivery-journal.ts) and that
   * the agent's thread in T3 does not show: "Send again" is offered, once, and sends it with the
   * same commandId; it is never sent again on its own.
   */
  sendAgain?: boolean;
  createdAt: string;
  updatedAt: string;
}

/** Nothing more will happen to this send: refused, answered, discarded, or (for non-messages) delivered. */
export function isSettled(delivery: Pick<Delivery, "state" | "kind">): boolean {
  return (
    delivery.state === "answered" ||
    delivery.state === "refused" ||
    delivery.state === "discarded" ||
    (delivery.state === "delivered" && delivery.kind !== "message")
  );
}
