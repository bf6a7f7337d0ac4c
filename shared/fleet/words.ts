import type { Delivery } from "./delivery";
import type { AgentView, ConnectionPhase, DisplayStatus, RollupStatus } from "./types";

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

/** Words for the ids servers name things by (an approval's kind, a subagent's origin or task type, a runtime mode): never shown raw. */
const ID_WORDS: Record<string, string> = {
  // Approval kinds (docs/t3-protocols.md, "Approval kinds").
  command: "command",
  "file-read": "file read",
  "file-change": "file change",
  "mcp-elicitation": "tool's question",
  permission: "permission",
  dynamic_tool_call: "tool call",
  // Protocol 2 subagents' origins: the provider's own (Claude's Task tool), or one T3 runs as a thread.
  provider_native: "the provider's own subagent",
  app_owned: "run by T3",
  // Protocol 1 task types.
  local_agent: "local subagent",
  // Runtime modes.
  "full-access": "full access",
  "approval-required": "asks before acting",
};

/** A server's id in words: a known one as people say it, another with its separators as spaces ("remote_agent" → "remote agent"). */
export function idWords(id: string): string {
  return ID_WORDS[id] ?? id.replace(/[_-]+/g, " ").trim();
}

/** Code marks of the agent's own Markdown ("Run `npm test`?") dropped, for a line that quotes it in plain text. */
export function plainText(text: string): string {
  return text.replace(/`+([^`]*)`+/g, "$1").replace(/`/g, "");
}

/** A span of time as people say it: "40 s", "12 min", "2 h 5 min", "3 days". */
export function durationWords(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 && hours < 10 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  return `${Math.round(hours / 24)} days`;
}

/**
 * Why a run is stalled, with for how long: the provider's words where it gave any, else how long
 * nothing happened (since its last activity, up to now or, while its machine is away, to when it
 * was last confirmed).
 */
export function stalledWords(agent: Pick<AgentView, "reason" | "lastActivityAt" | "asOf" | "status">, now: number): string {
  if (agent.reason) return `stalled: ${agent.reason}`;
  const since = Date.parse(agent.lastActivityAt);
  const until = agent.status === "unknown" && agent.asOf ? Date.parse(agent.asOf) : now;
  return Number.isFinite(since) && Number.isFinite(until) ? `stalled: no activity for ${durationWords(until - since)}` : "stalled: no activity lately";
}

/**
 * A machine that is not online, named, as of its last confirmation: "build-box offline as of
 * 14:05". Offline is never a bare "unknown": the machine and the time say what the shown state is
 * worth. A machine never confirmed since the fleet started says since when it is not reached.
 */
export function offlineWords(machine: string, connection: ConnectionPhase | undefined, time: (ms: number) => string): string {
  if (!connection || connection.phase === "online") return `${machine} online`;
  const confirmed = connection.lastConfirmedAt ? Date.parse(connection.lastConfirmedAt) : NaN;
  if (Number.isFinite(confirmed)) return `${machine} offline as of ${time(confirmed)}`;
  const since = Date.parse(connection.since);
  return Number.isFinite(since) ? `${machine} offline, not reached since ${time(since)}` : `${machine} offline, not reached yet`;
}

/**
 * An agent whose machine (or the fleet's service) is away: what it was doing and as of when, with
 * what is away named (`away`: "build-box offline", "T3 Fleet's service not reachable"):
 * "was running · build-box offline as of 14:05".
 */
export function agentAsOfWords(agent: Pick<AgentView, "lastKnownStatus" | "stalled" | "heldUp" | "asOf">, away: string, time: (ms: number) => string): string {
  const asOf = agent.asOf ? Date.parse(agent.asOf) : NaN;
  return `was ${lastKnownWords(agent)} · ${away}${Number.isFinite(asOf) ? ` as of ${time(asOf)}` : ", not reached yet"}`;
}
