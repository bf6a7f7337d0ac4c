// Wire schemas of T3's orchestration protocol 2 (docs/t3-protocols.md, "Protocol 2"): the shell,
// thread projections, runs, turn items, runtime requests and subagents. Same rules as the
// shared schemas in shared/t3/schemas.ts: unknown fields are dropped, unknown enum strings
// decode as "unknown", unknown item/event kinds are kept raw, and a structural error names the
// path of the first bad field (shared/t3/decode.ts).
import { z } from "zod";
import { EnvironmentDescriptor, ModelSelection, ProjectShell, ReportedCount, openEnum } from "../schemas";
import { lenientList } from "../decode";
import { ServerText } from "../text";
import { ChangedFileWire, FileTotalsField, capCheckpointFiles } from "../turn-files";
import {
  APPROVAL_DECISIONS,
  APPROVAL_REQUEST_KINDS,
  FAILURE_CLASSES,
  INTERACTION_MODES,
  ITEM_STATUSES,
  PARENT_RELATIONSHIPS,
  RUN_STATUSES,
  RUNTIME_MODES,
  RUNTIME_REQUEST_KINDS,
} from "./enums";
import { ShellRowV2 } from "./shell-row";

export { EnvironmentDescriptor, ProjectShell };

const Id = z.string().min(1);
const IsoTime = z.string();
const Sequence = z.number().int().nonnegative();
const NullableId = Id.nullable();

// ---------------------------------------------------------------- negotiation

/** The body of the 426 a protocol-2 server sends to a `/ws` without `?orchestrationProtocol=2`. */
export const ProtocolIncompatibleBody = z.object({
  code: z.string().optional(),
  orchestrationProtocolVersion: z.number().int().optional(),
  message: ServerText.reason.optional(),
});

/** The HTTP header every orchestration read on a protocol-2 server carries. */
export const ORCHESTRATION_PROTOCOL_HEADER = "x-t3-orchestration-protocol";
export const ORCHESTRATION_PROTOCOL_QUERY = "orchestrationProtocol";

// ---------------------------------------------------------------- threads

export const ThreadLineage = z.object({
  parentThreadId: NullableId,
  relationshipToParent: openEnum(PARENT_RELATIONSHIPS).nullable(),
  rootThreadId: Id,
});
export type ThreadLineage = z.infer<typeof ThreadLineage>;

const threadCommon = {
  id: Id,
  projectId: Id,
  title: ServerText.title,
  providerInstanceId: z.string(),
  modelSelection: ModelSelection,
  runtimeMode: openEnum(RUNTIME_MODES),
  interactionMode: openEnum(INTERACTION_MODES),
  branch: ServerText.label.nullable(),
  worktreePath: ServerText.path.nullable(),
  lineage: ThreadLineage,
  activeProviderThreadId: z.string().nullable().optional(),
  historyOrigin: openEnum(["native", "v1_import"]).optional(),
  createdBy: openEnum(["user", "agent", "system"]).optional(),
  creationSource: openEnum(["web", "mobile", "mcp", "provider", "server"]).optional(),
  createdAt: IsoTime,
  updatedAt: IsoTime,
  archivedAt: IsoTime.nullable().optional(),
  deletedAt: IsoTime.nullable().optional(),
  pinnedAt: IsoTime.nullable().optional(),
  snoozedUntil: IsoTime.nullable().optional(),
  settledOverride: openEnum(["settled", "active"]).nullable().optional(),
};

/** OrchestrationV2AppThread: the thread entity of projections and thread.* events. */
export const AppThread = z.object(threadCommon);
export type AppThread = z.infer<typeof AppThread>;

export const ShellSnapshotV2 = z.object({
  schemaVersion: z.number().int().positive(),
  snapshotSequence: Sequence,
  projects: z.array(ProjectShell),
  /** A row that does not decode is left out and reported (shared/t3/decode.ts), never the snapshot. */
  threads: lenientList(ShellRowV2, "shell row"),
  archivedThreads: lenientList(ShellRowV2, "archived shell row"),
});
export type ShellSnapshotV2 = z.infer<typeof ShellSnapshotV2>;

// ---------------------------------------------------------------- runs, requests, subagents, sessions

