// The fleet's view types: what the fleet service computes and every UI renders (docs/architecture.md, "The fleet model and its rules").
// Plain data only: they cross the bridge as JSON.

import type { AgentCapabilities, AgentLifecycle, ParentRelationship, PendingRequest, SubagentFacts, TurnChanges, UsageFacts } from "./facts";

/**
 * Statuses in precedence order (rules in shared/fleet/status.ts): the first that applies
 * wins. Blocked on the user (approval, question, provider login), failed, stuck starting, then the
 * run's phase, then the thread's lifecycle.
 */
export const AGENT_STATUSES = [
  "needs-approval",
  "needs-input",
  "needs-auth",
  "failed",
  "stuck",
  "starting",
  "queued",
  "running",
  "waiting",
  "interrupted",
  "idle",
  "ended",
  "deleted",
] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

/** What a UI shows: an agent on an environment that is not online is "unknown", never idle or running. */
export type DisplayStatus = AgentStatus | "unknown";

/** Named phases of one environment's connection supervisor (docs/architecture.md, "The supervisor"). */
export type ConnectionPhase =
  /** First attempt, or re-checking after system wake: not yet trusted. */
  | { phase: "connecting"; since: string; lastConfirmedAt: string | null }
  | { phase: "online"; since: string }
  /** Reachable but failing (server error, undecodable stream): waiting to retry. */
  | { phase: "backoff"; since: string; lastConfirmedAt: string | null; nextAttemptAt: string; attempt: number; error: string }
  /** Unreachable (refused, reset, no Pong): retrying. */
  | { phase: "offline"; since: string; lastConfirmedAt: string | null; nextAttemptAt: string; attempt: number; error: string }
  /** The token was rejected or revoked: waits for re-pairing, no retries. */
  | { phase: "unauthorized"; since: string; lastConfirmedAt: string | null; error: string }
  /** Unsupported protocol, another server at this URL, or not T3: waits for the user. */
  | { phase: "incompatible"; since: string; lastConfirmedAt: string | null; error: string };

/** A stream item or frame from a server that did not decode and was skipped (the stream stayed trusted). */
export interface SkippedItem {
  /** The RPC method of the stream, e.g. "orchestration.subscribeShell". */
  method: string;
  /** Dotted path of the first bad field, "" for the root. */
  path: string;
  message: string;
  /** The item's sequence, when it could be read. */
  sequence: number | null;
}

/** What an environment's server sent that the fleet had to skip, shown on the environment's view. */
export interface SkippedItemsReport {
  count: number;
  last: SkippedItem & { at: string };
}

/** What the fleet knows about an environment apart from its connection. */
export interface EnvironmentMeta {
  environmentId: string;
  label: string;
  baseUrl: string;
  serverVersion: string | null;
  /** The orchestration protocol it speaks, as announced on the latest connect; null or absent until known. */
  protocol?: number | null;
  generation: "fork" | "upstream";
  readOnly: boolean;
  muted: boolean;
  /** Undecodable items skipped since the fleet started, or absent when none. */
  skippedItems?: SkippedItemsReport;
}

export interface EnvironmentView extends EnvironmentMeta {
  connection: ConnectionPhase;
  /** Agents per roll-up status on this environment (stalled and held-up runs as themselves). */
  counts: Partial<Record<RollupStatus, number>>;
}

export type SubagentView = SubagentFacts;
export type { PendingRequest };

