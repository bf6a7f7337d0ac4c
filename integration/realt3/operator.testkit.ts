// The test's own T3 client, standing in for T3's web UI on the server's machine: creates projects
// and threads and starts turns through the orchestration dispatch API, and reads back what T3
// stored. Its commands are raw JSON as T3's UI sends them.
import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { RealT3Server } from "./harness.testkit";

export interface StoredMessage {
  id: string;
  role: "user" | "assistant" | "system";
  text: string;
  turnId: string | null;
  streaming: boolean;
}

export interface StoredThread {
  id: string;
  projectId: string;
  title: string;
  archivedAt: string | null;
  deletedAt?: string | null;
  latestTurn: { turnId: string; state: string } | null;
  session: { status: string; activeTurnId: string | null; lastError: string | null } | null;
  messages: StoredMessage[];
  activities: { kind: string; tone: string; summary: string; turnId: string | null }[];
}

const now = () => new Date().toISOString();

/** Which provider instance and model a thread runs (T3's `modelSelection`). */
export interface ModelSelection {
  instanceId: string;
  model: string;
}

const STAND_IN_CODEX: ModelSelection = { instanceId: "codex", model: "gpt-5-codex" };

export class T3Operator {
  private constructor(
    private readonly server: RealT3Server,
    private readonly token: string,
  ) {}

  static async start(server: RealT3Server): Promise<T3Operator> {
    return new T3Operator(server, await server.issueToken());
  }

  private async call(method: "GET" | "POST", path: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${this.server.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body !== undefined && { "content-type": "application/json" }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${text}`);
    return text ? (JSON.parse(text) as unknown) : null;
  }

  dispatch(command: Record<string, unknown>): Promise<{ sequence: number }> {
    return this.call("POST", "/api/orchestration/dispatch", { commandId: randomUUID(), createdAt: now(), ...command }) as Promise<{ sequence: number }>;
  }

  async createProject(title: string): Promise<string> {
    const projectId = randomUUID();
    const workspaceRoot = join(this.server.workDir, title.replace(/[^a-z0-9]+/gi, "-").toLowerCase());
    await mkdir(workspaceRoot, { recursive: true });
    await this.dispatch({ type: "project.create", projectId, title, workspaceRoot });
    return projectId;
  }

  /** A thread on `modelSelection`'s provider instance (the Codex stand-in's model unless told). */
  async createThread(projectId: string, title: string, threadId: string = randomUUID(), modelSelection: ModelSelection = STAND_IN_CODEX): Promise<string> {
    await this.dispatch({
      type: "thread.create",
      threadId,
      projectId,
      title,
      modelSelection,
      runtimeMode: "full-access",
      interactionMode: "default",
      branch: null,
      worktreePath: null,
    });
    return threadId;
  }

  /** A user message as T3's composer sends it; returns its messageId. */
  async startTurn(threadId: string, text: string, runtimeMode = "full-access"): Promise<string> {
    const messageId = randomUUID();
    await this.dispatch({
      type: "thread.turn.start",
      threadId,
      message: { messageId, role: "user", text, attachments: [] },
      runtimeMode,
      interactionMode: "default",
    });
    return messageId;
  }

  /** An approval decision as T3's own UI sends it. */
  respondApproval(threadId: string, requestId: string, decision: string) {
    return this.dispatch({ type: "thread.approval.respond", threadId, requestId, decision });
  }

  setRuntimeMode(threadId: string, runtimeMode: string) {
    return this.dispatch({ type: "thread.runtime-mode.set", threadId, runtimeMode });
  }

  archive(threadId: string) {
    return this.dispatch({ type: "thread.archive", threadId });
  }

  delete(threadId: string) {
    return this.dispatch({ type: "thread.delete", threadId });
  }

  async thread(threadId: string): Promise<StoredThread> {
    const detail = (await this.call("GET", `/api/orchestration/threads/${encodeURIComponent(threadId)}`)) as { thread: StoredThread };
    return detail.thread;
  }

  async shell(): Promise<StoredShell> {
    return (await this.call("GET", "/api/orchestration/shell")) as StoredShell;
  }
}

/** T3's shell snapshot as the operator reads it: its threads, and its projects with their folders. */
export interface StoredShell {
  threads: (Omit<StoredThread, "messages" | "activities"> & Record<string, unknown>)[];
  projects: { id: string; title: string; workspaceRoot: string; deletedAt?: string | null }[];
}