export const Run = z.object({
  id: Id,
  threadId: Id.optional(),
  ordinal: z.number().int(),
  userMessageId: Id,
  rootNodeId: NullableId,
  status: openEnum(RUN_STATUSES),
  /** Shown as the run's place in the queue: a bad one is not reported, the run kept. */
  queuePosition: z.number().int().positive().nullable().optional().catch(null),
  requestedAt: IsoTime,
  startedAt: IsoTime.nullable(),
  completedAt: IsoTime.nullable(),
  checkpointId: z.string().nullable().optional(),
  providerInstanceId: z.string(),
  modelSelection: ModelSelection,
  /** The attempt whose provider turn a steer or an interrupt reaches. */
  activeAttemptId: NullableId.optional(),
});
export type Run = z.infer<typeof Run>;

/** The provider's live context usage (contract `OrchestrationV2ProviderTurnTokenUsage`); a figure that does not decode is not reported. */
export const ProviderTurnTokenUsage = z.object({
  usedTokens: ReportedCount,
  maxTokens: ReportedCount,
  inputTokens: ReportedCount,
  cachedInputTokens: ReportedCount,
  outputTokens: ReportedCount,
  reasoningOutputTokens: ReportedCount,
  updatedAt: IsoTime,
});
export type ProviderTurnTokenUsage = z.infer<typeof ProviderTurnTokenUsage>;

/** One turn's main-agent tokens (contract `TurnTokenUsage`): input includes cache reads, output includes reasoning. */
export const TurnTokenUsage = z.object({
  usageStatus: openEnum(["complete", "partial", "unavailable"]),
  inputTokens: ReportedCount,
  outputTokens: ReportedCount,
  cachedInputTokens: ReportedCount,
  reasoningTokens: ReportedCount,
});
export type TurnTokenUsage = z.infer<typeof TurnTokenUsage>;

/** A provider's own turn inside a run attempt; a run takes a steer only while its attempt's turn is running. */
export const ProviderTurn = z.object({
  id: Id,
  runAttemptId: NullableId.optional(),
  status: openEnum(["pending", "running", "completed", "failed", "interrupted", "cancelled"]),
  startedAt: IsoTime.nullable().optional(),
  completedAt: IsoTime.nullable().optional(),
  /** Token figures exist on builds since upstream #8144; a report whose shape does not decode reads as not reported. */
  tokenUsage: ProviderTurnTokenUsage.optional().catch(undefined),
  turnTokenUsage: TurnTokenUsage.optional().catch(undefined),
});
export type ProviderTurn = z.infer<typeof ProviderTurn>;

/** A decision is a word, or (newer Codex builds) an object form; object forms decode as "unknown". */
const Decision = z.union([
  openEnum(APPROVAL_DECISIONS),
  z
    .object({})
    .passthrough()
    .transform(() => "unknown" as const),
]);

export const RuntimeRequest = z.object({
  id: Id,
  nodeId: Id,
  kind: openEnum(RUNTIME_REQUEST_KINDS),
  status: openEnum(["pending", "resolved", "expired", "cancelled"]),
  responseCapability: z.object({ type: openEnum(["live", "message", "not_resumable"]) }),
  createdAt: IsoTime,
  resolvedAt: IsoTime.nullable().optional(),
  decision: Decision.optional(),
  answers: z.record(z.string(), z.unknown()).optional(),
});
export type RuntimeRequest = z.infer<typeof RuntimeRequest>;

export const Subagent = z.object({
  id: Id,
  threadId: Id,
  runId: NullableId,
  origin: openEnum(["provider_native", "app_owned"]),
  driver: z.string().optional(),
  providerInstanceId: z.string(),
  childThreadId: NullableId,
  prompt: ServerText.body,
  title: ServerText.title.nullable(),
  model: ServerText.label.nullable(),
  status: openEnum(ITEM_STATUSES),
  progress: ServerText.reason.nullable().optional(),
  result: ServerText.body.nullable(),
  startedAt: IsoTime.nullable().optional(),
  completedAt: IsoTime.nullable().optional(),
  updatedAt: IsoTime,
});
export type Subagent = z.infer<typeof Subagent>;

export const ProviderSession = z.object({
  id: Id,
  providerInstanceId: z.string(),
  status: openEnum(["starting", "ready", "running", "waiting", "stopped", "error"]),
  /** Only what the fleet reads: whether a message can steer the active run. */
  capabilities: z.object({ turns: z.object({ supportsActiveSteering: z.boolean().optional() }).optional() }).optional(),
  lastError: ServerText.reason.nullable(),
  updatedAt: IsoTime,
});
export type ProviderSession = z.infer<typeof ProviderSession>;

