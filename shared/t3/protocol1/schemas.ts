// Wire schemas of T3's orchestration protocol 1 (docs/t3-protocols.md): the shell, threads, events,
// stream items and dispatch results. What every protocol shares (descriptor, auth, error bodies,
// model selection, project rows) is in shared/t3/schemas.ts, with the same decoding rules.
import { z } from "zod";
import { EnvironmentDescriptor, ModelSelection, ProjectShell, ReportedCount, openEnum } from "../schemas";
import { lenientList } from "../decode";
import { ServerText } from "../text";
import { ChangedFileWire, FileTotalsField, capCheckpointFiles } from "../turn-files";

const Id = z.string().min(1);
const IsoTime = z.string();
const Sequence = z.number().int().nonnegative();
const JsonRecord = z.record(z.string(), z.unknown());

// ---------------------------------------------------------------- read model

export const SESSION_STATUSES = ["idle", "starting", "running", "ready", "interrupted", "stopped", "error"] as const;
export const TURN_STATES = ["running", "interrupted", "completed", "error"] as const;
export const RUNTIME_MODES = ["approval-required", "auto-accept-edits", "auto", "full-access"] as const;

export const ThreadSession = z.object({
  threadId: Id,
  status: openEnum(SESSION_STATUSES),
  providerName: ServerText.label.nullable().optional(),
  providerInstanceId: ServerText.label.nullable().optional(),
  runtimeMode: openEnum(RUNTIME_MODES).optional(),
  activeTurnId: z.string().nullable(),
  lastError: ServerText.reason.nullable(),
  updatedAt: IsoTime,
});
export type ThreadSession = z.infer<typeof ThreadSession>;

export const LatestTurn = z.object({
  turnId: Id,
  state: openEnum(TURN_STATES),
  requestedAt: IsoTime,
  startedAt: IsoTime.nullable(),
  completedAt: IsoTime.nullable(),
  assistantMessageId: z.string().nullable(),
  sourceProposedPlan: z.object({ threadId: z.string(), planId: z.string() }).optional(),
});
export type LatestTurn = z.infer<typeof LatestTurn>;

/** Fields common to the shell row and the full thread. */
const threadHeader = {
  id: Id,
  projectId: Id,
  title: ServerText.title,
  modelSelection: ModelSelection,
  runtimeMode: openEnum(RUNTIME_MODES),
  interactionMode: openEnum(["default", "plan"]),
  branch: ServerText.label.nullable(),
  worktreePath: ServerText.path.nullable(),
  latestTurn: LatestTurn.nullable(),
  createdAt: IsoTime,
  updatedAt: IsoTime,
  archivedAt: IsoTime.nullable().optional(),
  deletedAt: IsoTime.nullable().optional(),
  session: ThreadSession.nullable(),
  // upstream additions
  settledOverride: openEnum(["settled", "active"]).nullable().optional(),
  snoozedUntil: IsoTime.nullable().optional(),
  pinnedAt: IsoTime.nullable().optional(),
};

export const ThreadShell = z.object({
  ...threadHeader,
  latestUserMessageAt: IsoTime.nullable().optional(),
  hasPendingApprovals: z.boolean(),
  hasPendingUserInput: z.boolean(),
  hasActionableProposedPlan: z.boolean().optional(),
  backgroundLiveness: openEnum(["working", "monitoring"]).nullable().optional(),
  planProgress: z.object({ step: ServerText.reason.nullable().optional(), completedSteps: ReportedCount, totalSteps: ReportedCount }).nullable().optional(),
});
export type ThreadShell = z.infer<typeof ThreadShell>;

export const ShellSnapshot = z.object({
  snapshotSequence: Sequence,
  projects: z.array(ProjectShell),
  /** A row that does not decode is left out and reported (shared/t3/decode.ts), never the snapshot. */
  threads: lenientList(ThreadShell, "shell row"),
  updatedAt: IsoTime.optional(),
});
export type ShellSnapshot = z.infer<typeof ShellSnapshot>;

export const Attachment = z.object({
  type: z.string(),
  id: z.string().optional(),
  name: ServerText.title,
  mimeType: ServerText.label,
  sizeBytes: ReportedCount,
});

export const ThreadMessage = z.object({
  id: Id,
  role: openEnum(["user", "assistant", "system"]),
  text: ServerText.body,
  attachments: z.array(Attachment).optional(),
  turnId: z.string().nullable(),
  streaming: z.boolean(),
  createdAt: IsoTime,
  updatedAt: IsoTime,
});
export type ThreadMessage = z.infer<typeof ThreadMessage>;

