// Wire-shaped entities of a simulated protocol-1 server (docs/t3-protocols.md, "Protocol 1"): the
// generation and release quirks it mimics, and the read model's threads, sessions, turns, messages,
// activities, projects and events as the real servers send them (sim/protocol1/conformance.test.ts).
/** Which generation of T3 a simulated server mimics (fixtures t3-0.0.24 and t3-0.0.33). */
export type Generation = "fork" | "upstream";

/** Behaviours that differ between T3 releases of one generation, as the real servers showed them. */
export interface ServerQuirks {
  /**
   * Real 0.0.42: an interrupt that names no turn leaves the turn to end `completed` with its session;
   * one naming the turn marks it `interrupted` (the projection in 0.0.42's executable).
   */
  interruptEndsCompleted: boolean;
  /**
   * An archived thread reads as not found, like a deleted one, on the thread route and stream;
   * only the full snapshot (`/api/orchestration/snapshot`) tells them apart (real 0.0.42).
   */
  archivedThreadsUnreadable: boolean;
}

function versionAtLeast(version: string, minimum: string): boolean {
  const parts = (v: string) =>
    v
      .split(/[.-]/)
      .slice(0, 3)
      .map((n) => Number.parseInt(n, 10) || 0);
  const [a, b] = [parts(version), parts(minimum)];
  for (let i = 0; i < 3; i++) if (a[i]! !== b[i]!) return a[i]! > b[i]!;
  return true;
}

/** What a simulated server of this generation and version does where real releases differ. */
export function quirksOf(generation: Generation, serverVersion: string): ServerQuirks {
  const is042 = generation === "upstream" && versionAtLeast(serverVersion, "0.0.42");
  return { interruptEndsCompleted: is042, archivedThreadsUnreadable: is042 };
}

export interface WireModelSelection {
  instanceId: string;
  model: string;
  options?: { id: string; value: string | boolean }[];
}

export interface WireSession {
  threadId: string;
  status: "idle" | "starting" | "running" | "ready" | "interrupted" | "stopped" | "error";
  providerName: string;
  providerInstanceId: string;
  runtimeMode: string;
  activeTurnId: string | null;
  lastError: string | null;
  updatedAt: string;
}

export interface WireLatestTurn {
  turnId: string;
  state: "running" | "interrupted" | "completed" | "error";
  requestedAt: string;
  startedAt: string | null;
  completedAt: string | null;
  assistantMessageId: string | null;
}

export interface WireMessage {
  id: string;
  role: "user" | "assistant" | "system";
  text: string;
  attachments?: unknown[];
  turnId: string | null;
  streaming: boolean;
  createdAt: string;
  updatedAt: string;
}

/** One turn's checkpoint as a thread and `thread.turn-diff-completed` carry it. */
export interface WireCheckpoint {
  turnId: string;
  checkpointTurnCount: number;
  checkpointRef: string;
  status: "ready" | "missing" | "error";
  files: { path: string; kind: string; additions: number; deletions: number }[];
  assistantMessageId: string | null;
  completedAt: string;
}

export interface WireActivity {
  id: string;
  tone: "info" | "tool" | "approval" | "error";
  kind: string;
  summary: string;
  payload: Record<string, unknown>;
  turnId: string | null;
  createdAt: string;
}

export interface WireProject {
  id: string;
  title: string;
  workspaceRoot: string;
  repositoryIdentity: null;
  defaultModelSelection: WireModelSelection | null;
  scripts: unknown[];
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

/** A thread as the engine holds it: the wire fields plus derived pending-request bookkeeping. */
export interface ThreadState {
  id: string;
  projectId: string;
  title: string;
  modelSelection: WireModelSelection;
  runtimeMode: string;
  interactionMode: string;
  branch: string | null;
  worktreePath: string | null;
  latestTurn: WireLatestTurn | null;
  createdAt: string;
  updatedAt: string;
  archivedAt: string | null;
  deletedAt: string | null;
  messages: WireMessage[];
  activities: WireActivity[];
  session: WireSession | null;
  pendingApprovals: Set<string>;
  pendingUserInputs: Set<string>;
  latestUserMessageAt: string | null;
  /** Upstream's thread snooze (thread.snooze); absent until the thread was first snoozed. */
  snoozedUntil?: string | null;
  snoozedAt?: string | null;
  /** Checkpoints per turn (thread.turn-diff-completed), once the workspace is a git repository (sim/protocol1/turn-changes.ts). */
  checkpoints?: WireCheckpoint[];
  /** Each checkpointed turn's diff, by turn count, for getTurnDiff / getFullThreadDiff. */
  diffs?: Map<number, string>;
  /** Turns started so far: the next turn's count. */
  turnCount?: number;
}

export interface WireEvent {
  sequence: number;
  eventId: string;
  aggregateKind: "project" | "thread";
  aggregateId: string;
  occurredAt: string;
  commandId: string | null;
  causationEventId: string | null;
  correlationId: string | null;
  metadata: Record<string, unknown>;
  type: string;
  payload: Record<string, unknown>;
}