export const ConversationMessage = z.object({
  id: Id,
  threadId: Id,
  runId: NullableId,
  role: openEnum(["user", "assistant", "system"]),
  text: ServerText.body,
  streaming: z.boolean(),
  createdAt: IsoTime,
  updatedAt: IsoTime,
});
export type ConversationMessage = z.infer<typeof ConversationMessage>;

// ---------------------------------------------------------------- turn items

const itemBase = {
  id: Id,
  threadId: Id,
  runId: NullableId,
  nodeId: NullableId,
  parentItemId: NullableId.optional(),
  ordinal: z.number().int().nonnegative(),
  status: openEnum(ITEM_STATUSES),
  title: ServerText.title.nullable(),
  startedAt: IsoTime.nullable(),
  completedAt: IsoTime.nullable(),
  updatedAt: IsoTime,
};

export const UserInputQuestion = z.object({
  id: Id,
  header: ServerText.title,
  question: ServerText.reason,
  options: z.array(z.object({ label: ServerText.title, description: ServerText.reason, value: z.string().optional() })),
  multiSelect: z.boolean().optional(),
  allowCustomAnswer: z.boolean().optional(),
  required: z.boolean().optional(),
});
export type UserInputQuestion = z.infer<typeof UserInputQuestion>;

export const ApprovalOption = z.object({ decision: Decision, label: ServerText.title, warning: ServerText.reason.optional() });

export const ProviderFailure = z.object({
  class: openEnum(FAILURE_CLASSES),
  message: ServerText.reason,
  code: z.string().nullable(),
  retryable: z.boolean().nullable(),
  resetAt: IsoTime.nullable().optional(),
});
export type ProviderFailure = z.infer<typeof ProviderFailure>;

const itemByType = {
  user_message: z.object({
    ...itemBase,
    type: z.literal("user_message"),
    messageId: Id,
    inputIntent: openEnum(["turn_start", "queued_turn", "steer", "promoted_queued_to_steer"]),
    text: ServerText.body,
  }),
  assistant_message: z.object({ ...itemBase, type: z.literal("assistant_message"), messageId: Id, text: ServerText.body, streaming: z.boolean() }),
  reasoning: z.object({ ...itemBase, type: z.literal("reasoning"), text: ServerText.body, streaming: z.boolean() }),
  approval_request: z.object({
    ...itemBase,
    type: z.literal("approval_request"),
    requestId: Id,
    requestKind: openEnum(APPROVAL_REQUEST_KINDS),
    prompt: ServerText.body.optional(),
    appName: ServerText.label.optional(),
    options: z.array(ApprovalOption).optional(),
  }),
  user_input_request: z.object({
    ...itemBase,
    type: z.literal("user_input_request"),
    requestId: Id,
    questions: z.array(UserInputQuestion),
    responseMode: openEnum(["message"]).optional(),
  }),
  command_execution: z.object({
    ...itemBase,
    type: z.literal("command_execution"),
    input: ServerText.body,
    /** An exact exit status (a signal's may be negative), else not reported: a bad one costs only itself. */
    exitCode: z.number().int().nullable().optional().catch(null),
  }),
  file_change: z.object({
    ...itemBase,
    type: z.literal("file_change"),
    fileName: ServerText.path,
    additions: ReportedCount,
    deletions: ReportedCount,
  }),
  dynamic_tool: z.object({ ...itemBase, type: z.literal("dynamic_tool"), toolName: ServerText.label.nullable() }),
  subagent: z.object({
    ...itemBase,
    type: z.literal("subagent"),
    subagentId: Id,
    origin: openEnum(["provider_native", "app_owned"]),
    driver: z.string().optional(),
    providerInstanceId: z.string(),
    childThreadId: NullableId,
    prompt: ServerText.body,
    progress: ServerText.reason.nullable().optional(),
    result: ServerText.body.nullable(),
  }),
  error: z.object({ ...itemBase, type: z.literal("error"), failure: ProviderFailure }),
  system_notice: z.object({ ...itemBase, type: z.literal("system_notice"), message: ServerText.reason }),
  run_interrupt_request: z.object({ ...itemBase, type: z.literal("run_interrupt_request"), message: ServerText.reason }),
  run_interrupt_result: z.object({ ...itemBase, type: z.literal("run_interrupt_result"), message: ServerText.reason }),
};
type KnownTurnItem = { [K in keyof typeof itemByType]: z.infer<(typeof itemByType)[K]> }[keyof typeof itemByType];
const OtherTurnItem = z.object({ ...itemBase, type: z.string() }).transform((item) => ({ ...item, type: "other" as const, rawType: item.type }));
/** Items the fleet does not show in detail (plans, checkpoints, searches, handoffs...) keep their common fields. */
export type TurnItem = KnownTurnItem | z.infer<typeof OtherTurnItem>;

