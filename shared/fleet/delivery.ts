// Delivery rules (design §4), pure: what a message would do right now, and the states a send goes through.
import type { AgentView, EnvironmentView } from "./types";

export type Intent =
  | { kind: "steer"; turnId: string; note: string | null }
  | { kind: "new-turn"; note: string | null }
  | { kind: "refused"; reason: string };

/** T3 folds a message into the active turn only where the provider supports it (design §4, §14). */
const NON_STEERING_DRIVERS = new Set(["grok"]);

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
      return `${env.label} is reconnecting; its state is not confirmed yet.`;
    default:
      return `${env.label} is offline.`;
  }
}

export function messageIntent(agent: AgentView | undefined, env: EnvironmentView | undefined): Intent {
  if (!env) return { kind: "refused", reason: "This environment is no longer paired." };
  const offline = offlineReason(env);
  if (offline) return { kind: "refused", reason: offline };
  if (env.readOnly) return { kind: "refused", reason: `The pairing with ${env.label} is read-only (no orchestration:operate scope).` };
  if (!agent) return { kind: "refused", reason: "This agent is no longer on its environment." };
  switch (agent.status) {
    case "needs-approval":
      return { kind: "refused", reason: "Answer the pending approval first." };
    case "needs-input":
      return { kind: "refused", reason: "Answer the pending question first." };
    case "starting":
      return { kind: "refused", reason: "The session is starting: a message now can start a second turn that never ends. Send it once the agent runs." };
    case "running": {
      if (!agent.activeTurnId) return { kind: "refused", reason: "The agent's turn is changing; try again in a moment." };
      const driver = agent.providerDriver ?? agent.providerInstanceId;
      if (NON_STEERING_DRIVERS.has(driver)) {
        return { kind: "steer", turnId: agent.activeTurnId, note: `${driver} does not fold messages into a running turn: T3 will start a new turn after this one.` };
      }
      const note = env.generation === "fork" ? "This T3 version may start a second turn instead of steering; the result will show what happened." : null;
      return { kind: "steer", turnId: agent.activeTurnId, note };
    }
    case "unknown":
      return { kind: "refused", reason: "The agent's state is not confirmed." };
    default:
      return { kind: "new-turn", note: agent.status === "failed" ? "The failed turn stays; this starts a new one." : null };
  }
}

export type DeliveryKind = "message" | "approval" | "input" | "interrupt" | "stop";

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
  | "uncertain";

export interface Delivery {
  /** The client commandId, generated once per send (design §4). */
  commandId: string;
  agentKey: string;
  kind: DeliveryKind;
  state: DeliveryState;
  text: string | null;
  messageId: string | null;
  requestId: string | null;
  intent: Intent["kind"] | null;
  /** For messages: what was observed — the turn joined (steered) or started. */
  observed: { outcome: "steered" | "new-turn"; turnId: string } | null;
  reason: string | null;
  createdAt: string;
  updatedAt: string;
}

/** Nothing more will happen to this send: refused, answered, or (for non-messages) delivered. */
export function isSettled(delivery: Pick<Delivery, "state" | "kind">): boolean {
  return delivery.state === "answered" || delivery.state === "refused" || (delivery.state === "delivered" && delivery.kind !== "message");
}
