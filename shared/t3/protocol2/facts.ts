// Protocol 2 wire → neutral facts (docs/t3-protocols.md, "Protocol 2 → neutral facts"). Pure: the
// adapter feeds it shell rows and thread projections; nothing here knows about sockets.
import { turnChangesOfProjection, usageOfProjection } from "./changes";
import type {
  AgentCapabilities,
  AgentFacts,
  ApprovalDecision,
  MessageOutcome,
  MessageQueueState,
  PendingRequest,
  RequestEnd,
  RunState,
  SubagentFacts,
  SubagentStatus,
  ThreadDetailFacts,
  TranscriptItem,
  TranscriptItemStatus,
} from "../../fleet/facts";
import {
  type PendingRequestCard,
  type ShellState,
  activeRun,
  agentStateOfRow,
  messageOutcome,
  pendingRequestCards,
  queuedRuns,
  requestBlocksOn,
  runFailure,
} from "./projection";
import type { Run, ThreadProjection, TurnItem } from "./schemas";
import { type Carried, addTokens, trimProjection } from "./retention";
import type { TranscriptBounds } from "../../fleet/transcript-tail";
import type { ShellRow } from "./shell-row";

/** `sub.<parent>.<suffix>`: kept for threads without lineage (imported from protocol 1 by an in-place upgrade). */
const CHILD_ID = /^sub\.(.+)\.[^.]+$/;

export interface ServerFeatures {
  settle: boolean;
  snooze: boolean;
  /** Per thread, whether its provider session steers an active run (learned from followed threads). */
  steers?: (threadId: string) => boolean | undefined;
  /** Per failed run, its reason from the thread's error item when read (see electron/fleet/t3/protocol2/failure-reasons.ts). */
  failureReason?: (threadId: string, runId: string | null) => string | null | undefined;
  /**
   * Per followed thread, what its stream shows of the active run, which may be ahead of the row;
   * "loading" while a follow has not shown it yet (no steer is offered until it has).
   */
  followedRun?: (threadId: string) => FollowedRunPhase | "loading" | undefined;
}

/** What a followed thread's stream says of its active run. */
export interface FollowedRunPhase {
  /** The active run the stream shows; null when it shows none. */
  runId: string | null;
  /** Running with a running provider turn: T3 takes a steer now. */
  takesSteer: boolean;
  /** `waiting`: T3 refuses both a steer and an interrupt. */
  finishing: boolean;
}

/**
 * Protocol 2 lets the user choose steer or queue. A provider session that says it cannot steer
 * (its `capabilities.turns.supportsActiveSteering`, seen once the thread was followed) leaves queue only.
 */
export function capabilitiesV2(
  features: ServerFeatures,
  threadId?: string,
  phase: { finishing: boolean; takesSteer: boolean } = { finishing: false, takesSteer: true },
): AgentCapabilities {
  const steers = threadId !== undefined ? features.steers?.(threadId) : undefined;
  const { finishing } = phase;
  // A run that is `waiting` (finishing) refuses both a steer and an interrupt; a queued message still starts after it.
  return sharedCapabilities(!(finishing || !phase.takesSteer || steers === false), !finishing, features.settle, features.snooze);
}

/** The few possible capability sets, each one frozen object shared by every row that has it. */
const CAPABILITIES = new Map<string, AgentCapabilities>();
const STEER_OR_QUEUE: AgentCapabilities["whileRunning"] = Object.freeze(["steer", "queue"]) as AgentCapabilities["whileRunning"];
const QUEUE_ONLY: AgentCapabilities["whileRunning"] = Object.freeze(["queue"]) as AgentCapabilities["whileRunning"];

function sharedCapabilities(steer: boolean, interrupt: boolean, settle: boolean, snooze: boolean): AgentCapabilities {
  const key = `${steer}:${interrupt}:${settle}:${snooze}`;
  let capabilities = CAPABILITIES.get(key);
  if (!capabilities) {
    capabilities = Object.freeze({
      whileRunning: steer ? STEER_OR_QUEUE : QUEUE_ONLY,
      interrupt,
      stop: false,
      cancelQueued: true,
      answer: true,
      settle,
      snooze,
    });
    CAPABILITIES.set(key, capabilities);
  }
  return capabilities;
}

