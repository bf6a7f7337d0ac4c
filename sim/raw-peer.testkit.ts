// A raw Effect-RPC peer for simulator tests: sends exactly the frames a test asks for (no automatic
// Acks), records every frame received, and resolves waits on arrival of frames, not on timers.
import { randomUUID } from "node:crypto";
import { WebSocket } from "ws";
import type { ClientCommand } from "../shared/t3/protocol1/commands";
import type { WireEvent } from "./engine";
import type { SimServer } from "./server";

export type Frame = { _tag: string; requestId?: string; values?: unknown[]; exit?: { _tag: string; value?: unknown; cause?: unknown[] }; defect?: unknown };

export class RawPeer {
  readonly frames: Frame[] = [];
  private waiters: { check: () => boolean; resolve: () => void }[] = [];
  private nextId = 1;

  private constructor(private readonly ws: WebSocket) {
    ws.on("message", (data) => {
      this.frames.push(JSON.parse(data.toString()) as Frame);
      this.waiters = this.waiters.filter((waiter) => (waiter.check() ? (waiter.resolve(), false) : true));
    });
  }

  /** Connects with a fresh bearer session of the given scopes (bearer header on the upgrade). */
  static async connect(sim: SimServer, scopes = ["orchestration:read", "orchestration:operate"]): Promise<RawPeer> {
    const session = sim.auth.issueSession({ scopes, role: "client", label: "raw" });
    const ws = new WebSocket(`${sim.baseUrl.replace("http", "ws")}/ws`, { headers: { authorization: `Bearer ${session.token}` } });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    return new RawPeer(ws);
  }

  send(frame: unknown): void {
    this.ws.send(JSON.stringify(frame));
  }

  request(tag: string, payload: unknown): string {
    const id = String(this.nextId++);
    this.send({ _tag: "Request", id, tag, payload, headers: [] });
    return id;
  }

  ack(requestId: string): void {
    this.send({ _tag: "Ack", requestId });
  }

  until(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ check, resolve }));
  }

  /** Round-trips a Ping: every frame the server sent before answering it has arrived once this resolves. */
  async barrier(): Promise<void> {
    const pongs = this.frames.filter((frame) => frame._tag === "Pong").length;
    this.send({ _tag: "Ping" });
    await this.until(() => this.frames.filter((frame) => frame._tag === "Pong").length > pongs);
  }

  chunks(requestId: string): Frame[] {
    return this.frames.filter((frame) => frame._tag === "Chunk" && frame.requestId === requestId);
  }

  values(requestId: string): Record<string, unknown>[] {
    return this.chunks(requestId).flatMap((chunk) => chunk.values as Record<string, unknown>[]);
  }

  exit(requestId: string): Frame | undefined {
    return this.frames.find((frame) => frame._tag === "Exit" && frame.requestId === requestId);
  }

  async call(tag: string, payload: unknown): Promise<Frame> {
    const id = this.request(tag, payload);
    await this.until(() => this.exit(id) !== undefined);
    return this.exit(id)!;
  }

  close(): void {
    this.ws.close();
  }
}

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
