// A second, strict reading of T3's protocol-2 contract (orchestrationV2.ts at 006bb815, summarized in
// docs/t3-protocols.md): exact field lists, closed enums, ISO times, no extra keys. Tests check every
// frame the v2 simulator sends against it, so the simulator cannot drift into shapes only our own
// tolerant decoders (schemas.ts) would accept.
import { z } from "zod";

const Id = z.string().trim().min(1);
const Iso = z.iso.datetime({ offset: true });
const Nat = z.number().int().nonnegative();
const Pos = z.number().int().positive();
const nullable = <S extends z.ZodType>(schema: S) => schema.nullable();

const ModelSelection = z.strictObject({
  instanceId: Id,
  model: Id,
  options: z.array(z.strictObject({ id: Id, value: z.union([z.string(), z.boolean()]) })).optional(),
});
const RuntimeMode = z.enum(["approval-required", "auto-accept-edits", "auto", "full-access"]);
const InteractionMode = z.enum(["default", "plan"]);
const Actor = z.enum(["user", "agent", "system"]);
const CreationSource = z.enum(["web", "mobile", "mcp", "provider", "server"]);
const RunStatus = z.enum(["preparing", "queued", "starting", "running", "waiting", "completed", "interrupted", "failed", "cancelled", "rolled_back"]);
const ItemStatus = z.enum(["idle", "pending", "running", "waiting", "completed", "failed", "cancelled", "interrupted"]);
const RequestKind = z.enum(["command", "file-read", "file-change", "mcp-elicitation", "permission", "dynamic_tool_call", "user_input", "auth_refresh"]);
const Decision = z.enum(["accept", "acceptForSession", "acceptAlways", "decline", "cancel"]);
const ProviderRef = z.strictObject({
  driver: Id,
  nativeId: nullable(Id),
  strength: z.enum(["strong", "weak", "none"]),
  fingerprint: Id.optional(),
  ordinal: Nat.optional(),
});

const Lineage = z.strictObject({
  parentThreadId: nullable(Id),
  relationshipToParent: nullable(z.enum(["fork", "subagent"])),
  rootThreadId: Id,
});
const ForkedFrom = nullable(
  z.union([
    z.strictObject({ type: z.literal("run"), threadId: Id, runId: Id }),
    z.strictObject({ type: z.literal("node"), nodeId: Id }),
    z.strictObject({ type: z.literal("provider_thread"), providerThreadId: Id, providerTurnId: Id.optional() }),
  ]),
);
const threadFields = {
  createdBy: Actor,
  creationSource: CreationSource,
  id: Id,
  projectId: Id,
  providerInstanceId: Id,
  modelSelection: ModelSelection,
  runtimeMode: RuntimeMode,
  interactionMode: InteractionMode,
  branch: nullable(Id),
  worktreePath: nullable(Id),
  activeProviderThreadId: nullable(Id),
  historyOrigin: z.enum(["native", "v1_import"]).optional(),
  lineage: Lineage,
  forkedFrom: ForkedFrom,
  createdAt: Iso,
  updatedAt: Iso,
  archivedAt: nullable(Iso),
  settledOverride: nullable(z.enum(["settled", "active"])),
  settledAt: nullable(Iso),
  unsettledAt: nullable(Iso).optional(),
  snoozedUntil: nullable(Iso).optional(),
  snoozedAt: nullable(Iso).optional(),
  pinnedAt: nullable(Iso).optional(),
  pinOrderKey: nullable(Id).optional(),
  deletedAt: nullable(Iso),
};
export const StrictAppThread = z.strictObject({ ...threadFields, title: Id, lastVisitedAt: nullable(Iso) });

export const StrictThreadShell = z.strictObject({
  ...threadFields,
  title: z.string(),
  lastVisitedAt: nullable(Iso).optional(),
  latestRunId: nullable(Id),
  latestRunRequestedAt: nullable(Iso).optional(),
  latestRunStartedAt: nullable(Iso).optional(),
  latestRunCompletedAt: nullable(Iso).optional(),
  activeRunId: nullable(Id),
  activityRunStatus: nullable(z.enum(["preparing", "starting", "running", "waiting"])).optional(),
  status: z.union([z.literal("idle"), RunStatus]),
  lastError: nullable(z.string()).optional(),
  pendingRuntimeRequest: nullable(z.strictObject({ id: Id, kind: RequestKind, createdAt: Iso })),
  latestVisibleMessage: nullable(z.strictObject({ id: Id, role: z.enum(["user", "assistant", "system"]), text: z.string(), updatedAt: Iso })),
  latestUserMessageAt: nullable(Iso),
  hasActionableProposedPlan: z.boolean(),
  pendingBackgroundTasks: z.array(z.strictObject({ taskId: Id, description: Id.optional(), taskType: Id.optional() })).optional(),
  itemCount: Nat,
  visibleItemCount: Nat,
});