/** Provider facts repeat across rows (a handful of providers, models and efforts): one frozen object each, bounded. */
const PROVIDERS = new Map<string, AgentFacts["provider"]>();
const PROVIDERS_LIMIT = 1_000;

function sharedProvider(instanceId: string, model: string, effort: string | null): AgentFacts["provider"] {
  const key = `${instanceId}\u0000${model}\u0000${effort ?? ""}\u0000${effort === null}`;
  let provider = PROVIDERS.get(key);
  if (!provider) {
    if (PROVIDERS.size >= PROVIDERS_LIMIT) PROVIDERS.clear();
    provider = Object.freeze({ instanceId, driver: null, model, effort });
    PROVIDERS.set(key, provider);
  }
  return provider;
}

/** Run states without data are shared (frozen) rather than allocated per row. */
const IDLE: RunState = Object.freeze({ phase: "idle" });
const QUEUED_ROW: RunState = Object.freeze({ phase: "queued", position: null });
const INTERRUPTED: RunState = Object.freeze({ phase: "interrupted" });
const CANCELLED: RunState = Object.freeze({ phase: "cancelled" });
const ROLLED_BACK: RunState = Object.freeze({ phase: "rolled-back" });

/** What the thread's newest provider session says about steering, if it says. */
export function steeringOf(projection: ThreadProjection): boolean | undefined {
  const session = [...projection.providerSessions].sort((a, b) => a.updatedAt.localeCompare(b.updatedAt)).at(-1);
  return session?.capabilities?.turns?.supportsActiveSteering;
}

function parentOf(row: ShellRow): AgentFacts["parent"] {
  const { parentThreadId, relationshipToParent } = row;
  if (parentThreadId) return { threadId: parentThreadId, relationship: relationshipToParent === "subagent" ? "subagent" : "fork" };
  const byId = CHILD_ID.exec(row.id);
  return byId ? { threadId: byId[1]!, relationship: "child-id" } : null;
}

/** The run state a shell row reports; the queue position comes from the thread stream. */
export function runStateOfRow(row: ShellRow, features?: ServerFeatures): RunState {
  // A pending request is reported as `blockedBy`; the run state is what the run status says.
  const state = agentStateOfRow({ pendingRuntimeRequest: null, runStatus: row.runStatus, runNote: row.runNote });
  switch (state.kind) {
    case "blocked":
      // Not reached (the request is left out above): a blocked run is a running one.
      return { phase: "running", since: row.runAt, note: null };
    case "working":
      if (state.phase === "waiting") return { phase: "waiting", note: row.runNote };
      if (state.phase === "running") return { phase: "running", since: row.runAt, note: null };
      // Preparing or starting: since the run started, else was requested, else the row changed (./shell-row.ts).
      return { phase: state.phase, since: row.runAt ?? row.updatedAt };
    case "queued":
      return QUEUED_ROW;
    case "failed":
      // The turn's own error item first: the row's lastError is the provider session's, often empty.
      return { phase: "failed", reason: features?.failureReason?.(row.id, row.latestRunId) ?? state.error };
    case "stopped":
      return state.how === "rolled_back" ? ROLLED_BACK : state.how === "interrupted" ? INTERRUPTED : CANCELLED;
    case "idle":
      return state.completed ? { phase: "completed", at: row.runAt } : IDLE;
  }
}

