// The two commands that set a thread's lineage on a simulated protocol-2 server (t3-protocol.md §16.9),
// as T3's UI and agents send them over the socket: `thread.fork` and `delegated_task.request`. The
// fleet sends neither, so they are not in its command schema (shared/t3/protocol2/commands.ts).
// A delegated task is played as T3's V2 engine did in the withdrawn real-engine suite
// (integration/realt3/fleet.v2.real.test.ts, commit 5f8c64f): a subagent row and item on the
// parent's running run, and a child thread with lineage "subagent" that the shell leaves out.
import { z } from "zod";
import { DispatchError, type EngineCore, type StoredEvent, type ThreadState } from "./engine-types";
import type { Run, Subagent, TurnItem } from "./model";
import { TERMINAL_RUN_STATUSES } from "./model";
import { forkThread } from "./seed";

const Id = z.string().min(1);
const Creation = { createdBy: z.enum(["user", "agent", "system"]), creationSource: z.string() };

export const LineageCommand = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("thread.fork"),
    commandId: Id,
    sourceThreadId: Id,
    targetThreadId: Id,
    sourcePoint: z.object({ type: z.enum(["latest_stable", "run", "checkpoint"]) }).passthrough(),
    title: z.string().optional(),
    ...Creation,
  }),
  z.object({
    type: z.literal("delegated_task.request"),
    commandId: Id,
    parentThreadId: Id,
    parentRunId: Id,
    parentNodeId: Id,
    task: z.string().min(1),
    title: z.string().optional(),
    modelSelection: z.object({ instanceId: Id, model: Id }),
    runtimeMode: z.string(),
    interactionMode: z.string(),
    ...Creation,
  }),
]);
export type LineageCommand = z.infer<typeof LineageCommand>;

/** What the lineage commands need of the engine: its core, and the threads its shell leaves out. */
export interface LineageEngine extends EngineCore {
  readonly outsideShell: Set<string>;
}

/** The command ids each engine applied: one sent again changes nothing, as T3's receipts do. */
const applied = new WeakMap<LineageEngine, Set<string>>();

/** Applies a lineage command; a refusal is a DispatchError, as any command's. */
export function applyLineageCommand(engine: LineageEngine, command: LineageCommand): void {
  const seen = applied.get(engine) ?? new Set<string>();
  applied.set(engine, seen);
  if (seen.has(command.commandId)) return;
  apply(engine, command);
  seen.add(command.commandId);
}

function apply(engine: LineageEngine, command: LineageCommand): void {
  if (command.type === "thread.fork") {
    if (engine.threads.has(command.targetThreadId))
      throw new DispatchError(command.commandId, command.type, `Thread '${command.targetThreadId}' already exists.`);
    forkThread(engine, command.sourceThreadId, command.title ?? "Fork", command.targetThreadId);
    return;
  }
  delegate(engine, command);
}

function delegate(engine: LineageEngine, command: Extract<LineageCommand, { type: "delegated_task.request" }>): void {
  const parent = engine.requireThread(command.parentThreadId, command.type, command.commandId);
  const runner = parent.runner;
  // Contract only: a delegated task needs a live parent run and node (t3-protocol.md §16.9).
  if (!runner || runner.run.id !== command.parentRunId || runner.run.rootNodeId !== command.parentNodeId)
    throw new DispatchError(command.commandId, command.type, `Run ${command.parentRunId} is not active.`);
  // The ids the engine gave the task it was sent (the recorded item: shared/t3/protocol2/schemas.test.ts).
  const subagentId = `node:delegated-task:${command.commandId}`;
  const childThreadId = `thread:delegated-task:${command.commandId}`;
  engine.outsideShell.add(childThreadId);
  const child = engine.createThread({
    threadId: childThreadId,
    projectId: parent.thread.projectId,
    title: command.title ?? "Delegated task",
    provider: parent.provider,
    parent: { threadId: parent.thread.id, relationship: "subagent" },
    createdBy: "agent",
    creationSource: "mcp",
  });
  const now = engine.now();
  const run = runner.run;
  const subagent: Subagent = {
    id: subagentId,
    threadId: parent.thread.id,
    runId: run.id,
    parentNodeId: command.parentNodeId,
    origin: "app_owned",
    createdBy: "agent",
    driver: parent.provider,
    providerInstanceId: parent.thread.providerInstanceId,
    providerThreadId: null,
    childThreadId,
    nativeTaskRef: null,
    prompt: command.task,
    title: command.title ?? null,
    model: command.modelSelection.model,
    status: "running",
    result: null,
    startedAt: now,
    completedAt: null,
    updatedAt: now,
  };
  const item: TurnItem = {
    ...engine.newItem(parent, run, "running", command.title ?? null, { id: `turn-item:delegated-task:${command.commandId}`, nodeId: subagentId }),
    type: "subagent",
    subagentId,
    origin: "app_owned",
    driver: parent.provider,
    providerInstanceId: parent.thread.providerInstanceId,
    childThreadId,
    prompt: command.task,
    result: null,
  };
  engine.putSubagent(parent, subagent);
  engine.putItem(parent, item);
  followChild(engine, parent, child, subagent, item);
  engine.dispatch({
    type: "message.dispatch",
    createdBy: "agent",
    creationSource: "mcp",
    commandId: `delegate:${command.commandId}`,
    threadId: childThreadId,
    messageId: `message-${command.commandId}`,
    text: command.task,
    attachments: [],
    dispatchMode: { type: "start_immediately" },
  });
}

/** The subagent ends with its child thread's run, with the child's last answer as its result. */
function followChild(engine: LineageEngine, parent: ThreadState, child: ThreadState, subagent: Subagent, item: TurnItem): void {
  const onEvent = (stored: StoredEvent) => {
    if (stored.event.threadId !== child.thread.id || (stored.event.type !== "run.updated" && stored.event.type !== "run.created")) return;
    const childRun = stored.event.payload as Run;
    if (!TERMINAL_RUN_STATUSES.has(childRun.status)) return;
    engine.off("event", onEvent);
    const result = [...child.messages].reverse().find((message) => message.role === "assistant")?.text ?? null;
    const status = childRun.status === "completed" ? "completed" : "failed";
    const completedAt = engine.now();
    engine.putSubagent(parent, { ...subagent, status, result, completedAt });
    engine.putItem(parent, { ...item, status, completedAt, ...(item.type === "subagent" && { result }) } as TurnItem);
  };
  engine.on("event", onEvent);
}