export interface AgentView {
  /** `${environmentId}/${threadId}`: an agent's identity in the fleet. */
  key: string;
  environmentId: string;
  threadId: string;
  /** The parent thread on the same environment (child-id convention, fork or subagent lineage). */
  parentThreadId: string | null;
  relationship: ParentRelationship | null;
  /** A child whose parent is not visible on its environment. */
  orphaned: boolean;
  title: string;
  projectId: string;
  projectTitle: string | null;
  providerInstanceId: string;
  providerDriver: string | null;
  model: string;
  effort: string | null;
  runtimeMode: string;
  status: DisplayStatus;
  /** The status last derived while the environment was online. */
  lastKnownStatus: AgentStatus;
  /** For "unknown": when the environment was last confirmed. */
  asOf: string | null;
  /** Running with no new event for the configured quiet time, or held up. */
  stalled: boolean;
  /** Running, but the provider says the run waits (e.g. for capacity): stalled, with the provider's words as the reason. */
  heldUp: boolean;
  /** Why it failed, what it waits for, or what its status means here (e.g. "Cancelled"). */
  reason: string | null;
  /** Archived and deleted threads stay visible with that status for the rest of the session. */
  lifecycle: AgentLifecycle;
  /** The run a steer, queue or interrupt refers to. */
  activeRunId: string | null;
  /** Queued: the position behind the active run (1 = next), when the server says. */
  queuePosition: number | null;
  /** Since when it has been starting (a turn asked for, a session starting): the stuck clock. */
  startingSince: string | null;
  capabilities: AgentCapabilities;
  pending: PendingRequest[];
  subagents: SubagentView[];
  updatedAt: string;
  /** Last time the fleet saw anything happen on this thread. */
  lastActivityAt: string;
  /** The user acknowledged this failure or stall: it no longer counts as needing them until it changes. */
  acknowledged: boolean;
  /** The project's workspace folder on its machine, when T3 reports it (the title is projectTitle). */
  workspaceRoot: string | null;
  /** Git branch and worktree of the thread, as T3 reports them. */
  branch: string | null;
  worktreePath: string | null;
  /** Snoozed in T3 (on the server, by any client) until this time; null or absent when not. */
  snoozedUntil?: string | null;
  /** A snooze T3 Fleet keeps where T3 does not hold it ("until it changes", or a time T3 refused or cannot hold); absent when none. */
  fleetSnooze?: FleetSnooze;
  /** Each turn's changed files as T3's checkpoints report them, oldest first; absent when none was reported (or the thread was never followed). */
  changes?: TurnChanges[];
  /** Token use and context fill as T3 last reported them; absent: not reported. */
  usage?: UsageFacts;
  /**
   * Its turn ended with changes the user has not marked reviewed, and the user asked for these in
   * the inbox (Settings): a need like any other (shared/fleet/needs.ts awaitsReview). Absent: not.
   */
  review?: true;
}

export interface FleetCounts {
  byStatus: Partial<Record<DisplayStatus, number>>;
  /** Agents that need the user: blocked, failed or stuck. */
  needsYou: number;
  /** Environments not online (offline, backoff, unauthorized, incompatible, connecting). */
  hostsDown: number;
  environments: number;
  agents: number;
}

export function agentKey(environmentId: string, threadId: string): string {
  return `${environmentId}/${threadId}`;
}

/** Statuses that need the user to act: answer, log the provider in again, look at a failure, or stop a stuck start. */
const NEEDS_USER = new Set<DisplayStatus>(["needs-approval", "needs-input", "needs-auth", "failed", "stuck"]);

export function needsUser(status: DisplayStatus): boolean {
  return NEEDS_USER.has(status);
}

/** A snooze kept by T3 Fleet itself (persisted by the service, the same in every window; shared/fleet/snooze.ts). */
export interface FleetSnooze {
  /** When it ends (ms since epoch); null: until what the agent needs changes. */
  until: number | null;
  /** What the agent needed when snoozed (needFingerprint in ./views.ts). */
  fingerprint: string;
  /** Why T3 did not take it, when it was asked to and did not. */
  note?: string | null;
}

/** Whether an agent needs the user now: its status does and the user has not acknowledged it. */
export function needsYouNow(agent: Pick<AgentView, "status" | "acknowledged">): boolean {
  return needsUser(agent.status) && !agent.acknowledged;
}

/**
 * What a roll-up (a machine's counts, a parent's children, a project's counts) says of an agent:
 * its status, except that a stalled run and a run the provider holds up count as themselves, not
 * as "running".
 */
export type RollupStatus = DisplayStatus | "stalled" | "held-up";

export function rollupStatus(agent: Pick<AgentView, "status" | "stalled" | "heldUp">): RollupStatus {
  if (agent.status !== "running" || !agent.stalled) return agent.status;
  return agent.heldUp ? "held-up" : "stalled";
}

/** Worst-first order for roll-ups: what needs the user outranks activity, activity outranks rest. */
const SEVERITY: Record<RollupStatus, number> = {
  "needs-approval": 0,
  "needs-input": 1,
  "needs-auth": 2,
  failed: 3,
  stuck: 4,
  stalled: 5,
  "held-up": 6,
  unknown: 7,
  starting: 8,
  queued: 9,
  running: 10,
  waiting: 11,
  interrupted: 12,
  idle: 13,
  ended: 14,
  deleted: 15,
};

export function worstOf<S extends RollupStatus>(statuses: Iterable<S>): S | null {
  let worst: S | null = null;
  for (const status of statuses) if (worst === null || SEVERITY[status] < SEVERITY[worst]) worst = status;
  return worst;
}