export function agentFactsOfRow(row: ShellRow, shell: ShellState, features: ServerFeatures): AgentFacts {
  const pending = row.pendingRuntimeRequest;
  const blockedOn = pending ? requestBlocksOn(pending.kind) : undefined;
  const run = runStateOfRow(row, features);
  const followedRun = features.followedRun?.(row.id);
  // A followed thread that has not (yet) shown the row's run gives no steer: the row is ahead of it.
  const followed =
    followedRun === undefined || row.activeRunId === null
      ? undefined
      : followedRun === "loading" || followedRun.runId !== row.activeRunId
        ? { takesSteer: false, finishing: false }
        : followedRun;
  return {
    threadId: row.id,
    projectId: row.projectId,
    projectTitle: shell.projects.get(row.projectId)?.title ?? null,
    title: row.title,
    provider: sharedProvider(row.providerInstanceId, row.model, row.effort),
    runtimeMode: row.runtimeMode,
    interactionMode: row.interactionMode,
    parent: parentOf(row),
    lifecycle: row.deleted ? "deleted" : "active",
    run,
    activeRunId: row.activeRunId,
    blockedBy:
      pending && blockedOn
        ? { kind: blockedOn === "question" ? "input" : blockedOn === "auth" ? "auth-refresh" : "approval", requestId: pending.id, since: pending.createdAt }
        : null,
    updatedAt: row.updatedAt,
    latestUserMessageAt: row.latestUserMessageAt,
    capabilities: capabilitiesV2(features, row.id, {
      finishing: run.phase === "waiting" || followed?.finishing === true,
      takesSteer: followed?.takesSteer ?? true,
    }),
    snoozedUntil: row.snoozedUntil ?? null,
  };
}

// ---------------------------------------------------------------- thread detail

function runStateOfRun(projection: ThreadProjection, run: Run): RunState {
  switch (run.status) {
    case "preparing":
    case "starting":
      return { phase: run.status, since: run.startedAt ?? run.requestedAt };
    case "running":
      return { phase: "running", since: run.startedAt, note: null };
    case "waiting":
      return { phase: "waiting", note: null };
    case "queued":
      return { phase: "queued", position: run.queuePosition ?? null };
    case "failed":
      return { phase: "failed", reason: runFailure(projection, run)?.message ?? null };
    case "interrupted":
    case "cancelled":
      return { phase: run.status };
    case "rolled_back":
      return { phase: "rolled-back" };
    case "completed":
      return { phase: "completed", at: run.completedAt };
    default:
      return { phase: "idle" };
  }
}

/** The thread's run as its projection tells: the active run, else the next queued one, else the latest. */
export function runStateOfProjection(projection: ThreadProjection): RunState {
  const active = activeRun(projection);
  if (active) return runStateOfRun(projection, active);
  const queued = queuedRuns(projection)[0];
  if (queued) return runStateOfRun(projection, queued);
  // A queued run cancelled before it started never ran: the thread is as its last run that did.
  const runs = [...projection.runs].sort((a, b) => a.ordinal - b.ordinal);
  const latest = runs.filter((run) => run.startedAt !== null).at(-1) ?? runs.at(-1);
  return latest ? runStateOfRun(projection, latest) : { phase: "idle" };
}

function pendingOf(card: PendingRequestCard): PendingRequest {
  switch (card.kind) {
    case "approval":
      return {
        kind: "approval",
        requestId: card.requestId,
        detail: card.prompt ?? card.requestKind,
        createdAt: card.createdAt,
        requestKind: card.requestKind,
        // The prompt is the agent's question ("Run `npm test`?"); protocol 2 carries no command of its own.
        ...(card.prompt !== null && { asked: true }),
        decisions: card.decisions.map((option) => ({ decision: option.decision as ApprovalDecision, label: option.label, warning: null })),
      };
    case "question":
      return {
        kind: "input",
        requestId: card.requestId,
        detail: card.questions.map((question) => question.question).join(" / "),
        createdAt: card.createdAt,
        questions: card.questions.map((question) => ({
          id: question.id,
          header: question.header || null,
          question: question.question,
          options: question.options.map((option) => ({ label: option.label, description: option.description || null, value: option.value ?? option.label })),
          multiSelect: question.multiSelect ?? false,
          allowsFreeText: (question.allowCustomAnswer ?? false) || question.options.length === 0,
          required: question.required ?? false,
        })),
      };
    case "auth":
      return { kind: "auth-refresh", requestId: card.requestId, detail: "The provider needs its login refreshed on this machine.", createdAt: card.createdAt };
  }
}

