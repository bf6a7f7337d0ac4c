// The neutral agent commands (electron/fleet/t3/adapter.ts) as protocol 2's client commands
// (shared/t3/protocol2/commands.ts), or a refusal saying why protocol 2 cannot carry one out; and a
// new project, which protocol 2 takes through `projects.mutate`, not the dispatch API.
import { z } from "zod";
import { decodeWith } from "../../../../shared/t3/decode";
import { T3Error } from "../../../../shared/t3/errors";
import type { ClientCommandV2 } from "../../../../shared/t3/protocol2/commands";
import type { AgentCommand, CommandReceipt } from "../adapter";
import type { RpcSocket } from "../rpc-socket";

/** `projects.mutate`'s answer: the project as T3 stored it (../shared/fixtures/t3-v2dev/01-create-project-thread.json). */
const CreatedProject = z.object({ id: z.string().min(1), workspaceRoot: z.string() });

/**
 * `project.create` as T3's V2 engine took it from its own client (the same recording). Its answer is
 * the project, not a sequence: the receipt's sequence is 0, which no thread's applied sequence is compared with.
 */
export async function createProject(
  socket: Pick<RpcSocket, "call">,
  command: Extract<AgentCommand, { type: "create-project" }>,
  timeoutMs?: number,
): Promise<CommandReceipt> {
  const { commandId, projectId, title, workspaceRoot, createIfMissing } = command;
  let value: unknown;
  try {
    value = await socket.call(
      "projects.mutate",
      { type: "project.create", commandId, projectId, title, workspaceRoot, createWorkspaceRootIfMissing: createIfMissing },
      timeoutMs,
    );
  } catch (error) {
    throw error instanceof T3Error ? error : new T3Error("server", String(error));
  }
  const decoded = decodeWith(CreatedProject, value, "project.create result");
  if (!decoded.ok) throw T3Error.decode(decoded.error);
  if (decoded.value.id !== projectId) throw new T3Error("server", `T3 answered the new project with another project's id (${decoded.value.id}).`);
  return { sequence: 0 };
}

/** `activeRunOf`: the thread's active run, for an interrupt that does not name one. */
export function wireCommand(command: AgentCommand, activeRunOf: (threadId: string) => string | null): ClientCommandV2 {
  const refuse = (message: string): never => {
    throw new T3Error("rejected", message, { reason: "unsupported_command" });
  };
  switch (command.type) {
    case "send": {
      if (command.mode === "steer" && !command.runId) refuse("Steering needs the id of the active run.");
      return {
        type: "message.dispatch",
        createdBy: "user",
        creationSource: "web",
        commandId: command.commandId,
        threadId: command.threadId,
        messageId: command.messageId,
        text: command.text,
        attachments: [],
        // "start" also uses queue_after_active: if a run began meanwhile, the message queues instead of failing.
        dispatchMode: command.mode === "steer" ? { type: "steer_active", targetRunId: command.runId! } : { type: "queue_after_active" },
      };
    }
    case "respond-approval":
      return {
        type: "runtime-request.respond",
        commandId: command.commandId,
        threadId: command.threadId,
        requestId: command.requestId,
        decision: command.decision,
      };
    case "respond-input":
      return {
        type: "runtime-request.respond",
        commandId: command.commandId,
        threadId: command.threadId,
        requestId: command.requestId,
        answers: command.answers,
      };
    case "interrupt": {
      const runId = command.runId ?? activeRunOf(command.threadId);
      if (!runId) refuse("No run is active on this thread.");
      return { type: "run.interrupt", commandId: command.commandId, threadId: command.threadId, runId: runId! };
    }
    case "cancel-queued":
      return { type: "queued-run.cancel", commandId: command.commandId, threadId: command.threadId, runId: command.runId };
    case "settle":
      return { type: "thread.settle", commandId: command.commandId, threadId: command.threadId };
    case "snooze":
      return { type: "thread.snooze", commandId: command.commandId, threadId: command.threadId, snoozedUntil: command.until };
    case "unsettle":
      return { type: "thread.unsettle", commandId: command.commandId, threadId: command.threadId, reason: "user" };
    case "unsnooze":
      return { type: "thread.unsnooze", commandId: command.commandId, threadId: command.threadId, reason: "user" };
    case "stop":
      return refuse("Protocol 2 has no session stop; interrupt the run instead.");
    case "create-project":
      return refuse("A project is created through projects.mutate, not the dispatch API.");
    case "create-thread":
      // As T3's V2 engine took it from its own UI (../shared/fixtures/t3-v2dev/01-create-project-thread.json).
      return {
        type: "thread.create",
        createdBy: "user",
        creationSource: "web",
        commandId: command.commandId,
        threadId: command.threadId,
        projectId: command.projectId,
        title: command.title,
        modelSelection: { instanceId: command.instanceId, model: command.model },
        runtimeMode: command.runtimeMode,
        interactionMode: "default",
        branch: null,
        worktreePath: null,
      };
  }
}
