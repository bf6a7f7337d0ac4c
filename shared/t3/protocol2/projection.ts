// Applying protocol-2 thread events to a projection, and reading what a fleet needs from it
// (docs/t3-protocols.md, "Protocol 2"). Payloads are full entities, so every event is an upsert by
// id; the assistant text of a turn item is cumulative, so the newest item replaces the older one.
import type { DomainEvent, Run, RuntimeRequest, ShellDeltaV2, ShellSnapshotV2, ThreadProjection, TurnItem, UserInputQuestion } from "./schemas";
import { APPROVAL_DECISIONS, APPROVAL_REQUEST_KINDS, type ApprovalDecision, type RuntimeRequestKind } from "./enums";
import type { ShellRow } from "./shell-row";

function upsert<T extends { id: string }>(list: readonly T[], entity: T): T[] {
  const index = list.findIndex((entry) => entry.id === entity.id);
  if (index === -1) return [...list, entity];
  const next = list.slice();
  next[index] = entity;
  return next;
}

/** The projection after one event; events the fleet does not track leave it unchanged. */
export function applyThreadEvent(projection: ThreadProjection, event: DomainEvent): ThreadProjection {
  switch (event.type) {
    case "run.created":
    case "run.updated":
      return { ...projection, runs: upsert(projection.runs, event.payload) };
    case "turn-item.updated":
      return { ...projection, turnItems: upsert(projection.turnItems, event.payload) };
    case "runtime-request.updated":
      return { ...projection, runtimeRequests: upsert(projection.runtimeRequests, event.payload) };
    case "provider-session.attached":
    case "provider-session.updated":
      return { ...projection, providerSessions: upsert(projection.providerSessions, event.payload) };
    case "provider-turn.updated":
      return { ...projection, providerTurns: upsert(projection.providerTurns, event.payload) };
    case "subagent.updated":
      return { ...projection, subagents: upsert(projection.subagents, event.payload) };
    case "checkpoint.captured":
      // When a queued run starts, T3's V2 engine re-captures the scope's earlier checkpoints with no
      // run (../shared/fixtures/t3-v2dev/07-queue.json): each keeps the run it was captured for.
      if (event.payload.runId === null && projection.checkpoints.some((checkpoint) => checkpoint.id === event.payload.id && checkpoint.runId !== null))
        return projection;
      return { ...projection, checkpoints: upsert(projection.checkpoints, event.payload) };
    case "message.updated":
      return { ...projection, messages: upsert(projection.messages, event.payload) };
    case "other":
      return projection;
    default:
      return { ...projection, thread: event.payload };
  }
}

// ---------------------------------------------------------------- shell

export interface ShellState {
  sequence: number;
  /**
   * The active threads' rows by id. Archived ones are not agents of the fleet (T3's own list and
   * protocol 1's shell leave them out), so none is kept: a month of archive would be rows held all day.
   */
  threads: Map<string, ShellRow>;
  projects: Map<string, ShellSnapshotV2["projects"][number]>;
}

export function shellFromSnapshot(snapshot: ShellSnapshotV2): ShellState {
  const threads = new Map<string, ShellRow>();
  for (const row of snapshot.threads) threads.set(row.id, row);
  return { sequence: snapshot.snapshotSequence, threads, projects: new Map(snapshot.projects.map((project) => [project.id, project])) };
}

/**
 * Whether a shell snapshot item only refreshes metadata. T3 marks its enrichment refreshes (sent
 * mid-stream, and alone at the start of a resume within its replay window) with
 * `resolvedRepositoryIdentityRoots`; they carry `threads: []` and never change which threads exist.
 * An unmarked snapshot is authoritative, except one that would drop every row without the cursor
 * having moved: no event removed them, so it cannot be the complete shell either.
 */
export function isMetadataOnlySnapshot(
  state: ShellState | undefined,
  item: { snapshot: ShellSnapshotV2; resolvedRepositoryIdentityRoots?: string[] | undefined },
): boolean {
  if (item.resolvedRepositoryIdentityRoots !== undefined) return true;
  const { snapshot } = item;
  return (
    state !== undefined &&
    state.threads.size > 0 &&
    snapshot.threads.length === 0 &&
    snapshot.archivedThreads.length === 0 &&
    snapshot.snapshotSequence <= state.sequence
  );
}

/** Takes the projects of a metadata-only snapshot; returns the ids of those that changed. Rows and cursor stay. */
export function applyShellMetadata(state: ShellState, snapshot: ShellSnapshotV2): string[] {
  const changed: string[] = [];
  for (const project of snapshot.projects) {
    const before = state.projects.get(project.id);
    state.projects.set(project.id, project);
    if (before?.title !== project.title) changed.push(project.id);
  }
  return changed;
}