/** A subagent row's or item's status in the fleet's words. */
export const SUBAGENT_STATUS: Record<string, SubagentStatus> = {
  idle: "pending",
  pending: "pending",
  running: "running",
  waiting: "waiting",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  interrupted: "interrupted",
};

/** Native and app-owned subagents: the `subagents` rows, plus `subagent` items not (yet) in them (with those a trimmed projection let go). */
export function subagentsOf(projection: ThreadProjection, carried?: Carried): SubagentFacts[] {
  const out = new Map<string, SubagentFacts>(carried?.subagentItems);
  for (const item of projection.turnItems) {
    if (item.type !== "subagent") continue;
    out.set(item.subagentId, {
      id: item.subagentId,
      status: SUBAGENT_STATUS[item.status] ?? "running",
      title: item.title ?? item.prompt,
      kind: item.origin,
      model: null,
      childThreadId: item.childThreadId,
      updatedAt: item.updatedAt,
    });
  }
  for (const [id, subagent] of carried?.subagentRows ?? []) out.set(id, subagent);
  for (const subagent of projection.subagents) {
    out.set(subagent.id, {
      id: subagent.id,
      status: SUBAGENT_STATUS[subagent.status] ?? "running",
      title: subagent.title ?? subagent.prompt,
      kind: subagent.origin,
      model: subagent.model,
      childThreadId: subagent.childThreadId,
      updatedAt: subagent.updatedAt,
    });
  }
  return [...out.values()];
}

const ITEM_STATUS: Record<string, TranscriptItemStatus> = {
  idle: "pending",
  pending: "pending",
  running: "running",
  waiting: "running",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  interrupted: "interrupted",
};

function transcriptItemOf(item: TurnItem): TranscriptItem {
  const base = { id: item.id, runId: item.runId, createdAt: item.startedAt ?? item.updatedAt, updatedAt: item.updatedAt };
  const status = ITEM_STATUS[item.status] ?? "unknown";
  switch (item.type) {
    case "user_message":
      // Keyed by messageId: a sent message is found in the transcript by the id the fleet chose.
      return { ...base, id: item.messageId, type: "message", role: "user", text: item.text, streaming: false };
    case "assistant_message":
      return { ...base, id: item.messageId, type: "message", role: "assistant", text: item.text, streaming: item.streaming };
    case "command_execution":
      return { ...base, type: "command", command: item.input, exitCode: item.exitCode ?? null, status };
    case "file_change":
      return { ...base, type: "file-change", path: item.fileName, additions: item.additions ?? null, deletions: item.deletions ?? null, status };
    case "error":
      return { ...base, type: "error", message: `${item.failure.message} (${item.failure.class})` };
    case "approval_request":
      return { ...base, type: "activity", kind: "approval_request", summary: item.prompt ?? item.title ?? `Approval: ${item.requestKind}`, tone: "approval" };
    case "user_input_request":
      return {
        ...base,
        type: "activity",
        kind: "user_input_request",
        summary: item.questions.map((question) => question.question).join(" / ") || "Question",
        tone: "approval",
      };
    case "subagent":
      return { ...base, type: "activity", kind: "subagent", summary: `Subagent: ${item.title ?? item.prompt}`, tone: "tool" };
    case "system_notice":
    case "run_interrupt_request":
    case "run_interrupt_result":
      return { ...base, type: "activity", kind: item.type, summary: item.message, tone: "info" };
    case "reasoning":
      return { ...base, type: "activity", kind: "reasoning", summary: item.title ?? "Reasoning", tone: "info" };
    case "dynamic_tool":
      return { ...base, type: "activity", kind: "dynamic_tool", summary: item.toolName ?? item.title ?? "Tool call", tone: "tool" };
    default:
      return { ...base, type: "activity", kind: item.rawType, summary: item.title ?? item.rawType, tone: "info" };
  }
}

