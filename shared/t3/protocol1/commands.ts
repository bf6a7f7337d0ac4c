// Client orchestration commands (docs/t3-protocols.md, "Commands"). The fleet client builds them; the simulator
// decodes them with the same schemas, so both ends agree on the shape.
import { z } from "zod";

const Id = z.string().min(1);
const IsoTime = z.string();
const RuntimeMode = z.enum(["approval-required", "auto-accept-edits", "auto", "full-access"]);
const InteractionMode = z.enum(["default", "plan"]);
const ModelSelectionInput = z.object({
  instanceId: Id,
  model: z.string(),
  options: z.array(z.object({ id: z.string(), value: z.union([z.string(), z.boolean()]) })).optional(),
});

const base = { commandId: Id };

export const ThreadCreateCommand = z.object({
  type: z.literal("thread.create"),
  ...base,
  threadId: Id,
  projectId: Id,
  title: z.string(),
  modelSelection: ModelSelectionInput,
  runtimeMode: RuntimeMode,
  interactionMode: InteractionMode.default("default"),
  branch: z.string().nullable(),
  worktreePath: z.string().nullable(),
  createdAt: IsoTime,
});

export const TurnStartCommand = z.object({
  type: z.literal("thread.turn.start"),
  ...base,
  threadId: Id,
  message: z.object({
    messageId: Id,
    role: z.literal("user"),
    text: z.string(),
    attachments: z.array(z.unknown()),
  }),
  modelSelection: ModelSelectionInput.optional(),
  titleSeed: z.string().optional(),
  runtimeMode: RuntimeMode,
  interactionMode: InteractionMode,
  createdAt: IsoTime,
});

export const TurnInterruptCommand = z.object({
  type: z.literal("thread.turn.interrupt"),
  ...base,
  threadId: Id,
  turnId: z.string().optional(),
  createdAt: IsoTime,
});

export const ApprovalDecision = z.enum(["accept", "acceptForSession", "decline", "cancel"]);
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

export const ApprovalRespondCommand = z.object({
  type: z.literal("thread.approval.respond"),
  ...base,
  threadId: Id,
  requestId: Id,
  decision: ApprovalDecision,
  createdAt: IsoTime,
});

export const UserInputRespondCommand = z.object({
  type: z.literal("thread.user-input.respond"),
  ...base,
  threadId: Id,
  requestId: Id,
  answers: z.record(z.string(), z.unknown()),
  createdAt: IsoTime,
});

export const SessionStopCommand = z.object({
  type: z.literal("thread.session.stop"),
  ...base,
  threadId: Id,
  createdAt: IsoTime,
});

export const ProjectCreateCommand = z.object({
  type: z.literal("project.create"),
  ...base,
  projectId: Id,
  title: z.string(),
  workspaceRoot: z.string().min(1),
  createWorkspaceRootIfMissing: z.boolean().optional(),
  defaultModelSelection: ModelSelectionInput.nullable().optional(),
  createdAt: IsoTime,
});

export const ThreadMetaUpdateCommand = z.object({
  type: z.literal("thread.meta.update"),
  ...base,
  threadId: Id,
  title: z.string().optional(),
  modelSelection: ModelSelectionInput.optional(),
});

export const ThreadArchiveCommand = z.object({ type: z.literal("thread.archive"), ...base, threadId: Id });
export const ThreadDeleteCommand = z.object({ type: z.literal("thread.delete"), ...base, threadId: Id });
/** Upstream servers advertising `capabilities.threadSettlement` (docs/t3-protocols.md, "Commands"): marks a thread settled in T3's own UI. */
export const ThreadSettleCommand = z.object({ type: z.literal("thread.settle"), ...base, threadId: Id });
export type ThreadSettleCommand = z.input<typeof ThreadSettleCommand>;
/** Upstream servers advertising `capabilities.threadSnooze`: puts a thread aside in T3's own UI until a time in the future. */
export const ThreadSnoozeCommand = z.object({ type: z.literal("thread.snooze"), ...base, threadId: Id, snoozedUntil: IsoTime });
export type ThreadSnoozeCommand = z.input<typeof ThreadSnoozeCommand>;
/** The reverse of the two above, on the same servers: a thread the user brings back (T3's `reason` from a client is always "user"). */
export const ThreadUnsettleCommand = z.object({ type: z.literal("thread.unsettle"), ...base, threadId: Id, reason: z.literal("user") });
export const ThreadUnsnoozeCommand = z.object({ type: z.literal("thread.unsnooze"), ...base, threadId: Id, reason: z.literal("user") });

export const ClientCommand = z.discriminatedUnion("type", [
  ThreadCreateCommand,
  TurnStartCommand,
  TurnInterruptCommand,
  ApprovalRespondCommand,
  UserInputRespondCommand,
  SessionStopCommand,
  ProjectCreateCommand,
  ThreadMetaUpdateCommand,
  ThreadArchiveCommand,
  ThreadDeleteCommand,
  ThreadSettleCommand,
  ThreadSnoozeCommand,
  ThreadUnsettleCommand,
  ThreadUnsnoozeCommand,
]);
/** What a client sends (defaults may be omitted). */
export type ClientCommand = z.input<typeof ClientCommand>;
/** What a server sees after decoding. */
export type DecodedClientCommand = z.output<typeof ClientCommand>;