/** Applies one shell change in place: a thread updated into the archive leaves. An unknown location is treated as active (the safer view). */
export function applyShellDelta(state: ShellState, delta: ShellDeltaV2): void {
  state.sequence = Math.max(state.sequence, delta.sequence);
  switch (delta.kind) {
    case "thread.updated":
      if (delta.location === "archive") state.threads.delete(delta.thread.id);
      else state.threads.set(delta.thread.id, delta.thread);
      return;
    case "thread.removed":
      state.threads.delete(delta.threadId);
      return;
    case "project.updated":
      state.projects.set(delta.project.id, delta.project);
      return;
    case "project.removed":
      state.projects.delete(delta.projectId);
      return;
  }
}

// ---------------------------------------------------------------- status

/** What a V2 shell row says about its agent, in protocol-2 words (the adapter maps them to neutral facts). */
export type V2AgentState =
  | { kind: "blocked"; on: "approval" | "question" | "auth"; requestId: string; since: string }
  | { kind: "working"; phase: "preparing" | "starting" | "running" | "waiting" }
  | { kind: "queued" }
  | { kind: "failed"; error: string | null }
  | { kind: "stopped"; how: "interrupted" | "cancelled" | "rolled_back" }
  | { kind: "idle"; completed: boolean };

export function requestBlocksOn(kind: RuntimeRequestKind): "approval" | "question" | "auth" {
  if (kind === "user_input") return "question";
  if (kind === "auth_refresh") return "auth";
  // Unknown kinds from newer servers still block the agent: show them as approvals.
  return "approval";
}

/** The rules of a V2 shell row: a pending runtime request wins over the run status. */
export function agentStateOfRow(row: Pick<ShellRow, "pendingRuntimeRequest" | "runStatus" | "runNote">): V2AgentState {
  if (row.pendingRuntimeRequest) {
    return {
      kind: "blocked",
      on: requestBlocksOn(row.pendingRuntimeRequest.kind),
      requestId: row.pendingRuntimeRequest.id,
      since: row.pendingRuntimeRequest.createdAt,
    };
  }
  const status = row.runStatus;
  switch (status) {
    case "preparing":
    case "starting":
    case "running":
    case "waiting":
      return { kind: "working", phase: status };
    case "queued":
      return { kind: "queued" };
    case "failed":
      return { kind: "failed", error: row.runNote };
    case "interrupted":
    case "cancelled":
    case "rolled_back":
      return { kind: "stopped", how: status };
    case "completed":
      return { kind: "idle", completed: true };
    default:
      return { kind: "idle", completed: false };
  }
}

// ---------------------------------------------------------------- runs and messages

const ACTIVE: ReadonlySet<string> = new Set(["preparing", "starting", "running", "waiting"]);

export function activeRun(projection: ThreadProjection): Run | undefined {
  return projection.runs.filter((run) => ACTIVE.has(run.status)).sort((a, b) => b.ordinal - a.ordinal)[0];
}

/**
 * Whether the active run takes a steer now: T3 steers only a `running` run whose active attempt
 * has a running provider turn (the run is `running` a moment before its provider turn starts).
 * A projection that does not name the attempt (older servers) is judged by the run alone.
 */
export function runTakesSteer(projection: ThreadProjection, run: Run): boolean {
  if (run.status !== "running") return false;
  if (!run.activeAttemptId) return true;
  return projection.providerTurns.some((turn) => turn.runAttemptId === run.activeAttemptId && turn.status === "running");
}

export function queuedRuns(projection: ThreadProjection): Run[] {
  return projection.runs.filter((run) => run.status === "queued").sort((a, b) => (a.queuePosition ?? a.ordinal) - (b.queuePosition ?? b.ordinal));
}

/** What became of a message the fleet sent: the run it started or queued, or the run it steered. */
export type MessageOutcome = { kind: "run"; run: Run } | { kind: "joined"; runId: string } | { kind: "unseen" };

export function messageOutcome(projection: ThreadProjection, messageId: string): MessageOutcome {
  const run = projection.runs.find((entry) => entry.userMessageId === messageId);
  if (run) return { kind: "run", run };
  const steered = projection.turnItems.find((item) => item.type === "user_message" && item.messageId === messageId);
  if (steered?.runId) return { kind: "joined", runId: steered.runId };
  return { kind: "unseen" };
}

/** The latest assistant text of a run (cumulative: the newest item holds all of it). */
export function assistantText(projection: ThreadProjection, runId?: string): string | undefined {
  const items = projection.turnItems.filter((item) => item.type === "assistant_message" && (runId === undefined || item.runId === runId));
  const last = items.sort((a, b) => a.ordinal - b.ordinal).at(-1);
  return last?.type === "assistant_message" ? last.text : undefined;
}

/** The failure of a run: the failed `error` item on its root node, else any failed error item of the run. */
export function runFailure(projection: ThreadProjection, run: Run): { class: string; message: string } | undefined {
  const errors = projection.turnItems.filter(
    (item): item is Extract<TurnItem, { type: "error" }> => item.type === "error" && item.runId === run.id && item.status === "failed",
  );
  const root = errors.find((item) => item.nodeId === run.rootNodeId) ?? errors.at(-1);
  return root ? { class: root.failure.class, message: root.failure.message } : undefined;
}