/**
 * Turn items in order, then user messages that have no turn item yet (a queued message lives only
 * as a conversation message of its queued run until that run starts).
 */
export function transcriptOf(projection: ThreadProjection, replyStreams?: boolean, carried?: Carried): TranscriptItem[] {
  const items = [...projection.turnItems].sort((a, b) => a.ordinal - b.ordinal).map(transcriptItemOf);
  if (replyStreams === false) withheldReplyNote(projection, items);
  const shown = new Set(items.map((item) => item.id));
  const waiting = projection.messages
    .filter((message) => message.role === "user" && !shown.has(message.id) && !carried?.anchors.has(message.id))
    .map((message): TranscriptItem => {
      const queue = queueStateOf(projection, message.id);
      return {
        id: message.id,
        runId: message.runId,
        createdAt: message.createdAt,
        updatedAt: message.updatedAt,
        type: "message",
        role: "user",
        text: message.text,
        streaming: false,
        ...(queue && { queue }),
      };
    });
  return [...items, ...waiting];
}

/**
 * A followed thread's transcript as its detail carries it: the anchors of messages that left the
 * tail (./retention.ts), then the tail, and how many of its items are anchors.
 */
export function transcriptOfThread(
  projection: ThreadProjection,
  replyStreams: boolean | undefined,
  carried: Carried,
): { items: TranscriptItem[] } & TranscriptBounds {
  const anchors = carried.anchors.items();
  const items = transcriptOf(projection, replyStreams, carried);
  return { items: anchors.length > 0 ? [...anchors, ...items] : items, anchored: anchors.length, earlier: carried.earlier };
}

/**
 * The projection with its oldest settled entries let go past their bounds, what they said kept in
 * `carried` (./retention.ts). `exact`: cut to the limits now, not at the next trim point (a snapshot).
 */
export function trimThread(projection: ThreadProjection, carried: Carried, exact = false): ThreadProjection {
  return trimProjection(
    projection,
    carried,
    {
      outcomes: messageOutcomesOf,
      ends: requestEndsOf,
      subagents: (trimmed) => subagentsOf(trimmed),
      transcriptItem: transcriptItemOf,
    },
    exact,
  );
}

/** A message without a turn item yet: whether its run is queued (and where) or was cancelled before it started. */
function queueStateOf(projection: ThreadProjection, messageId: string): MessageQueueState | null {
  // The same reading as messageOutcomesOf, for one message (a queued message has no turn item).
  const run = projection.runs.find((candidate) => candidate.userMessageId === messageId);
  if (run?.status === "queued") return { state: "queued", position: run.queuePosition ?? null };
  if (run?.status === "cancelled" && run.startedAt === null) return { state: "cancelled" };
  return null;
}

/**
 * Where T3 sends a reply only when the turn ends, says so while the active run has none: a note
 * right after the run's first item, so it keeps its place while the run's items follow it.
 */
function withheldReplyNote(projection: ThreadProjection, items: TranscriptItem[]): void {
  const run = activeRun(projection);
  if (!run || items.some((item) => item.runId === run.id && item.type === "message" && item.role === "assistant")) return;
  const first = items.findIndex((item) => item.runId === run.id);
  if (first === -1) return;
  const at = items[first]!.createdAt;
  items.splice(first + 1, 0, {
    id: `reply-withheld:${run.id}`,
    runId: run.id,
    createdAt: at,
    updatedAt: at,
    type: "activity",
    kind: "reply-withheld",
    summary: REPLY_WITHHELD_NOTE,
    tone: "info",
  });
}

/** The server setting `enableLegacyTokenStreaming` is off: assistant text is buffered until the turn ends. */
export const REPLY_WITHHELD_NOTE = "T3 sends this agent's reply when the turn ends.";