export const StrictProjectShell = z.strictObject({
  id: Id,
  title: Id,
  workspaceRoot: Id,
  repositoryIdentity: z.unknown().optional(),
  defaultModelSelection: nullable(ModelSelection),
  scripts: z.array(z.unknown()),
  createdAt: Iso,
  updatedAt: Iso,
});

export const StrictShellSnapshot = z.strictObject({
  schemaVersion: Pos,
  snapshotSequence: Nat,
  projects: z.array(StrictProjectShell),
  threads: z.array(StrictThreadShell),
  archivedThreads: z.array(StrictThreadShell),
});

export const StrictRun = z.strictObject({
  id: Id,
  threadId: Id,
  ordinal: Pos,
  providerInstanceId: Id,
  modelSelection: ModelSelection,
  providerThreadId: nullable(Id),
  userMessageId: Id,
  rootNodeId: nullable(Id),
  activeAttemptId: nullable(Id),
  status: RunStatus,
  queuePosition: nullable(Pos).optional(),
  requestedAt: Iso,
  startedAt: nullable(Iso),
  completedAt: nullable(Iso),
  checkpointId: nullable(Id),
  contextHandoffId: nullable(Id),
  restartContinuationOfRunId: Id.optional(),
});

export const StrictSubagent = z.strictObject({
  id: Id,
  threadId: Id,
  runId: nullable(Id),
  parentNodeId: Id,
  origin: z.enum(["provider_native", "app_owned"]),
  createdBy: Actor,
  driver: Id,
  providerInstanceId: Id,
  providerThreadId: nullable(Id),
  childThreadId: nullable(Id),
  nativeTaskRef: nullable(ProviderRef),
  prompt: z.string(),
  title: nullable(z.string()),
  model: nullable(z.string()),
  completionWake: z.enum(["always", "settled_only"]).optional(),
  status: ItemStatus,
  progress: z.string().optional(),
  result: nullable(z.string()),
  startedAt: nullable(Iso),
  completedAt: nullable(Iso),
  updatedAt: Iso,
});

const CAPABILITY_GROUPS = [
  "sessions",
  "threads",
  "turns",
  "streaming",
  "tools",
  "approvals",
  "planning",
  "subagents",
  "context",
  "checkpointing",
  "identity",
] as const;
export const StrictProviderSession = z.strictObject({
  id: Id,
  driver: Id,
  providerInstanceId: Id,
  status: z.enum(["starting", "ready", "running", "waiting", "stopped", "error"]),
  cwd: Id,
  model: nullable(Id),
  capabilities: z.strictObject(
    Object.fromEntries(CAPABILITY_GROUPS.map((group) => [group, z.record(z.string(), z.union([z.boolean(), z.string(), z.number(), z.null()]))])),
  ),
  createdAt: Iso,
  updatedAt: Iso,
  lastError: nullable(z.string()),
});

export const StrictRuntimeRequest = z.strictObject({
  id: Id,
  nodeId: Id,
  providerTurnId: nullable(Id),
  nativeRequestRef: nullable(ProviderRef),
  kind: RequestKind,
  status: z.enum(["pending", "resolved", "expired", "cancelled"]),
  responseCapability: z.union([
    z.strictObject({ type: z.literal("live"), providerSessionId: Id }),
    z.strictObject({ type: z.literal("message") }),
    z.strictObject({ type: z.literal("not_resumable"), reason: z.string() }),
  ]),
  createdAt: Iso,
  resolvedAt: nullable(Iso),
  decision: Decision.optional(),
  answers: z.record(z.string(), z.unknown()).optional(),
});

export const StrictMessage = z.strictObject({
  createdBy: Actor,
  creationSource: CreationSource,
  id: Id,
  threadId: Id,
  runId: nullable(Id),
  nodeId: nullable(Id),
  role: z.enum(["user", "assistant", "system"]),
  text: z.string(),
  attachments: z.array(z.unknown()),
  streaming: z.boolean(),
  createdAt: Iso,
  updatedAt: Iso,
});

