// Protocol-2 commands a fleet client sends with orchestration.dispatchCommand (docs/t3-protocols.md,
// "Protocol 2"). No `createdAt` anywhere: the server stamps time. The simulator decodes them with the
// same schemas, so both ends agree on the shape.
import { z } from "zod";
import { APPROVAL_DECISIONS, RUNTIME_MODES } from "./enums";

const Id = z.string().min(1);
const Trimmed = z.string().trim().min(1);
const ModelSelectionInput = z.object({
  instanceId: Id,
  model: z.string(),
  options: z.array(z.object({ id: z.string(), value: z.union([z.string(), z.boolean()]) })).optional(),
});
const creation = { createdBy: z.enum(["user", "agent", "system"]), creationSource: z.enum(["web", "mobile", "mcp", "provider", "server"]) };

export const DispatchMode = z.discriminatedUnion("type", [
  z.object({ type: z.literal("steer_active"), targetRunId: Id }),
  z.object({ type: z.literal("restart_active"), targetRunId: Id }),
  z.object({ type: z.literal("queue_after_active") }),
  z.object({ type: z.literal("start_immediately") }),
  z.object({ type: z.literal("defer_start") }),
]);
export type DispatchMode = z.infer<typeof DispatchMode>;

export const MessageDispatchCommand = z.object({
  type: z.literal("message.dispatch"),
  ...creation,
  commandId: Id,
  threadId: Id,
  messageId: Id,
  text: z.string(),
  attachments: z.array(z.unknown()),
  titleSeed: Trimmed.optional(),
  modelSelection: ModelSelectionInput.optional(),
  dispatchMode: DispatchMode,
});

/** A user-input answer: one string, several strings (multi-select), or null for a skipped optional question. */
export const UserInputAnswer = z.union([z.string(), z.array(z.string()), z.null()]);

export const RuntimeRequestRespondCommand = z.object({
  type: z.literal("runtime-request.respond"),
  commandId: Id,
  threadId: Id,
  requestId: Id,
  decision: z.enum(APPROVAL_DECISIONS).optional(),
  answers: z.record(z.string(), UserInputAnswer).optional(),
});

export const RunInterruptCommand = z.object({
  type: z.literal("run.interrupt"),
  commandId: Id,
  threadId: Id,
  runId: Id,
  reason: z.string().optional(),
});

export const QueuedRunCancelCommand = z.object({ type: z.literal("queued-run.cancel"), commandId: Id, threadId: Id, runId: Id });

const threadOnly = <T extends string>(type: T) => z.object({ type: z.literal(type), commandId: Id, threadId: Id });
export const ThreadArchiveCommand = threadOnly("thread.archive");
export const ThreadUnarchiveCommand = threadOnly("thread.unarchive");
export const ThreadDeleteCommand = threadOnly("thread.delete");
/** Marks the thread settled in T3's own UI (a direct thread command, like archive). */
export const ThreadSettleCommandV2 = threadOnly("thread.settle");
/** Puts the thread aside in T3's own UI until `snoozedUntil` (must be in the future; T3 refuses it while a request is pending). */
export const ThreadSnoozeCommandV2 = z.object({
  type: z.literal("thread.snooze"),
  commandId: Id,
  threadId: Id,
  snoozedUntil: z.iso.datetime({ offset: true }),
});

/** The reverse of the two above: T3's `reason` from a client is always "user" (activity wakes are the server's own). */
export const ThreadUnsettleCommandV2 = z.object({ type: z.literal("thread.unsettle"), commandId: Id, threadId: Id, reason: z.literal("user") });
export const ThreadUnsnoozeCommandV2 = z.object({ type: z.literal("thread.unsnooze"), commandId: Id, threadId: Id, reason: z.literal("user") });

export const ThreadCreateCommandV2 = z.object({
  type: z.literal("thread.create"),
  ...creation,
  commandId: Id,
  threadId: Id,
  projectId: Id,
  title: Trimmed,
  modelSelection: ModelSelectionInput,
  runtimeMode: z.enum(RUNTIME_MODES),
  interactionMode: z.enum(["default", "plan"]),
  branch: Trimmed.nullable(),
  worktreePath: Trimmed.nullable(),
});

export const ThreadMetadataUpdateCommand = z.object({
  type: z.literal("thread.metadata.update"),
  commandId: Id,
  threadId: Id,
  title: Trimmed.optional(),
  branch: Trimmed.nullable().optional(),
  worktreePath: Trimmed.nullable().optional(),
});

export const ClientCommandV2 = z.discriminatedUnion("type", [
  MessageDispatchCommand,
  RuntimeRequestRespondCommand,
  RunInterruptCommand,
  QueuedRunCancelCommand,
  ThreadArchiveCommand,
  ThreadUnarchiveCommand,
  ThreadDeleteCommand,
  ThreadSettleCommandV2,
  ThreadSnoozeCommandV2,
  ThreadUnsettleCommandV2,
  ThreadUnsnoozeCommandV2,
  ThreadCreateCommandV2,
  ThreadMetadataUpdateCommand,
]);
export type ClientCommandV2 = z.infer<typeof ClientCommandV2>;
export type MessageDispatchCommand = z.infer<typeof MessageDispatchCommand>;
export type RuntimeRequestRespondCommand = z.infer<typeof RuntimeRequestRespondCommand>;