export function messageOutcomesOf(projection: ThreadProjection): Record<string, MessageOutcome> {
  const outcomes: Record<string, MessageOutcome> = {};
  for (const item of projection.turnItems) {
    if (item.type !== "user_message") continue;
    const outcome = messageOutcome(projection, item.messageId);
    if (outcome.kind === "run") {
      outcomes[item.messageId] = { runId: outcome.run.id, how: "started", queuePosition: null };
    } else if (outcome.kind === "joined") {
      outcomes[item.messageId] = { runId: outcome.runId, how: "joined", queuePosition: null };
    }
  }
  // A queued message has a run but no user_message item yet.
  for (const run of projection.runs) {
    if (outcomes[run.userMessageId]) continue;
    if (run.status === "queued") outcomes[run.userMessageId] = { runId: run.id, how: "queued", queuePosition: run.queuePosition ?? null };
    else if (run.startedAt === null && run.status === "cancelled") outcomes[run.userMessageId] = { runId: run.id, how: "cancelled", queuePosition: null };
    else outcomes[run.userMessageId] = { runId: run.id, how: "started", queuePosition: null };
  }
  return outcomes;
}

/**
 * How T3 recorded each request that is no longer pending: `resolved` (with its decision where the
 * engine names one; the recorded engine does not), or expired or cancelled before an answer reached the agent.
 */
export function requestEndsOf(projection: ThreadProjection): Record<string, RequestEnd> {
  const ends: Record<string, RequestEnd> = {};
  for (const request of projection.runtimeRequests) {
    if (request.status === "resolved") {
      const decision = typeof request.decision === "string" && request.decision !== "unknown" ? request.decision : null;
      ends[request.id] = { how: "resolved", decision };
    } else if (request.status === "expired" || request.status === "cancelled") {
      ends[request.id] = { how: "failed", reason: `T3 recorded the request as ${request.status} before an answer reached the agent.` };
    }
  }
  return ends;
}

export function detailFactsOf(projection: ThreadProjection, answered: ReadonlySet<string>, lastEventAt: string | null, carried?: Carried): ThreadDetailFacts {
  const errors = projection.turnItems
    .filter((item): item is Extract<TurnItem, { type: "error" }> => item.type === "error")
    .sort((a, b) => a.ordinal - b.ordinal);
  const active = activeRun(projection);
  // An error item still running is a retry in flight (a capacity or transport problem) on a run the row shows as running.
  const retrying = active ? errors.filter((item) => item.runId === active.id && item.status === "running").at(-1) : undefined;
  return {
    pending: pendingRequestCards(projection)
      .filter((card) => !answered.has(card.requestId))
      .map(pendingOf),
    lastErrorText: errors.at(-1)?.failure.message ?? carried?.lastErrorText ?? null,
    hiddenFailure: retrying && active ? { reason: `${retrying.failure.message} (${retrying.failure.class}, retrying)`, runId: active.id } : null,
    subagents: subagentsOf(projection, carried),
    activeRunId: active?.id ?? null,
    run: runStateOfProjection(projection),
    lastEventAt,
    // What left a trimmed projection settled before it left: its outcomes win over what is held.
    messageOutcomes: carried?.outcomes.size ? { ...messageOutcomesOf(projection), ...Object.fromEntries(carried.outcomes) } : messageOutcomesOf(projection),
    requestEnds: carried?.ends.size ? { ...Object.fromEntries(carried.ends), ...requestEndsOf(projection) } : requestEndsOf(projection),
    changes: turnChangesOfProjection(projection),
    usage: usageWithCarried(usageOfProjection(projection), carried),
    // A run leaves `waiting` once its checkpoint is taken (docs/t3-protocols.md, "Protocol 2").
    lastTurnReported: active === undefined && queuedRuns(projection).length === 0,
  };
}

/** Usage of a trimmed projection: the thread's tokens add those of the provider turns that left it. */
function usageWithCarried(usage: ReturnType<typeof usageOfProjection>, carried: Carried | undefined): ReturnType<typeof usageOfProjection> {
  if (!usage || !carried?.tokens) return usage;
  return { ...usage, thread: addTokens(carried.tokens, usage.thread) };
}
