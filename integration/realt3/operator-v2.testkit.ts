// The test's own client of T3's V2 engine, standing in for T3's web UI on the server's machine: it
// creates projects and threads, starts, forks and delegates runs over the protocol-2 socket, and
// reads back what the engine stored. Its commands are raw JSON as T3's UI sends them (the shapes
// of the recorded sessions); it keeps no state, so it works across restarts of the engine.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { RpcSocket } from "../../electron/fleet/t3/rpc-socket";
import type { RealT3Server } from "./harness.testkit";

const PROTOCOL_HEADER = "x-t3-orchestration-protocol";
/** Effect RPC answers within this bound on loopback; a longer wait is a hung engine. */
const CALL_TIMEOUT_MS = 15_000;

export interface V2Message {
  id: string;
  role: "user" | "assistant" | "system";
  text: string;
  runId: string | null;
  streaming: boolean;
}

export interface V2Run {
  id: string;
  ordinal: number;
  status: string;
  userMessageId: string | null;
  rootNodeId: string;
}

export interface V2TurnItem {
  id: string;
  runId: string | null;
  type: string;
  status: string;
  [key: string]: unknown;
}

export interface V2RuntimeRequest {
  id: string;
  status: string;
  kind?: string;
  [key: string]: unknown;
}

/** The engine's thread projection (orchestration.getThreadProjection), the fields the tests read. */
export interface V2Projection {
  thread: { id: string; title: string; lineage: { parentThreadId: string | null; relationshipToParent: string | null; rootThreadId: string } };
  runs: V2Run[];
  messages: V2Message[];
  turnItems: V2TurnItem[];
  runtimeRequests: V2RuntimeRequest[];
  subagents: { id: string; title: string | null; childThreadId: string; status: string }[];
}

export interface V2ShellRow {
  id: string;
  title: string;
  status: string;
  lastError: string | null;
  lineage: { parentThreadId: string | null; relationshipToParent: string | null };
  [key: string]: unknown;
}

export type V2DispatchMode =
  | { type: "queue_after_active" }
  | { type: "start_immediately" }
  | { type: "steer_active"; targetRunId: string }
  | { type: "restart_active"; targetRunId: string };

const commandId = () => `cmd-${randomUUID()}`;
const creation = { createdBy: "user", creationSource: "web" } as const;

export class T3V2Operator {
  private socket: RpcSocket | undefined;

  private constructor(
    private readonly server: RealT3Server,
    private readonly token: string,
  ) {}

  static async start(server: RealT3Server): Promise<T3V2Operator> {
    if (server.kind.protocol !== 2) throw new Error(`${server.kind.label} does not speak protocol 2`);
    return new T3V2Operator(server, await server.issueToken());
  }

  /** The open socket, or a new one (the engine may have restarted since the last call). */
  private async open(): Promise<RpcSocket> {
    if (this.socket?.isOpen) return this.socket;
    const answer = await fetch(`${this.server.baseUrl}/api/auth/websocket-ticket`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.token}` },
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    if (!answer.ok) throw new Error(`websocket-ticket: HTTP ${answer.status} ${await answer.text()}`);
    const { ticket } = (await answer.json()) as { ticket: string };
    const url = `ws://127.0.0.1:${this.server.port}/ws?orchestrationProtocol=2&wsTicket=${encodeURIComponent(ticket)}`;
    this.socket = await RpcSocket.open({ url, pingIntervalMs: 60_000, openTimeoutMs: CALL_TIMEOUT_MS });
    return this.socket;
  }

  async call(tag: string, payload: unknown): Promise<unknown> {
    return (await this.open()).call(tag, payload, CALL_TIMEOUT_MS);
  }

  /** One `orchestration.dispatchCommand`; resolves with the engine's sequence. */
  dispatch(command: Record<string, unknown>): Promise<{ sequence: number }> {
    return this.call("orchestration.dispatchCommand", { commandId: commandId(), ...command }) as Promise<{ sequence: number }>;
  }

  async createProject(title: string): Promise<string> {
    const projectId = `proj-${randomUUID()}`;
    const workspaceRoot = join(this.server.workDir, title.replace(/[^a-z0-9]+/gi, "-").toLowerCase());
    await this.call("projects.mutate", { type: "project.create", commandId: commandId(), projectId, title, workspaceRoot, createWorkspaceRootIfMissing: true });
    return projectId;
  }

  async createThread(projectId: string, title: string, runtimeMode: "full-access" | "approval-required" = "full-access"): Promise<string> {
    const threadId = `thread-${randomUUID()}`;
    await this.dispatch({
      type: "thread.create",
      ...creation,
      threadId,
      projectId,
      title,
      modelSelection: { instanceId: "codex", model: "gpt-5-codex" },
      runtimeMode,
      interactionMode: "default",
      branch: null,
      worktreePath: null,
    });
    return threadId;
  }