/** Dispatches on a discriminating field; an unlisted value goes to `fallback` instead of failing. */
function byField<T>(field: string, schemas: Record<string, z.ZodType>, fallback: z.ZodType) {
  return z.unknown().transform((raw, ctx): T => {
    const value = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>)[field] : undefined;
    const schema = typeof value === "string" && Object.hasOwn(schemas, value) ? schemas[value]! : fallback;
    const decoded = schema.safeParse(raw);
    if (!decoded.success) {
      for (const issue of decoded.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
      return z.NEVER;
    }
    return decoded.data as T;
  });
}

export const TurnItemSchema = byField<TurnItem>("type", itemByType, OtherTurnItem);

// ---------------------------------------------------------------- projections and events

/** Each element of a projection's lists is a thing of its own: one that does not decode is left out and reported, never the thread. */
const lenientArray = <S extends z.ZodType>(schema: S) => lenientList(schema, "thread projection element");

/** A captured checkpoint (contract `OrchestrationV2Checkpoint`); `appRunOrdinal` is the app run (turn) it closes, null for a scope's baseline. */
export const CheckpointV2 = z.preprocess(
  capCheckpointFiles,
  z.object({
    id: Id,
    runId: NullableId,
    appRunOrdinal: z.number().int().positive().nullable(),
    status: openEnum(["ready", "missing", "error", "stale"]),
    /** At most TURN_FILES_KEPT, the whole list's counts in `fileTotals` (shared/t3/turn-files.ts). */
    files: z.array(ChangedFileWire),
    fileTotals: FileTotalsField,
    capturedAt: IsoTime,
  }),
);
export type CheckpointV2 = z.infer<typeof CheckpointV2>;

export const ThreadProjection = z.object({
  thread: AppThread,
  runs: lenientArray(Run),
  subagents: lenientArray(Subagent),
  providerSessions: lenientArray(ProviderSession),
  providerTurns: lenientArray(ProviderTurn),
  runtimeRequests: lenientArray(RuntimeRequest),
  messages: lenientArray(ConversationMessage),
  turnItems: lenientArray(TurnItemSchema),
  checkpoints: lenientArray(CheckpointV2),
  updatedAt: IsoTime,
});
export type ThreadProjection = z.infer<typeof ThreadProjection>;

export const THREAD_EVENT_TYPES = [
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

const payloadByType: Record<string, z.ZodType> = {
  "run.created": Run,
  "run.updated": Run,
  "turn-item.updated": TurnItemSchema,
  "runtime-request.updated": RuntimeRequest,
  "provider-session.attached": ProviderSession,
  "provider-session.updated": ProviderSession,
  "provider-turn.updated": ProviderTurn,
  "checkpoint.captured": CheckpointV2,
  "subagent.updated": Subagent,
  "message.updated": ConversationMessage,
  ...Object.fromEntries(THREAD_EVENT_TYPES.map((type) => [type, AppThread])),
};

const EventEnvelope = z.object({
  id: Id,
  type: z.string().min(1),
  threadId: Id,
  runId: Id.optional(),
  nodeId: Id.optional(),
  providerInstanceId: z.string().optional(),
  occurredAt: IsoTime,
  payload: z.unknown(),
});
type Envelope = Omit<z.infer<typeof EventEnvelope>, "type" | "payload">;

export type DomainEvent = Envelope &
  (
    | { type: "run.created" | "run.updated"; payload: Run }
    | { type: "turn-item.updated"; payload: TurnItem }
    | { type: "runtime-request.updated"; payload: RuntimeRequest }
    | { type: "provider-session.attached" | "provider-session.updated"; payload: ProviderSession }
    | { type: "provider-turn.updated"; payload: ProviderTurn }
    | { type: "checkpoint.captured"; payload: CheckpointV2 }
    | { type: "subagent.updated"; payload: Subagent }
    | { type: "message.updated"; payload: ConversationMessage }
    | { type: (typeof THREAD_EVENT_TYPES)[number]; payload: AppThread }
    /** Event types the fleet skips (attempts, nodes, checkpoints, plans, context...): the cursor still advances. */
    | { type: "other"; rawType: string; payload: unknown }
  );

export const DomainEventSchema = EventEnvelope.transform((envelope, ctx): DomainEvent => {
  const schema = payloadByType[envelope.type];
  if (!schema) return { ...envelope, type: "other", rawType: envelope.type };
  const decoded = schema.safeParse(envelope.payload);
  if (!decoded.success) {
    for (const issue of decoded.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: ["payload", ...issue.path] });
    return z.NEVER;
  }
  return { ...envelope, payload: decoded.data } as DomainEvent;
});

