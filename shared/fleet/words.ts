import type { Delivery } from "./delivery";
import type { AgentView, DisplayStatus, RollupStatus } from "./types";

/** Status words for people, shared by every shell (window, tray, notifications). */
export const STATUS_WORDS: Record<DisplayStatus, string> = {
  "needs-approval": "needs approval",
  "needs-input": "needs input",
  "needs-auth": "needs provider login",
  failed: "failed",
  stuck: "stuck starting",
  starting: "starting",
  queued: "queued",
  running: "running",
  waiting: "finishing",
  interrupted: "interrupted",
  idle: "idle",
  ended: "ended",
  deleted: "deleted",
  unknown: "unknown",
};

/** Roll-up words, in severity order: stalled and held-up runs are counted as themselves. */
export const ROLLUP_WORDS: Record<RollupStatus, string> = {
  "needs-approval": STATUS_WORDS["needs-approval"],
  "needs-input": STATUS_WORDS["needs-input"],
  "needs-auth": STATUS_WORDS["needs-auth"],
  failed: STATUS_WORDS.failed,
  stuck: STATUS_WORDS.stuck,
  stalled: "stalled",
  "held-up": "held up",
  starting: STATUS_WORDS.starting,
  queued: STATUS_WORDS.queued,
  running: STATUS_WORDS.running,
  waiting: STATUS_WORDS.waiting,
  interrupted: STATUS_WORDS.interrupted,
  idle: STATUS_WORDS.idle,
  ended: STATUS_WORDS.ended,
  deleted: STATUS_WORDS.deleted,
  unknown: STATUS_WORDS.unknown,
};

/** What an agent was doing when its machine was last confirmed: "held up", not "running", for a held-up run. */
export function lastKnownWords(agent: Pick<AgentView, "lastKnownStatus" | "stalled" | "heldUp">): string {
  if (agent.lastKnownStatus === "running" && agent.stalled) return agent.heldUp ? "held up" : "stalled";
  return STATUS_WORDS[agent.lastKnownStatus];
}

/**
 * What was observed of a sent message, in words that claim no more than that. A steer is only ever
 * seen as T3 accepting it into the running turn: whether the agent used it does not show on the
 * wire (a provider that cannot steer drops it silently), so it is never "joined" or "answered".
 */
export function deliveryOutcomeWords(delivery: Pick<Delivery, "state" | "observed">): string | null {
  const observed = delivery.observed;
  if (!observed) return null;
  switch (observed.outcome) {
    case "steered":
      return delivery.state === "answered"
        ? "T3 accepted it as a steer; that turn has ended (T3 does not show whether the agent used it)"
        : "T3 accepted it as a steer of the running turn";
    case "new-turn":
      return "started a new turn";
    case "queued":
      return `queued after the running turn${observed.queuePosition ? ` (position ${observed.queuePosition})` : ""}`;
    case "cancelled":
      return "withdrawn from the queue";
    default:
      return String(observed.outcome);
  }
}

/** The state word of a delivery; a steer's turn ending is not an answer to it. */
export function deliveryStateWords(delivery: Pick<Delivery, "state" | "observed">, labels: Record<Delivery["state"], string>): string {
  return delivery.state === "answered" && delivery.observed?.outcome === "steered" ? labels.delivered : labels[delivery.state];
}