const itemBase = {
  id: Id,
  threadId: Id,
  runId: nullable(Id),
  nodeId: nullable(Id),
  providerThreadId: nullable(Id),
  providerTurnId: nullable(Id),
  nativeItemRef: nullable(ProviderRef),
  parentItemId: nullable(Id),
  ordinal: Nat,
  status: ItemStatus,
  title: nullable(z.string()),
  startedAt: nullable(Iso),
  completedAt: nullable(Iso),
  updatedAt: Iso,
};
const Question = z.strictObject({
  id: Id,
  header: Id,
  question: Id,
  options: z.array(z.strictObject({ label: Id, description: Id, value: z.string().optional() })),
  multiSelect: z.boolean().optional(),
  allowCustomAnswer: z.boolean().optional(),
  required: z.boolean().optional(),
});
export const StrictTurnItem = z.discriminatedUnion("type", [
  z.strictObject({
    ...itemBase,
    createdBy: Actor,
    creationSource: CreationSource,
    type: z.literal("user_message"),
    messageId: Id,
    inputIntent: z.enum(["turn_start", "queued_turn", "steer", "promoted_queued_to_steer"]),
    text: z.string(),
    attachments: z.array(z.unknown()),
  }),
  z.strictObject({ ...itemBase, type: z.literal("assistant_message"), messageId: Id, text: z.string(), streaming: z.boolean() }),
  z.strictObject({ ...itemBase, type: z.literal("reasoning"), text: z.string(), streaming: z.boolean() }),
  z.strictObject({
    ...itemBase,
    type: z.literal("user_input_request"),
    requestId: Id,
    questions: z.array(Question),
    responseMode: z.literal("message").optional(),
  }),
  z.strictObject({
    ...itemBase,
    type: z.literal("command_execution"),
    input: z.string(),
    output: z.string().optional(),
    exitCode: z.number().int().optional(),
  }),
  z.strictObject({ ...itemBase, type: z.literal("file_change"), fileName: Id, additions: Nat.optional(), deletions: Nat.optional() }),
  z.strictObject({
    ...itemBase,
    type: z.literal("approval_request"),
    requestId: Id,
    requestKind: z.enum(["command", "file-read", "file-change", "mcp-elicitation", "permission"]),
    prompt: z.string().optional(),
    appName: z.string().optional(),
    options: z.array(z.strictObject({ decision: Decision, label: Id, warning: Id.optional() })).optional(),
  }),
  z.strictObject({
    ...itemBase,
    type: z.literal("checkpoint"),
    checkpointId: Id,
    scopeId: Id,
    files: z.array(z.strictObject({ path: Id, kind: Id, additions: Nat, deletions: Nat })),
  }),
  z.strictObject({ ...itemBase, type: z.literal("run_interrupt_request"), message: z.string() }),
  z.strictObject({ ...itemBase, type: z.literal("run_interrupt_result"), message: z.string() }),
  z.strictObject({ ...itemBase, type: z.literal("system_notice"), message: z.string() }),
  z.strictObject({
    ...itemBase,
    type: z.literal("error"),
    failure: z.strictObject({
      class: z.enum(["provider_error", "transport_error", "permission_error", "validation_error", "unknown"]),
      message: Id.max(4096),
      code: nullable(Id.max(128)),
      retryable: nullable(z.boolean()),
    }),
    retry: z.strictObject({ attempt: Pos, maxAttempts: nullable(Pos), retryDelayMs: nullable(Nat) }).optional(),
  }),
  z.strictObject({
    ...itemBase,
    type: z.literal("subagent"),
    subagentId: Id,
    origin: z.enum(["provider_native", "app_owned"]),
    driver: Id,
    providerInstanceId: Id,
    childThreadId: nullable(Id),
    prompt: z.string(),
    progress: z.string().optional(),
    result: nullable(z.string()),
  }),
]);