// ---------------------------------------------------------------- stream items

const UnknownItem = z.object({ kind: z.string() }).transform((item) => ({ kind: "unknown" as const, rawKind: item.kind }));
const Location = openEnum(["active", "archive"]);

const shellItemByKind = {
  /**
   * A snapshot with `resolvedRepositoryIdentityRoots` is an enrichment refresh: metadata of the
   * listed projects only, with `threads: []`; it never changes which threads exist or the cursor.
   * Without it the snapshot is authoritative (the complete shell).
   */
  snapshot: z.object({ kind: z.literal("snapshot"), snapshot: ShellSnapshotV2, resolvedRepositoryIdentityRoots: z.array(z.string()).optional() }),
  "project.updated": z.object({ kind: z.literal("project.updated"), sequence: Sequence, project: ProjectShell }),
  "project.removed": z.object({ kind: z.literal("project.removed"), sequence: Sequence, projectId: Id }),
  "thread.updated": z.object({ kind: z.literal("thread.updated"), sequence: Sequence, location: Location, thread: ShellRowV2 }),
  "thread.removed": z.object({ kind: z.literal("thread.removed"), sequence: Sequence, location: Location, threadId: Id }),
  synchronized: z.object({ kind: z.literal("synchronized") }),
};
export type ShellStreamItemV2 =
  { [K in keyof typeof shellItemByKind]: z.infer<(typeof shellItemByKind)[K]> }[keyof typeof shellItemByKind] | z.infer<typeof UnknownItem>;
export type ShellDeltaV2 = Exclude<ShellStreamItemV2, { kind: "snapshot" | "synchronized" | "unknown" }>;
export const ShellStreamItemV2Schema = byField<ShellStreamItemV2>("kind", shellItemByKind, UnknownItem);

/** Stream snapshots carry only `snapshotSequence` and `projection` at 006bb815; later builds add history fields. */
const historyFields = {
  historyCursor: z.string().nullable().optional(),
  hasMoreHistory: z.boolean().optional(),
  latestLocalTurnOrdinal: z.number().int().nullable().optional(),
};

export const ThreadDetailSnapshotV2 = z.object({ snapshotSequence: Sequence, projection: ThreadProjection, ...historyFields });
export type ThreadDetailSnapshotV2 = z.infer<typeof ThreadDetailSnapshotV2>;
export const ThreadBoundedSnapshotV2 = ThreadDetailSnapshotV2.extend({ payloadBudgetExceeded: z.boolean().optional() });

const threadItemByKind = {
  snapshot: z.object({ kind: z.literal("snapshot"), snapshotSequence: Sequence, projection: ThreadProjection, ...historyFields }),
  event: z.object({ kind: z.literal("event"), sequence: Sequence, event: DomainEventSchema }),
  synchronized: z.object({ kind: z.literal("synchronized") }),
};
export type ThreadStreamItemV2 =
  { [K in keyof typeof threadItemByKind]: z.infer<(typeof threadItemByKind)[K]> }[keyof typeof threadItemByKind] | z.infer<typeof UnknownItem>;
export const ThreadStreamItemV2Schema = byField<ThreadStreamItemV2>("kind", threadItemByKind, UnknownItem);

// ---------------------------------------------------------------- results and errors

export const DispatchResultV2 = z.object({ sequence: Sequence });

/**
 * What the fleet reads from `server.getConfig`: whether assistant text streams. With
 * `enableLegacyTokenStreaming` off (the default) a reply arrives whole when the provider turn ends.
 */
export const ServerConfigV2 = z.object({
  settings: z.object({ enableLegacyTokenStreaming: z.boolean().optional() }).optional(),
});
export type ServerConfigV2 = z.infer<typeof ServerConfigV2>;

/** The typed errors of protocol 2's orchestration methods (inside an Exit Failure `Fail`). */
export const V2RpcError = z.object({
  _tag: ServerText.label,
  message: ServerText.reason.optional(),
  commandId: z.string().optional(),
  commandType: ServerText.label.optional(),
  detail: ServerText.reason.optional(),
  threadId: z.string().optional(),
});
export type V2RpcError = z.infer<typeof V2RpcError>;
