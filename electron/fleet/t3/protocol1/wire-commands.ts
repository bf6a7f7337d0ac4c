// Protocol 1's wire form of the fleet's neutral commands (AgentCommand): what the dispatch API takes
// from a client, as T3 0.0.42 decodes it (shared/t3/protocol1/commands.ts).
import type { ClientCommand, ThreadSettleCommand } from "../../../../shared/t3/protocol1/commands";
import type { ThreadShell } from "../../../../shared/t3/protocol1/schemas";
import { T3Error } from "../../../../shared/t3/errors";
import type { AgentCommand } from "../adapter";

/** The modes a thread's last row named: a turn started from the fleet keeps them. */
export interface RowModes {
  runtimeMode: ThreadShell["runtimeMode"];
  interactionMode: ThreadShell["interactionMode"];
}

/** The wire command; throws a refusal (T3Error "rejected") for what protocol 1 cannot do. */
export function wireCommand(command: AgentCommand, rowOf: (threadId: string) => RowModes | undefined): ClientCommand | ThreadSettleCommand {
  const createdAt = new Date().toISOString();
  if (command.type === "create-project") {
    const { commandId, projectId, title, workspaceRoot, createIfMissing } = command;
    return { type: "project.create", commandId, projectId, title, workspaceRoot, createWorkspaceRootIfMissing: createIfMissing, createdAt };
  }
  const { commandId, threadId } = command;
  switch (command.type) {
    case "send": {
      // Protocol 1 has one way to send: T3 steers or starts a new turn by provider (the agent's capabilities say which).
      const row = rowOf(threadId);
      return {
        type: "thread.turn.start",
        commandId,
        threadId,
        message: { messageId: command.messageId, role: "user", text: command.text, attachments: [] },
        runtimeMode: !row || row.runtimeMode === "unknown" ? "full-access" : row.runtimeMode,
        interactionMode: !row || row.interactionMode === "unknown" ? "default" : row.interactionMode,
        createdAt,
      };
    }
    case "respond-approval": {
      if (command.decision === "acceptAlways") throw new T3Error("rejected", "This T3 version offers no 'accept always'.");
      return { type: "thread.approval.respond", commandId, threadId, requestId: command.requestId, decision: command.decision, createdAt };
    }
    case "respond-input":
      return { type: "thread.user-input.respond", commandId, threadId, requestId: command.requestId, answers: command.answers, createdAt };
    case "interrupt":
      return { type: "thread.turn.interrupt", commandId, threadId, ...(command.runId && { turnId: command.runId }), createdAt };
    case "stop":
      return { type: "thread.session.stop", commandId, threadId, createdAt };
    case "cancel-queued":
      throw new T3Error("rejected", "This T3 version has no queued turns to cancel.");
    case "settle":
      // Upstream protocol-1 servers that advertise threadSettlement accept it (docs/t3-protocols.md, "Commands").
      return { type: "thread.settle", commandId, threadId };
    case "snooze":
      // Likewise for servers that advertise threadSnooze; T3 wakes the thread itself at that time or on new activity.
      return { type: "thread.snooze", commandId, threadId, snoozedUntil: command.until };
    case "unsettle":
      return { type: "thread.unsettle", commandId, threadId, reason: "user" };
    case "unsnooze":
      return { type: "thread.unsnooze", commandId, threadId, reason: "user" };
    case "create-thread":
      return {
        type: "thread.create",
        commandId,
        threadId,
        projectId: command.projectId,
        title: command.title,
        modelSelection: { instanceId: command.instanceId, model: command.model },
        runtimeMode: command.runtimeMode,
        interactionMode: "default",
        branch: null,
        worktreePath: null,
        createdAt,
      };
  }
}
