// A test's own client of any protocol-2 T3 server (the simulator's, or a real one), standing in for
// T3's web UI on the server's machine: it creates projects and threads, starts, forks and delegates
// runs over the protocol-2 socket, and reads back what the server stored. Its commands are raw JSON
// as T3's UI sends them (the shapes of the recorded sessions, ../shared/fixtures/t3-v2dev); it keeps
// no state but its bearer, so it works across restarts of the server.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { type Exit, RawPeer } from "../raw-peer.testkit";

const PROTOCOL_HEADER = "x-t3-orchestration-protocol";
/** Effect RPC answers within this bound on loopback; a longer wait is a hung server. */
const CALL_TIMEOUT_MS = 15_000;

/** The protocol-2 server an operator works on: where it listens, where its projects go, and a bearer with both orchestration scopes. */
export interface Protocol2Target {
  baseUrl: string;
  /** The folder new projects' workspaces are created in. */
  workDir: string;
  token: string;
}

/** An Exit's value, or its failure as an error (the server's own words). */
function exitValue(tag: string, exit: Exit): unknown {
  if (exit._tag === "Success") return exit.value;
  const cause = exit.cause?.[0];
  const message = cause?.error?.message ?? cause?.defect ?? JSON.stringify(exit);
  throw new Error(`${tag}: ${String(message)}`);
}

function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${CALL_TIMEOUT_MS} ms`)), CALL_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

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
  private socket: RawPeer | undefined;

  constructor(private readonly target: Protocol2Target) {}

  /** The open socket, or a new one (the server may have restarted since the last call). */
  private async open(): Promise<RawPeer> {
    if (this.socket?.isOpen) return this.socket;
    const answer = await fetch(`${this.target.baseUrl}/api/auth/websocket-ticket`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.target.token}` },
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    if (!answer.ok) throw new Error(`websocket-ticket: HTTP ${answer.status} ${await answer.text()}`);
    const { ticket } = (await answer.json()) as { ticket: string };
    const url = `${this.target.baseUrl.replace(/^http/, "ws")}/ws?orchestrationProtocol=2&wsTicket=${encodeURIComponent(ticket)}`;
    this.socket = await within(RawPeer.open(url, { autoAck: true }), "opening /ws");
    return this.socket;
  }

  async call(tag: string, payload: unknown): Promise<unknown> {
    return exitValue(tag, await within((await this.open()).call(tag, payload), tag));
  }

  /** One `orchestration.dispatchCommand`; resolves with the engine's sequence. */
  dispatch(command: Record<string, unknown>): Promise<{ sequence: number }> {
    return this.call("orchestration.dispatchCommand", { commandId: commandId(), ...command }) as Promise<{ sequence: number }>;
  }

  async createProject(title: string): Promise<string> {
    const projectId = `proj-${randomUUID()}`;
    const workspaceRoot = join(this.target.workDir, title.replace(/[^a-z0-9]+/gi, "-").toLowerCase());
    await this.call("projects.mutate", { type: "project.create", commandId: commandId(), projectId, title, workspaceRoot, createWorkspaceRootIfMissing: true });
    return projectId;
  }

  /** A thread of `provider` (Codex's model as the recordings name it, otherwise the provider's own). */
  async createThread(
    projectId: string,
    title: string,
    runtimeMode: "full-access" | "approval-required" = "full-access",
    provider: "codex" | "claudeAgent" = "codex",
  ): Promise<string> {
    const threadId = `thread-${randomUUID()}`;
    await this.dispatch({
      type: "thread.create",
      ...creation,
      threadId,
      projectId,
      title,
      modelSelection: { instanceId: provider, model: provider === "codex" ? "gpt-5-codex" : "claude-sonnet-4-6" },
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
    const answer = await fetch(`${this.target.baseUrl}/api/orchestration/shell`, {
      headers: { authorization: `Bearer ${this.target.token}`, [PROTOCOL_HEADER]: "2" },
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    if (!answer.ok) throw new Error(`GET /api/orchestration/shell: HTTP ${answer.status} ${await answer.text()}`);
    return (await answer.json()) as { threads: V2ShellRow[]; archivedThreads?: V2ShellRow[] };
  }

  /** Follows the server's shell stream as T3's UI does, recording what it sends. */
  async watchShell(): Promise<ShellWatch> {
    const socket = await this.open();
    const requestId = socket.request("orchestration.subscribeShell", { requestCompletionMarker: true });
    const watch = new ShellWatch(socket, requestId);
    await watch.until((item) => item.kind === "synchronized", "the shell synchronized");
    return watch;
  }

  close(): void {
    this.socket?.close();
    this.socket = undefined;
  }
}

export interface ShellItem {
  kind: string;
  /** For snapshots: how many threads it lists. */
  threads: number | null;
  projectId: string | null;
}

/** The items of one shell subscription (read from the socket's frames), with waits that resolve as they arrive. */
export class ShellWatch {
  constructor(
    private readonly socket: RawPeer,
    private readonly requestId: string,
  ) {}

  get items(): ShellItem[] {
    return this.socket.values(this.requestId).map((value) => {
      const item = value as { kind?: string; snapshot?: { threads?: unknown[] }; project?: { id?: string }; projectId?: string };
      return { kind: String(item.kind), threads: item.snapshot?.threads?.length ?? null, projectId: item.project?.id ?? item.projectId ?? null };
    });
  }

  /** The stream ended (an Exit), or its socket closed. */
  get open(): boolean {
    return this.socket.isOpen && this.socket.exit(this.requestId) === undefined;
  }

  stop(): void {
    if (this.socket.isOpen) this.socket.interrupt(this.requestId);
  }

  /** Resolves when an item after index `from` matches. */
  async until(check: (item: ShellItem) => boolean, what: string, from = 0): Promise<ShellItem> {
    const found = () => this.items.slice(from).find(check);
    await within(
      this.socket.until(() => found() !== undefined || !this.open),
      `waiting for ${what} (items: ${JSON.stringify(this.items.slice(from).map((item) => item.kind))})`,
    );
    const item = found();
    if (!item) throw new Error(`the shell stream ended before: ${what}`);
    return item;
  }
}
