// Protocol-1 simulator tests' threads and turns: a project and thread made in the engine, a client's
// turn start, and a wait on the engine's next matching event.
import { randomUUID } from "node:crypto";
import type { ClientCommand } from "../../shared/t3/protocol1/commands";
import type { WireEvent } from "./model";
import type { SimServer } from "./server";

export function makeThread(sim: SimServer, provider = "codex", threadId: string = `thread-${randomUUID().slice(0, 8)}`): string {
  const now = sim.engine.now();
  if (!sim.engine.projects.has("p1")) {
    sim.engine.dispatch({ type: "project.create", commandId: randomUUID(), projectId: "p1", title: "Repo", workspaceRoot: "/repo", createdAt: now });
  }
  sim.engine.dispatch({
    type: "thread.create",
    commandId: randomUUID(),
    threadId,
    projectId: "p1",
    title: "Fix login",
    modelSelection: { instanceId: provider, model: "m" },
    runtimeMode: "full-access",
    interactionMode: "default",
    branch: null,
    worktreePath: null,
    createdAt: now,
  });
  return threadId;
}

/** A client's thread.turn.start with fresh ids. */
export function turnStartCommand(threadId: string, text: string, commandId = `cmd-${randomUUID()}`): Extract<ClientCommand, { type: "thread.turn.start" }> {
  return {
    type: "thread.turn.start",
    commandId,
    threadId,
    message: { messageId: `msg-${randomUUID()}`, role: "user", text, attachments: [] },
    runtimeMode: "full-access",
    interactionMode: "default",
    createdAt: new Date().toISOString(),
  };
}

export function sendTurn(sim: SimServer, threadId: string, text: string, commandId?: string): number {
  return sim.engine.dispatch(turnStartCommand(threadId, text, commandId));
}

/** Resolves when the engine emits an event matching `match` (or one already matched since `from`). */
export function nextEvent(sim: SimServer, match: (event: WireEvent) => boolean): Promise<WireEvent> {
  return new Promise((resolve) => {
    const listener = (event: WireEvent) => {
      if (!match(event)) return;
      sim.engine.off("event", listener);
      resolve(event);
    };
    sim.engine.on("event", listener);
  });
}