export const ThreadActivity = z.object({
  id: Id,
  tone: openEnum(["info", "tool", "approval", "error"]),
  kind: ServerText.label,
  summary: ServerText.reason,
  payload: z.unknown(),
  turnId: z.string().nullable(),
  /** An ordering hint among activities: one that is no count is left out, the activity kept. */
  sequence: z.number().int().nonnegative().optional().catch(undefined),
  createdAt: IsoTime,
});
export type ThreadActivity = z.infer<typeof ThreadActivity>;

const CheckpointFields = z.object({
  turnId: Id,
  /** The turn a diff is read by: an exact count, or the checkpoint is not the turn's. */
  checkpointTurnCount: z.number().int().nonnegative(),
  checkpointRef: z.string(),
  status: openEnum(["ready", "missing", "error"]),
  /** At most TURN_FILES_KEPT, the whole list's counts in `fileTotals` (shared/t3/turn-files.ts). */
  files: z.array(ChangedFileWire),
  fileTotals: FileTotalsField,
  assistantMessageId: z.string().nullable(),
  completedAt: IsoTime,
});
export const Checkpoint = z.preprocess(capCheckpointFiles, CheckpointFields);
export type Checkpoint = z.infer<typeof Checkpoint>;

export const ProposedPlan = z.object({
  id: Id,
  turnId: z.string().nullable(),
  planMarkdown: ServerText.body,
  implementedAt: IsoTime.nullable().optional(),
  implementationThreadId: z.string().nullable().optional(),
  createdAt: IsoTime,
  updatedAt: IsoTime,
});
export type ProposedPlan = z.infer<typeof ProposedPlan>;

export const OrchestrationThread = z.object({
  ...threadHeader,
  // Each message, plan, activity and checkpoint is a thing of its own: one that does not decode is left out and reported, never the thread.
  messages: lenientList(ThreadMessage, "thread message"),
  proposedPlans: lenientList(ProposedPlan, "proposed plan"),
  activities: lenientList(ThreadActivity, "thread activity"),
  checkpoints: lenientList(Checkpoint, "checkpoint"),
});
export type OrchestrationThread = z.infer<typeof OrchestrationThread>;

export const ThreadDetailSnapshot = z.object({
  snapshotSequence: Sequence,
  thread: OrchestrationThread,
  page: z.object({ beforeCursor: z.string().nullable(), hasMore: z.boolean(), snapshotSequence: Sequence.optional() }).optional(),
});
export type ThreadDetailSnapshot = z.infer<typeof ThreadDetailSnapshot>;

/** GET /api/orchestration/snapshot: the full read model (includes archived and deleted rows). */
export const ReadModelSnapshot = z.object({
  snapshotSequence: Sequence,
  projects: z.array(ProjectShell),
  threads: z.array(OrchestrationThread),
  updatedAt: IsoTime.optional(),
});
export type ReadModelSnapshot = z.infer<typeof ReadModelSnapshot>;

// ---------------------------------------------------------------- events

const MessageSentPayload = ThreadMessage.omit({ id: true }).extend({ threadId: Id, messageId: Id });
const eventPayloads = {
  "thread.message-sent": MessageSentPayload,
  "thread.session-set": z.object({ threadId: Id, session: ThreadSession }),
  "thread.activity-appended": z.object({ threadId: Id, activity: ThreadActivity }),
  "thread.turn-diff-completed": z.preprocess(capCheckpointFiles, CheckpointFields.extend({ threadId: Id })),
  "thread.reverted": z.object({ threadId: Id, turnCount: z.number().int().nonnegative() }),
  "thread.proposed-plan-upserted": z.object({ threadId: Id, proposedPlan: ProposedPlan }),
} as const;
type EventPayloads = { [K in keyof typeof eventPayloads]: z.infer<(typeof eventPayloads)[K]> };

const EventEnvelope = z.object({
  sequence: Sequence,
  eventId: Id,
  aggregateKind: openEnum(["project", "thread"]),
  aggregateId: Id,
  type: z.string().min(1),
  occurredAt: IsoTime,
  commandId: z.string().nullable(),
  causationEventId: z.string().nullable().optional(),
  correlationId: z.string().nullable().optional(),
  metadata: JsonRecord.optional(),
  payload: z.unknown(),
});
type EventEnvelope = Omit<z.infer<typeof EventEnvelope>, "payload" | "type">;

