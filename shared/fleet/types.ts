// The fleet's view types: what the fleet service computes and every UI renders (design §§2-3).
// Plain data only: they cross the bridge as JSON.

/** Statuses in precedence order (design §3): the first that applies wins. */
export const AGENT_STATUSES = ["needs-approval", "needs-input", "failed", "starting", "running", "idle", "ended"] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

/** What a UI shows: an agent on an environment that is not online is "unknown", never idle or running. */
export type DisplayStatus = AgentStatus | "unknown";

/** Named phases of one environment's connection supervisor (design §3). */
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

/** What the fleet knows about an environment apart from its connection. */
export interface EnvironmentMeta {
  environmentId: string;
  label: string;
  baseUrl: string;
  serverVersion: string | null;
  generation: "fork" | "upstream";
  readOnly: boolean;
  muted: boolean;
}

export interface EnvironmentView extends EnvironmentMeta {
  connection: ConnectionPhase;
  /** Agents per display status on this environment. */
  counts: Partial<Record<DisplayStatus, number>>;
}

export interface SubagentView {
  taskId: string;
  status: "running" | "completed" | "failed" | "stopped";
  detail: string | null;
  taskType: string | null;
  updatedAt: string;
}

export interface PendingRequest {
  requestId: string;
  kind: "approval" | "input";
  /** Command, file path or question text, as the provider reported it. */
  detail: string;
  requestKind: string | null;
  questions: { id: string; question: string; options: string[] }[];
  createdAt: string;
}

export interface AgentView {
  /** `${environmentId}/${threadId}`: an agent's identity in the fleet (design §2). */
  key: string;
  environmentId: string;
  threadId: string;
  /** Set for child threads `sub.<parent>.<suffix>`. */
  parentThreadId: string | null;
  /** A child whose parent is not visible on its environment. */
  orphaned: boolean;
  title: string;
  projectId: string;
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
  /** Running with no new event for the configured quiet time. */
  stalled: boolean;
  /** Why it failed or what it waits for. */
  reason: string | null;
  activeTurnId: string | null;
  pending: PendingRequest[];
  subagents: SubagentView[];
  updatedAt: string;
  /** Last time the fleet saw anything happen on this thread. */
  lastActivityAt: string;
}

export interface FleetCounts {
  byStatus: Partial<Record<DisplayStatus, number>>;
  /** Agents that need the user: approval, input or failed. */
  needsYou: number;
  /** Environments not online (offline, backoff, unauthorized, incompatible, connecting). */
  hostsDown: number;
  environments: number;
  agents: number;
}

export function agentKey(environmentId: string, threadId: string): string {
  return `${environmentId}/${threadId}`;
}

const CHILD_THREAD_ID = /^sub\.(.+)\.([^.]+)$/;

/** `sub.<parentThreadId>.<suffix>` → parent id (design §2); null for ordinary threads. */
export function parentThreadIdOf(threadId: string): string | null {
  return CHILD_THREAD_ID.exec(threadId)?.[1] ?? null;
}

export function needsUser(status: DisplayStatus): boolean {
  return status === "needs-approval" || status === "needs-input" || status === "failed";
}

/** Worst-first order for roll-ups: what needs the user outranks activity, activity outranks rest. */
const SEVERITY: Record<DisplayStatus, number> = {
  "needs-approval": 0,
  "needs-input": 1,
  failed: 2,
  unknown: 3,
  starting: 4,
  running: 5,
  idle: 6,
  ended: 7,
};

export function worstOf(statuses: Iterable<DisplayStatus>): DisplayStatus | null {
  let worst: DisplayStatus | null = null;
  for (const status of statuses) if (worst === null || SEVERITY[status] < SEVERITY[worst]) worst = status;
  return worst;
}