  /** A user message as T3's composer sends it; returns its messageId. */
  async send(threadId: string, text: string, dispatchMode: V2DispatchMode = { type: "queue_after_active" }): Promise<string> {
    const messageId = `msg-${randomUUID()}`;
    await this.dispatch({ type: "message.dispatch", ...creation, threadId, messageId, text, attachments: [], dispatchMode });
    return messageId;
  }

  /** `thread.fork` from the source's latest completed run: a child with lineage "fork". */
  async fork(sourceThreadId: string, title: string): Promise<string> {
    const targetThreadId = `thread-${randomUUID()}`;
    await this.dispatch({ type: "thread.fork", ...creation, sourceThreadId, targetThreadId, sourcePoint: { type: "latest_stable" }, title });
    return targetThreadId;
  }

  /** `delegated_task.request` from a running parent run: the engine creates a child with lineage "subagent". */
  delegate(parentThreadId: string, parentRunId: string, parentNodeId: string, task: string, title: string) {
    return this.dispatch({
      type: "delegated_task.request",
      createdBy: "agent",
      creationSource: "provider",
      parentThreadId,
      parentRunId,
      parentNodeId,
      task,
      title,
      modelSelection: { instanceId: "codex", model: "gpt-5-codex" },
      runtimeMode: "full-access",
      interactionMode: "default",
    });
  }

  async projection(threadId: string): Promise<V2Projection> {
    return (await this.call("orchestration.getThreadProjection", { threadId })) as V2Projection;
  }

  /** The shell over HTTP (with the protocol header T3's gate requires). */
  async shell(): Promise<{ threads: V2ShellRow[]; archivedThreads?: V2ShellRow[] }> {
    const answer = await fetch(`${this.server.baseUrl}/api/orchestration/shell`, {
      headers: { authorization: `Bearer ${this.token}`, [PROTOCOL_HEADER]: "2" },
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    if (!answer.ok) throw new Error(`GET /api/orchestration/shell: HTTP ${answer.status} ${await answer.text()}`);
    return (await answer.json()) as { threads: V2ShellRow[]; archivedThreads?: V2ShellRow[] };
  }

  /** Follows the engine's shell stream as T3's UI does, recording what it sends. */
  async watchShell(): Promise<ShellWatch> {
    const watch = new ShellWatch();
    const handle = (await this.open()).stream(
      "orchestration.subscribeShell",
      { requestCompletionMarker: true },
      { onValues: (values) => watch.received(values), onEnd: () => watch.ended() },
    );
    watch.stop = () => handle.interrupt();
    await watch.until((item) => item.kind === "synchronized", "the shell synchronized");
    return watch;
  }

  close(): void {
    this.socket?.close();
    this.socket = undefined;
  }
}

export interface ShellItem {
  at: number;
  kind: string;
  /** For snapshots: how many threads it lists. */
  threads: number | null;
  projectId: string | null;
}

/** The items of one shell subscription, with waits that resolve as they arrive. */
export class ShellWatch {
  readonly items: ShellItem[] = [];
  private readonly waiters = new Set<() => void>();
  stop: () => void = () => undefined;
  open = true;

  received(values: readonly unknown[]): void {
    for (const value of values as { kind?: string; snapshot?: { threads?: unknown[] }; project?: { id?: string }; projectId?: string }[]) {
      this.items.push({
        at: Date.now(),
        kind: String(value.kind),
        threads: value.snapshot?.threads?.length ?? null,
        projectId: value.project?.id ?? value.projectId ?? null,
      });
    }
    for (const waiter of this.waiters) waiter();
  }

  ended(): void {
    this.open = false;
    for (const waiter of this.waiters) waiter();
  }

  /** Resolves when an item after index `from` matches. */
  until(check: (item: ShellItem) => boolean, what: string, from = 0, timeoutMs = 30_000): Promise<ShellItem> {
    const found = () => this.items.slice(from).find(check);
    return new Promise((resolve, reject) => {
      const finish = () => {
        const item = found();
        if (!item && this.open) return;
        clearTimeout(timer);
        this.waiters.delete(finish);
        if (item) resolve(item);
        else reject(new Error(`the shell stream ended before: ${what}`));
      };
      const timer = setTimeout(() => {
        this.waiters.delete(finish);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for: ${what} (items: ${JSON.stringify(this.items.slice(from).map((item) => item.kind))})`));
      }, timeoutMs);
      this.waiters.add(finish);
      finish();
    });
  }
}