/** A decoded event: the six types a thread stream forwards are typed; any other type is kept raw. */
export type OrchestrationEvent =
  | { [K in keyof EventPayloads]: EventEnvelope & { type: K; known: true; payload: EventPayloads[K] } }[keyof EventPayloads]
  | (EventEnvelope & { type: string; known: false; payload: unknown });

function isKnownEventType(type: string): type is keyof typeof eventPayloads {
  return Object.hasOwn(eventPayloads, type);
}

export const OrchestrationEventSchema = EventEnvelope.transform((envelope, ctx): OrchestrationEvent => {
  if (!isKnownEventType(envelope.type)) return { ...envelope, known: false };
  const decoded = eventPayloads[envelope.type].safeParse(envelope.payload);
  if (!decoded.success) {
    for (const issue of decoded.error.issues) {
      ctx.addIssue({ code: "custom", message: issue.message, path: ["payload", ...issue.path] });
    }
    return z.NEVER;
  }
  return { ...envelope, known: true, payload: decoded.data } as OrchestrationEvent;
});

// ---------------------------------------------------------------- stream items

const UnknownItem = z.object({ kind: z.string() }).transform((item) => ({ kind: "unknown" as const, rawKind: item.kind }));

const shellItemByKind = {
  snapshot: z.object({ kind: z.literal("snapshot"), snapshot: ShellSnapshot }),
  "project-upserted": z.object({ kind: z.literal("project-upserted"), sequence: Sequence, project: ProjectShell }),
  "project-removed": z.object({ kind: z.literal("project-removed"), sequence: Sequence, projectId: Id }),
  "thread-upserted": z.object({ kind: z.literal("thread-upserted"), sequence: Sequence, thread: ThreadShell }),
  "thread-removed": z.object({ kind: z.literal("thread-removed"), sequence: Sequence, threadId: Id }),
  synchronized: z.object({ kind: z.literal("synchronized") }),
};
export type ShellStreamItem =
  { [K in keyof typeof shellItemByKind]: z.infer<(typeof shellItemByKind)[K]> }[keyof typeof shellItemByKind] | z.infer<typeof UnknownItem>;

const threadItemByKind = {
  snapshot: z.object({ kind: z.literal("snapshot"), snapshot: ThreadDetailSnapshot }),
  event: z.object({ kind: z.literal("event"), event: OrchestrationEventSchema }),
  synchronized: z.object({ kind: z.literal("synchronized") }),
};
/** A shell change newer than a snapshot: what a subscription delivers after the first snapshot. */
export type ShellDelta = Exclude<ShellStreamItem, { kind: "snapshot" | "synchronized" | "unknown" }>;

export type ThreadStreamItem =
  { [K in keyof typeof threadItemByKind]: z.infer<(typeof threadItemByKind)[K]> }[keyof typeof threadItemByKind] | z.infer<typeof UnknownItem>;

/** Items are dispatched on `kind`; a kind this client does not know is kept as "unknown", not an error. */
function itemByKind<T>(byKind: Record<string, z.ZodType>) {
  return z.unknown().transform((raw, ctx): T => {
    const kind = typeof raw === "object" && raw !== null ? (raw as { kind?: unknown }).kind : undefined;
    const schema = typeof kind === "string" && Object.hasOwn(byKind, kind) ? byKind[kind] : UnknownItem;
    const decoded = schema!.safeParse(raw);
    if (!decoded.success) {
      for (const issue of decoded.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
      return z.NEVER;
    }
    return decoded.data as T;
  });
}

export const ShellStreamItemSchema = itemByKind<ShellStreamItem>(shellItemByKind);
export const ThreadStreamItemSchema = itemByKind<ThreadStreamItem>(threadItemByKind);

// ---------------------------------------------------------------- dispatch

export const DispatchResult = z.object({ sequence: Sequence });
export type DispatchResult = z.infer<typeof DispatchResult>;

/** Subset of server.getConfig that a fleet client uses. */
export const ServerConfigSummary = z.object({
  environment: EnvironmentDescriptor,
  shellResumeCompletionMarker: z.boolean().optional(),
  threadResumeCompletionMarker: z.boolean().optional(),
});
export type ServerConfigSummary = z.infer<typeof ServerConfigSummary>;