export const StrictProjection = z.strictObject({
  thread: StrictAppThread,
  runs: z.array(StrictRun),
  attempts: z.array(z.unknown()),
  nodes: z.array(z.unknown()),
  subagents: z.array(StrictSubagent),
  providerSessions: z.array(StrictProviderSession),
  providerThreads: z.array(z.unknown()),
  providerTurns: z.array(z.unknown()),
  runtimeRequests: z.array(StrictRuntimeRequest),
  messages: z.array(StrictMessage),
  plans: z.array(z.unknown()),
  turnItems: z.array(StrictTurnItem),
  checkpointScopes: z.array(z.unknown()),
  checkpoints: z.array(z.unknown()),
  contextHandoffs: z.array(z.unknown()),
  contextTransfers: z.array(z.unknown()),
  visibleTurnItems: z.array(
    z.strictObject({ position: Nat, visibility: z.enum(["local", "inherited", "synthetic"]), sourceThreadId: Id, sourceItemId: Id, item: StrictTurnItem }),
  ),
  updatedAt: Iso,
});

const eventBase = {
  id: Id,
  threadId: Id,
  runId: Id.optional(),
  nodeId: Id.optional(),
  driver: Id.optional(),
  providerInstanceId: Id.optional(),
  rawEventId: Id.optional(),
  occurredAt: Iso,
};
const THREAD_EVENTS = [
  "thread.created",
  "thread.archived",
  "thread.unarchived",
  "thread.deleted",
  "thread.settled",
  "thread.unsettled",
  "thread.snoozed",
  "thread.unsnoozed",
  "thread.pinned",
  "thread.unpinned",
  "thread.pin-reordered",
  "thread.visited",
  "thread.marked-unread",
  "thread.metadata-updated",
  "thread.runtime-mode-updated",
  "thread.interaction-mode-updated",
  "thread.model-selection-updated",
  "thread.provider-switched",
] as const;
export const StrictDomainEvent = z.union([
  z.strictObject({ ...eventBase, type: z.enum(THREAD_EVENTS), payload: StrictAppThread }),
  z.strictObject({ ...eventBase, type: z.enum(["run.created", "run.updated"]), payload: StrictRun }),
  z.strictObject({ ...eventBase, type: z.literal("subagent.updated"), payload: StrictSubagent }),
  z.strictObject({ ...eventBase, type: z.enum(["provider-session.attached", "provider-session.updated"]), payload: StrictProviderSession }),
  z.strictObject({ ...eventBase, type: z.literal("runtime-request.updated"), payload: StrictRuntimeRequest }),
  z.strictObject({ ...eventBase, type: z.literal("message.updated"), payload: StrictMessage }),
  z.strictObject({ ...eventBase, type: z.literal("turn-item.updated"), payload: StrictTurnItem }),
]);

export const StrictShellStreamItem = z.union([
  z.strictObject({ kind: z.literal("synchronized") }),
  z.strictObject({ kind: z.literal("snapshot"), snapshot: StrictShellSnapshot }),
  z.strictObject({ kind: z.literal("project.updated"), sequence: Nat, project: StrictProjectShell }),
  z.strictObject({ kind: z.literal("project.removed"), sequence: Nat, projectId: Id }),
  z.strictObject({ kind: z.literal("thread.updated"), sequence: Nat, location: z.enum(["active", "archive"]), thread: StrictThreadShell }),
  z.strictObject({ kind: z.literal("thread.removed"), sequence: Nat, location: z.enum(["active", "archive"]), threadId: Id }),
]);

export const StrictThreadStreamItem = z.union([
  z.strictObject({ kind: z.literal("synchronized") }),
  z.strictObject({ kind: z.literal("snapshot"), snapshotSequence: Nat, projection: StrictProjection }),
  z.strictObject({ kind: z.literal("event"), sequence: Nat, event: StrictDomainEvent }),
]);

export const StrictThreadDetailSnapshot = z.strictObject({
  snapshotSequence: Nat,
  projection: StrictProjection,
  historyCursor: nullable(Id).optional(),
  hasMoreHistory: z.boolean().optional(),
  latestLocalTurnOrdinal: nullable(Nat).optional(),
});

export const StrictDispatchResult = z.strictObject({ sequence: Nat });

export const StrictRpcError = z.union([
  z.strictObject({
    _tag: z.literal("OrchestrationV2DispatchCommandError"),
    commandId: Id,
    commandType: z.string(),
    message: z.string(),
    detail: z.string().optional(),
  }),
  z.strictObject({ _tag: z.literal("OrchestrationV2GetThreadProjectionError"), threadId: Id, message: z.string() }),
  z.strictObject({ _tag: z.literal("OrchestrationV2GetShellSnapshotError"), message: z.string() }),
]);