// ---------------------------------------------------------------- runtime requests as cards

export type PendingRequestCard =
  | {
      kind: "approval";
      requestId: string;
      requestKind: string;
      prompt: string | null;
      decisions: { decision: ApprovalDecision; label: string }[];
      createdAt: string;
    }
  | { kind: "question"; requestId: string; questions: UserInputQuestion[]; answerByMessage: boolean; createdAt: string }
  | { kind: "auth"; requestId: string; createdAt: string };

const DEFAULT_LABELS: Record<ApprovalDecision, string> = {
  accept: "Allow once",
  acceptForSession: "Allow for this session",
  acceptAlways: "Always allow",
  decline: "Deny",
  cancel: "Deny and stop",
};
/** What a request that lists no options offers: everything protocol 2 defines except "always". */
const DEFAULT_DECISIONS: ApprovalDecision[] = ["accept", "acceptForSession", "decline", "cancel"];

/**
 * Pending runtime requests as cards. The request entity is authoritative for "pending"; its turn
 * item (approval_request / user_input_request) adds the prompt, the offered decisions and the
 * questions. A request seen only as an item (no request entity yet) still shows.
 */
export function pendingRequestCards(projection: ThreadProjection): PendingRequestCard[] {
  const requests = new Map<string, Pick<RuntimeRequest, "id" | "kind" | "createdAt">>();
  const settled = new Set<string>();
  for (const request of projection.runtimeRequests) {
    if (request.status === "pending") requests.set(request.id, request);
    else settled.add(request.id);
  }
  for (const item of projection.turnItems) {
    if (
      (item.type === "approval_request" || item.type === "user_input_request") &&
      item.status === "pending" &&
      !settled.has(item.requestId) &&
      !requests.has(item.requestId)
    ) {
      requests.set(item.requestId, {
        id: item.requestId,
        kind: item.type === "user_input_request" ? "user_input" : item.requestKind,
        createdAt: item.startedAt ?? item.updatedAt,
      });
    }
  }
  const cards: PendingRequestCard[] = [];
  for (const request of requests.values()) {
    const item = projection.turnItems.find(
      (entry) => (entry.type === "approval_request" || entry.type === "user_input_request") && entry.requestId === request.id,
    );
    const on = requestBlocksOn(request.kind);
    if (on === "auth") {
      cards.push({ kind: "auth", requestId: request.id, createdAt: request.createdAt });
    } else if (on === "question") {
      cards.push({
        kind: "question",
        requestId: request.id,
        questions: item?.type === "user_input_request" ? item.questions : [],
        answerByMessage: item?.type === "user_input_request" && item.responseMode === "message",
        createdAt: request.createdAt,
      });
    } else {
      const offered = item?.type === "approval_request" ? item.options : undefined;
      const decisions = offered
        ? offered.flatMap((option) => (option.decision === "unknown" ? [] : [{ decision: option.decision, label: option.label }]))
        : DEFAULT_DECISIONS.map((decision) => ({ decision, label: DEFAULT_LABELS[decision] }));
      cards.push({
        kind: "approval",
        requestId: request.id,
        requestKind:
          item?.type === "approval_request"
            ? item.requestKind
            : (APPROVAL_REQUEST_KINDS as readonly string[]).includes(request.kind)
              ? request.kind
              : "unknown",
        prompt: item?.type === "approval_request" ? (item.prompt ?? item.title ?? null) : null,
        decisions,
        createdAt: request.createdAt,
      });
    }
  }
  return cards.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

export function isApprovalDecision(value: string): value is ApprovalDecision {
  return (APPROVAL_DECISIONS as readonly string[]).includes(value);
}

/**
 * Checks answers against the questions before sending: every required question answered, one
 * answer for a single-select question, custom text only where allowed. Returns the problem, if any.
 */
export function answersProblem(questions: readonly UserInputQuestion[], answers: Record<string, string | string[] | null>): string | undefined {
  for (const question of questions) {
    const answer = answers[question.id];
    const values = answer === null || answer === undefined ? [] : Array.isArray(answer) ? answer : [answer];
    const filled = values.filter((value) => value.trim() !== "");
    if (question.required && filled.length === 0) return `"${question.header}" needs an answer.`;
    if (!question.multiSelect && filled.length > 1) return `"${question.header}" takes one answer.`;
    if (!question.allowCustomAnswer && question.options.length > 0) {
      const allowed = new Set(question.options.map((option) => option.value ?? option.label));
      const custom = filled.find((value) => !allowed.has(value));
      if (custom !== undefined) return `"${question.header}" does not take a free-text answer.`;
    }
  }
  return undefined;
}
