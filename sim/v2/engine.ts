// The read model and scripted agents of a simulated protocol-2 T3 server (docs/t3-protocols.md,
// "Protocol 2"): threads with lineage, runs that queue, steer, block on runtime requests, fail with
// failure classes, wait for background work and complete; native and app-owned subagents. Every
// change is a full-entity domain event with one global sequence, as the contract describes.
import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import type { ClientCommandV2 } from "../../shared/t3/v2/commands";
import { PROVIDERS, type ProviderKind } from "../agents";
import {
  ACTIVE_RUN_STATUSES,
  type AppThread,
  type ApprovalKind,
  type ConversationMessage,
  type Decision,
  type FailureClass,
  type ItemStatus,
  type ProjectShell,
  type ProviderSession,
  type Question,
  type Run,
  type RunStatus,
  type RuntimeRequest,
  type Subagent,
  TERMINAL_RUN_STATUSES,
  type TurnItem,
  V2_ACTIVE_STEERING,
  capabilitiesFor,
} from "./model";

/** A resume replays only a gap of at most this many events and bytes (a third-party reading). */
export const THREAD_REPLAY_MAX_EVENTS = 128;
export const THREAD_REPLAY_MAX_BYTES = 1024 * 1024;
/** Shell resumes replay from the log while the gap is at most this long. */
export const SHELL_REPLAY_MAX_EVENTS = 1000;
/** Events kept for resumes; older ones are only in snapshots. */
const LOG_LIMIT = 20_000;
export const SHELL_SCHEMA_VERSION = 1;

export type AgentStep =
  | { kind: "reply"; text: string; chunks?: number }
  | { kind: "tool"; command: string; exitCode?: number }
  | { kind: "file"; fileName: string }
  | { kind: "approval"; requestKind: ApprovalKind; prompt: string; options?: Decision[] }
  | { kind: "question"; questions: Question[] }
  | { kind: "subagent"; origin: "provider_native" | "app_owned"; prompt: string; title?: string; result?: string; steps?: AgentStep[] }
  | { kind: "fail"; failureClass: FailureClass; message: string; code?: string }
  /** Stays running until released (or interrupted): what a long task looks like to a steer or a queue. */
  | { kind: "hold" }
  /** The answer is final but background work drains: the run waits until released. */
  | { kind: "background"; description: string };

export interface DomainEvent {
  id: string;
  type: string;
  threadId: string;
  runId?: string;
  occurredAt: string;
  payload: unknown;
}

export interface StoredEvent {
  sequence: number;
  event: DomainEvent;
  bytes: number;
}

export class DispatchError extends Error {
  constructor(
    readonly commandId: string,
    readonly commandType: string,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

interface Runner {
  run: Run;
  steps: AgentStep[];
  index: number;
  blockedOn?: { kind: "request"; requestId: string } | { kind: "hold" } | { kind: "background" } | { kind: "subagent"; subagentId: string };
  timer?: NodeJS.Timeout;
  assistantText: string;
}

export interface ThreadState {
  thread: AppThread;
  provider: ProviderKind;
  location: "active" | "archive";
  runs: Run[];
  items: TurnItem[];
  requests: RuntimeRequest[];
  subagents: Subagent[];
  sessions: ProviderSession[];
  messages: ConversationMessage[];
  runner?: Runner;
  nextScript?: AgentStep[];
  pendingBackgroundTasks: { taskId: string; description: string }[];
}

/** Scenario words in a message script the agent (the demo and the end-to-end tests use them). */
export function stepsFromText(provider: ProviderKind, text: string): AgentStep[] {
  const has = (word: string) => new RegExp(`(^|\\s)#${word}(\\b|$)`).test(text);
  const label = PROVIDERS[provider].label;
  const steps: AgentStep[] = [];
  if (has("hold")) steps.push({ kind: "hold" });
  if (has("approval")) {
    steps.push({ kind: "approval", requestKind: "command", prompt: "Run `npm test`?", options: ["accept", "acceptForSession", "decline", "cancel"] });
    steps.push({ kind: "tool", command: "npm test" });
  }
  if (has("question")) {
    steps.push({
      kind: "question",
      questions: [
        {
          id: "scope",
          header: "Scope",
          question: "Which packages should I touch?",
          options: [
            { label: "api", description: "The API package" },
            { label: "web", description: "The web app" },
          ],
          multiSelect: true,
          required: true,
        },
        { id: "note", header: "Note", question: "Anything else?", options: [], allowCustomAnswer: true, required: false },
      ],
    });
  }
  if (has("subagent")) steps.push({ kind: "subagent", origin: "provider_native", prompt: "Survey the code base", title: "Explore", result: "Found 3 modules." });
  if (has("delegate")) steps.push({ kind: "subagent", origin: "app_owned", prompt: "Write the migration", title: "Migration", steps: [{ kind: "reply", text: "Migration written." }] });
  const fail = /#fail(?::(\w+))?/.exec(text);
  if (fail) {
    const failureClass = (["provider_error", "transport_error", "permission_error", "validation_error"] as const).find((c) => c === fail[1]) ?? "provider_error";
    steps.push({ kind: "fail", failureClass, message: `${label} failed: ${failureClass.replace("_", " ")}`, code: "sim_failure" });
    return steps;
  }
  steps.push({ kind: "reply", text: `${label} reply to: ${text.replace(/#\S+/g, "").trim() || "(empty)"}`, chunks: has("stream") ? 3 : 1 });
  if (has("background")) steps.push({ kind: "background", description: "Background test watcher" });
  return steps;
}

function shortId(): string {
  return randomUUID().slice(0, 8);
}

export class V2Engine extends EventEmitter {
  readonly projects = new Map<string, ProjectShell>();
  readonly threads = new Map<string, ThreadState>();
  sequence: number;
  clockOffsetMs = 0;
  private log: StoredEvent[] = [];
  private readonly receipts = new Map<string, number>();
  private halted = false;

  constructor(
    private readonly options: { tickMs: number; firstSequence?: number },
  ) {
    super();
    this.setMaxListeners(0);
    this.sequence = options.firstSequence ?? 0;
  }

  now(): string {
    return new Date(Date.now() + this.clockOffsetMs).toISOString();
  }

  /** The oldest sequence a resume can start after. */
  get replayableFrom(): number {
    return this.log[0]?.sequence ?? this.sequence + 1;
  }

  eventsAfter(sequence: number): StoredEvent[] {
    return this.log.filter((stored) => stored.sequence > sequence);
  }

  // ------------------------------------------------------------------ events

  private emitEvent(state: ThreadState, type: string, payload: unknown, runId?: string): number {
    const event: DomainEvent = { id: `evt-${randomUUID()}`, type, threadId: state.thread.id, ...(runId && { runId }), occurredAt: this.now(), payload: structuredClone(payload) };
    const sequence = ++this.sequence;
    const stored: StoredEvent = { sequence, event, bytes: JSON.stringify(event).length };
    this.log.push(stored);
    if (this.log.length > LOG_LIMIT) this.log.splice(0, this.log.length - LOG_LIMIT);
    this.emit("event", stored);
    return sequence;
  }

  private touch(state: ThreadState): void {
    state.thread.updatedAt = this.now();
  }

  private upsert<T extends { id: string }>(list: T[], entity: T): void {
    const index = list.findIndex((entry) => entry.id === entity.id);
    if (index === -1) list.push(entity);
    else list[index] = entity;
  }

  private putRun(state: ThreadState, run: Run, type: "run.created" | "run.updated" = "run.updated"): number {
    this.upsert(state.runs, run);
    this.touch(state);
    return this.emitEvent(state, type, run, run.id);
  }

  private putItem(state: ThreadState, item: TurnItem): number {
    item.updatedAt = this.now();
    this.upsert(state.items, item);
    this.touch(state);
    return this.emitEvent(state, "turn-item.updated", item, item.runId ?? undefined);
  }

  private putRequest(state: ThreadState, request: RuntimeRequest, runId: string): number {
    this.upsert(state.requests, request);
    this.touch(state);
    return this.emitEvent(state, "runtime-request.updated", request, runId);
  }

  private putSubagent(state: ThreadState, subagent: Subagent): number {
    subagent.updatedAt = this.now();
    this.upsert(state.subagents, subagent);
    this.touch(state);
    return this.emitEvent(state, "subagent.updated", subagent, subagent.runId ?? undefined);
  }

  private putMessage(state: ThreadState, message: ConversationMessage): number {
    message.updatedAt = this.now();
    this.upsert(state.messages, message);
    return this.emitEvent(state, "message.updated", message, message.runId ?? undefined);
  }

  private putSession(state: ThreadState, status: ProviderSession["status"], lastError: string | null = null): number {
    const existing = state.sessions[0];
    const now = this.now();
    const session: ProviderSession = existing
      ? { ...existing, status, lastError, updatedAt: now }
      : {
          id: `session-${state.thread.id}`,
          driver: state.provider,
          providerInstanceId: state.thread.providerInstanceId,
          status,
          cwd: `/home/user/${state.thread.projectId}`,
          model: state.thread.modelSelection.model,
          capabilities: capabilitiesFor(state.provider),
          createdAt: now,
          updatedAt: now,
          lastError,
        };
    this.upsert(state.sessions, session);
    return this.emitEvent(state, existing ? "provider-session.updated" : "provider-session.attached", session);
  }

  private putThread(state: ThreadState, type: string): number {
    this.touch(state);
    return this.emitEvent(state, type, state.thread);
  }

  private newItem(state: ThreadState, run: Run | undefined, status: ItemStatus, title: string | null): Omit<TurnItem, "type"> {
    const now = this.now();
    return {
      id: `item-${shortId()}`,
      threadId: state.thread.id,
      runId: run?.id ?? null,
      nodeId: run?.rootNodeId ?? null,
      providerThreadId: run?.providerThreadId ?? null,
      providerTurnId: null,
      nativeItemRef: null,
      parentItemId: null,
      ordinal: state.items.length,
      status,
      title,
      startedAt: now,
      completedAt: status === "completed" ? now : null,
      updatedAt: now,
    };
  }

  // ------------------------------------------------------------------ reads

  shellRow(state: ThreadState): Record<string, unknown> {
    const runs = [...state.runs].sort((a, b) => a.ordinal - b.ordinal);
    const active = runs.find((run) => ACTIVE_RUN_STATUSES.has(run.status));
    // A queued run cancelled before it started never ran: the thread reads as its last run that did.
    const latest = runs.filter((run) => run.startedAt !== null).at(-1) ?? runs.at(-1);
    const queued = runs.some((run) => run.status === "queued");
    const status = active?.status ?? (queued ? "queued" : (latest?.status ?? "idle"));
    const pending = state.requests.find((request) => request.status === "pending");
    const visible = [...state.messages].reverse().find((message) => message.role !== "system");
    const latestUser = [...state.messages].reverse().find((message) => message.role === "user");
    const failure = latest?.status === "failed" ? this.rootFailure(state, latest) : undefined;
    const { lastVisitedAt: _visited, ...thread } = state.thread;
    return {
      ...thread,
      latestRunId: latest?.id ?? null,
      latestRunRequestedAt: latest?.requestedAt ?? null,
      latestRunStartedAt: latest?.startedAt ?? null,
      latestRunCompletedAt: latest?.completedAt ?? null,
      activeRunId: active?.id ?? null,
      activityRunStatus: active ? (active.status as "preparing" | "starting" | "running" | "waiting") : null,
      status,
      lastError: failure ?? null,
      pendingRuntimeRequest: pending ? { id: pending.id, kind: pending.kind, createdAt: pending.createdAt } : null,
      latestVisibleMessage: visible ? { id: visible.id, role: visible.role, text: visible.text.slice(0, 500), updatedAt: visible.updatedAt } : null,
      latestUserMessageAt: latestUser?.createdAt ?? null,
      hasActionableProposedPlan: false,
      pendingBackgroundTasks: state.pendingBackgroundTasks,
      itemCount: state.items.length,
      visibleItemCount: state.items.length,
    };
  }

  private rootFailure(state: ThreadState, run: Run): string | undefined {
    const item = state.items.find((entry) => entry.type === "error" && entry.runId === run.id && entry.status === "failed" && entry.nodeId === run.rootNodeId);
    return item?.type === "error" ? item.failure.message : undefined;
  }

  isShellVisible(state: ThreadState): boolean {
    return state.thread.deletedAt === null;
  }

  shellSnapshot(): Record<string, unknown> {
    const rows = [...this.threads.values()].filter((state) => this.isShellVisible(state));
    return {
      schemaVersion: SHELL_SCHEMA_VERSION,
      snapshotSequence: this.sequence,
      projects: [...this.projects.values()],
      threads: rows.filter((state) => state.location === "active").map((state) => this.shellRow(state)),
      archivedThreads: rows.filter((state) => state.location === "archive").map((state) => this.shellRow(state)),
    };
  }

  archivedShellSnapshot(): Record<string, unknown> {
    const rows = [...this.threads.values()].filter((state) => this.isShellVisible(state) && state.location === "archive");
    return { schemaVersion: SHELL_SCHEMA_VERSION, snapshotSequence: this.sequence, projects: [...this.projects.values()], threads: rows.map((state) => this.shellRow(state)) };
  }

  /** The thread projection. `bounded` keeps the latest items only; every non-terminal run stays. */
  projection(state: ThreadState, bounded?: { maxItems: number }): Record<string, unknown> {
    const items = bounded ? state.items.slice(-bounded.maxItems) : state.items;
    return {
      thread: state.thread,
      runs: state.runs,
      attempts: [],
      nodes: [],
      subagents: state.subagents,
      providerSessions: state.sessions,
      providerThreads: [],
      providerTurns: [],
      runtimeRequests: state.requests,
      messages: state.messages,
      plans: [],
      turnItems: items,
      checkpointScopes: [],
      checkpoints: [],
      contextHandoffs: [],
      contextTransfers: [],
      visibleTurnItems: items.map((item, position) => ({ position, visibility: "local", sourceThreadId: state.thread.id, sourceItemId: item.id, item })),
      updatedAt: state.thread.updatedAt,
    };
  }

  // ------------------------------------------------------------------ seeding and control

  addProject(project: Omit<ProjectShell, "createdAt" | "updatedAt">): ProjectShell {
    const now = this.now();
    const row: ProjectShell = { ...project, createdAt: now, updatedAt: now };
    this.projects.set(row.id, row);
    this.emit("project", { sequence: ++this.sequence, project: row });
    return row;
  }

  createThread(options: {
    threadId?: string;
    projectId: string;
    title: string;
    provider?: ProviderKind;
    parent?: { threadId: string; relationship: "fork" | "subagent" };
    historyOrigin?: "native" | "v1_import";
    createdBy?: AppThread["createdBy"];
    creationSource?: AppThread["creationSource"];
    createdAt?: string;
    emit?: boolean;
  }): ThreadState {
    const provider = options.provider ?? "codex";
    const id = options.threadId ?? `thread-${shortId()}`;
    const now = options.createdAt ?? this.now();
    const parent = options.parent ? this.threads.get(options.parent.threadId) : undefined;
    const state: ThreadState = {
      provider,
      location: "active",
      runs: [],
      items: [],
      requests: [],
      subagents: [],
      sessions: [],
      messages: [],
      pendingBackgroundTasks: [],
      thread: {
        createdBy: options.createdBy ?? "user",
        creationSource: options.creationSource ?? "web",
        id,
        projectId: options.projectId,
        title: options.title,
        providerInstanceId: provider,
        modelSelection: { instanceId: provider, model: PROVIDERS[provider].model },
        runtimeMode: "full-access",
        interactionMode: "default",
        branch: null,
        worktreePath: null,
        activeProviderThreadId: null,
        ...(options.historyOrigin && { historyOrigin: options.historyOrigin }),
        lineage: {
          parentThreadId: parent ? parent.thread.id : null,
          relationshipToParent: parent ? options.parent!.relationship : null,
          rootThreadId: parent ? parent.thread.lineage.rootThreadId : id,
        },
        forkedFrom: null,
        createdAt: now,
        updatedAt: now,
        archivedAt: null,
        settledOverride: null,
        settledAt: null,
        lastVisitedAt: null,
        deletedAt: null,
      },
    };
    this.threads.set(id, state);
    if (options.emit !== false) this.putThread(state, "thread.created");
    return state;
  }

  /** A fork of `sourceThreadId` (what `thread.fork` does): lineage "fork". */
  fork(sourceThreadId: string, title: string): ThreadState {
    const source = this.require(sourceThreadId, "thread.fork", "sim");
    const state = this.createThread({ projectId: source.thread.projectId, title, provider: source.provider, parent: { threadId: source.thread.id, relationship: "fork" }, emit: false });
    const latest = source.runs.at(-1);
    if (latest) state.thread.forkedFrom = { type: "run", threadId: source.thread.id, runId: latest.id };
    this.putThread(state, "thread.created");
    return state;
  }

  scriptNextRun(threadId: string, steps: AgentStep[]): void {
    const state = this.threads.get(threadId);
    if (state) state.nextScript = steps;
  }

  /** Ends a `hold` or `background` step of the thread's active run. */
  release(threadId: string): boolean {
    const state = this.threads.get(threadId);
    const runner = state?.runner;
    if (!state || !runner?.blockedOn || (runner.blockedOn.kind !== "hold" && runner.blockedOn.kind !== "background")) return false;
    if (runner.blockedOn.kind === "background") {
      state.pendingBackgroundTasks = [];
      runner.blockedOn = undefined;
      this.finishRun(state, runner);
      return true;
    }
    runner.blockedOn = undefined;
    this.schedule(state);
    return true;
  }

  halt(): void {
    this.halted = true;
    for (const state of this.threads.values()) clearTimeout(state.runner?.timer);
  }

  resume(): void {
    this.halted = false;
  }

  /** After a restart, runs the server was driving are gone: they end interrupted; their queues restart. */
  reconcileAfterRestart(): void {
    for (const state of this.threads.values()) {
      const runner = state.runner;
      if (!runner) continue;
      this.endRun(state, runner, "interrupted", "The server restarted during this run.");
    }
  }

  // ------------------------------------------------------------------ commands

  dispatch(command: ClientCommandV2): number {
    const seen = this.receipts.get(command.commandId);
    if (seen !== undefined) return seen;
    this.apply(command);
    // The result is the sequence of the command's last event (or the current one if it changed nothing).
    const sequence = this.sequence;
    this.receipts.set(command.commandId, sequence);
    return sequence;
  }

  private require(threadId: string, commandType: string, commandId: string): ThreadState {
    const state = this.threads.get(threadId);
    if (!state || state.thread.deletedAt) throw new DispatchError(commandId, commandType, `Thread '${threadId}' does not exist.`);
    return state;
  }

  private apply(command: ClientCommandV2): void {
    const fail = (message: string, detail?: string): never => {
      throw new DispatchError(command.commandId, command.type, message, detail);
    };
    switch (command.type) {
      case "thread.create": {
        if (this.threads.has(command.threadId)) fail(`Thread '${command.threadId}' already exists.`);
        if (!this.projects.has(command.projectId)) fail(`Project '${command.projectId}' does not exist.`);
        const provider = (command.modelSelection.instanceId in PROVIDERS ? command.modelSelection.instanceId : "codex") as ProviderKind;
        this.createThread({ threadId: command.threadId, projectId: command.projectId, title: command.title, provider, createdBy: command.createdBy, creationSource: command.creationSource });
        return;
      }
      case "thread.metadata.update": {
        const state = this.require(command.threadId, command.type, command.commandId);
        if (command.title !== undefined) state.thread.title = command.title;
        if (command.branch !== undefined) state.thread.branch = command.branch;
        if (command.worktreePath !== undefined) state.thread.worktreePath = command.worktreePath;
        this.putThread(state, "thread.metadata-updated");
        return;
      }
      case "thread.archive":
      case "thread.unarchive": {
        const state = this.require(command.threadId, command.type, command.commandId);
        const archive = command.type === "thread.archive";
        if (archive && state.runner) fail("Cannot archive a thread with an active run.");
        state.location = archive ? "archive" : "active";
        state.thread.archivedAt = archive ? this.now() : null;
        this.putThread(state, archive ? "thread.archived" : "thread.unarchived");
        return;
      }
      case "thread.delete": {
        const state = this.require(command.threadId, command.type, command.commandId);
        if (state.runner) this.endRun(state, state.runner, "cancelled", "The thread was deleted.");
        for (const run of state.runs) if (run.status === "queued") this.putRun(state, { ...run, status: "cancelled", queuePosition: null, completedAt: this.now() });
        state.thread.deletedAt = this.now();
        this.putThread(state, "thread.deleted");
        return;
      }
      case "message.dispatch":
        return this.messageDispatch(command);
      case "runtime-request.respond":
        return this.respond(command);
      case "run.interrupt": {
        const state = this.require(command.threadId, command.type, command.commandId);
        const run = state.runs.find((entry) => entry.id === command.runId);
        if (!run) fail(`Run '${command.runId}' does not exist.`);
        if (run!.status === "queued") fail(`Run '${command.runId}' is queued; cancel it with queued-run.cancel.`);
        if (TERMINAL_RUN_STATUSES.has(run!.status) || state.runner?.run.id !== run!.id) fail(`Run '${command.runId}' is not active.`);
        const runner = state.runner!;
        this.putItem(state, { ...this.newItem(state, runner.run, "completed", "Interrupt requested"), type: "run_interrupt_request", message: command.reason ?? "Interrupted by the user." });
        this.endRun(state, runner, "interrupted");
        return;
      }
      case "queued-run.cancel": {
        const state = this.require(command.threadId, command.type, command.commandId);
        const run = state.runs.find((entry) => entry.id === command.runId);
        if (!run || run.status !== "queued") fail(`Run '${command.runId}' is not queued.`);
        this.putRun(state, { ...run!, status: "cancelled", queuePosition: null, completedAt: this.now() });
        this.renumberQueue(state);
        return;
      }
    }
  }

  private messageDispatch(command: Extract<ClientCommandV2, { type: "message.dispatch" }>): void {
    const state = this.require(command.threadId, command.type, command.commandId);
    if (command.attachments.some((attachment) => typeof attachment === "object" && attachment !== null && "dataUrl" in attachment)) {
      throw new DispatchError(command.commandId, command.type, "Inline attachment data is not accepted; persist attachments first.");
    }
    const runner = state.runner;
    const mode = command.dispatchMode;
    if (mode.type === "defer_start" || mode.type === "restart_active") {
      throw new DispatchError(command.commandId, command.type, `Dispatch mode ${mode.type} is not supported by this simulator.`);
    }
    if (mode.type === "steer_active") {
      if (!runner || runner.run.id !== mode.targetRunId || runner.blockedOn?.kind === "background") {
        throw new DispatchError(command.commandId, command.type, `Run '${mode.targetRunId}' is not active; it cannot be steered.`);
      }
      if (!V2_ACTIVE_STEERING[state.provider]) {
        throw new DispatchError(command.commandId, command.type, `${PROVIDERS[state.provider].label} does not support steering.`);
      }
      this.userMessage(state, runner.run, command.messageId, command.text, "steer", command.createdBy, command.creationSource);
      runner.steps.splice(runner.index, 0, { kind: "reply", text: `Adjusting course: ${command.text.replace(/#\S+/g, "").trim()}` });
      if (runner.blockedOn?.kind === "hold") {
        runner.blockedOn = undefined;
        runner.steps.splice(runner.index + 1, 0, { kind: "hold" });
      }
      if (!runner.blockedOn) this.schedule(state);
      return;
    }
    const ordinal = state.runs.length + 1;
    const busy = runner !== undefined || state.runs.some((run) => run.status === "queued");
    const run: Run = {
      id: `run:thread:${state.thread.id}:ordinal:${ordinal}`,
      threadId: state.thread.id,
      ordinal,
      providerInstanceId: state.thread.providerInstanceId,
      modelSelection: command.modelSelection ? { instanceId: command.modelSelection.instanceId, model: command.modelSelection.model } : state.thread.modelSelection,
      providerThreadId: null,
      userMessageId: command.messageId,
      rootNodeId: `node:run:${state.thread.id}:${ordinal}:root`,
      activeAttemptId: null,
      status: busy ? "queued" : "starting",
      queuePosition: busy ? state.runs.filter((entry) => entry.status === "queued").length + 1 : null,
      requestedAt: this.now(),
      startedAt: null,
      completedAt: null,
      checkpointId: null,
      contextHandoffId: null,
    };
    const steps = state.nextScript ?? stepsFromText(state.provider, command.text);
    state.nextScript = undefined;
    this.pendingTexts.set(run.id, { text: command.text, steps, createdBy: command.createdBy, creationSource: command.creationSource });
    this.putRun(state, run, "run.created");
    // A queued message is a conversation message of its (queued) run before any turn item exists.
    if (busy) {
      this.putMessage(state, { createdBy: command.createdBy, creationSource: command.creationSource, id: command.messageId, threadId: state.thread.id, runId: run.id, nodeId: null, role: "user", text: command.text, attachments: [], streaming: false, createdAt: this.now(), updatedAt: this.now() });
    }
    if (!busy) this.startRun(state, run);
  }

  private readonly pendingTexts = new Map<string, { text: string; steps: AgentStep[]; createdBy: AppThread["createdBy"]; creationSource: AppThread["creationSource"] }>();

  private respond(command: Extract<ClientCommandV2, { type: "runtime-request.respond" }>): void {
    const state = this.require(command.threadId, command.type, command.commandId);
    const request = state.requests.find((entry) => entry.id === command.requestId);
    const fail = (message: string): never => {
      throw new DispatchError(command.commandId, command.type, message);
    };
    if (!request) fail(`Runtime request '${command.requestId}' does not exist.`);
    if (request!.status !== "pending") fail(`Runtime request '${command.requestId}' is ${request!.status}.`);
    const item = state.items.find((entry) => (entry.type === "approval_request" || entry.type === "user_input_request") && entry.requestId === request!.id);
    if (request!.kind === "user_input") {
      if (!command.answers) fail("A user-input request needs answers.");
      const questions = item?.type === "user_input_request" ? item.questions : [];
      for (const question of questions) {
        const answer = command.answers![question.id];
        const empty = answer === undefined || answer === null || answer === "" || (Array.isArray(answer) && answer.length === 0);
        if (question.required && empty) fail(`Question '${question.id}' requires an answer.`);
        if (Array.isArray(answer) && !question.multiSelect) fail(`Question '${question.id}' takes one answer.`);
      }
    } else {
      if (!command.decision) fail("An approval request needs a decision.");
      const offered = item?.type === "approval_request" ? item.options?.map((option) => option.decision) : undefined;
      if (offered && !offered.includes(command.decision!)) fail(`Decision '${command.decision}' was not offered.`);
    }
    const runner = state.runner;
    const resolved: RuntimeRequest = {
      ...request!,
      status: "resolved",
      resolvedAt: this.now(),
      ...(command.decision !== undefined && { decision: command.decision }),
      ...(command.answers !== undefined && { answers: command.answers }),
    };
    this.putRequest(state, resolved, runner?.run.id ?? "");
    if (item) this.putItem(state, { ...item, status: "completed", completedAt: this.now() });
    if (runner?.blockedOn?.kind === "request" && runner.blockedOn.requestId === request!.id) {
      runner.blockedOn = undefined;
      if (command.decision === "decline" || command.decision === "cancel") {
        // The guarded tool does not run.
        if (runner.steps[runner.index]?.kind === "tool") runner.index++;
      }
      if (command.decision === "cancel") {
        this.endRun(state, runner, "interrupted");
        return;
      }
      if (command.answers) {
        const summary = Object.entries(command.answers)
          .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join("+") : String(value)}`)
          .join(", ");
        runner.steps.splice(runner.index, 0, { kind: "reply", text: `Thanks (${summary}).` });
      }
      this.schedule(state);
    }
  }

  // ------------------------------------------------------------------ the agent

  private userMessage(
    state: ThreadState,
    run: Run,
    messageId: string,
    text: string,
    intent: "turn_start" | "queued_turn" | "steer",
    createdBy: AppThread["createdBy"],
    creationSource: AppThread["creationSource"],
  ): void {
    const base = this.newItem(state, run, "completed", null);
    this.putItem(state, { ...base, type: "user_message", createdBy, creationSource, messageId, inputIntent: intent, text, attachments: [] });
    this.putMessage(state, { createdBy, creationSource, id: messageId, threadId: state.thread.id, runId: run.id, nodeId: run.rootNodeId, role: "user", text, attachments: [], streaming: false, createdAt: this.now(), updatedAt: this.now() });
  }

  private startRun(state: ThreadState, queued: Run): void {
    const pending = this.pendingTexts.get(queued.id);
    this.pendingTexts.delete(queued.id);
    const wasQueued = queued.status === "queued";
    const run: Run = { ...queued, status: "starting", queuePosition: null, startedAt: this.now(), providerThreadId: `provider-thread-${state.thread.id}`, activeAttemptId: `attempt-${queued.id}-1` };
    this.putRun(state, run);
    if (wasQueued) this.renumberQueue(state);
    if (!state.sessions[0] || state.sessions[0].status === "stopped") this.putSession(state, "starting");
    state.thread.activeProviderThreadId = run.providerThreadId;
    this.userMessage(state, run, run.userMessageId, pending?.text ?? "", wasQueued ? "queued_turn" : "turn_start", pending?.createdBy ?? "user", pending?.creationSource ?? "web");
    state.runner = { run, steps: pending?.steps ?? [{ kind: "reply", text: "Done." }], index: 0, assistantText: "" };
    this.putSession(state, "running");
    this.setRunStatus(state, state.runner, "running");
    this.schedule(state);
  }

  private setRunStatus(state: ThreadState, runner: Runner, status: RunStatus, extra: Partial<Run> = {}): void {
    runner.run = { ...runner.run, status, ...extra };
    this.putRun(state, runner.run);
  }

  private renumberQueue(state: ThreadState): void {
    const queued = state.runs.filter((run) => run.status === "queued").sort((a, b) => a.ordinal - b.ordinal);
    queued.forEach((run, index) => {
      if (run.queuePosition !== index + 1) this.putRun(state, { ...run, queuePosition: index + 1 });
    });
  }

  private schedule(state: ThreadState): void {
    const runner = state.runner;
    if (!runner || this.halted) return;
    clearTimeout(runner.timer);
    runner.timer = setTimeout(() => this.step(state), this.options.tickMs);
  }

  private step(state: ThreadState): void {
    const runner = state.runner;
    if (!runner || runner.blockedOn || this.halted) return;
    const step = runner.steps[runner.index];
    if (!step) {
      this.settle(state, runner);
      return;
    }
    runner.index++;
    const run = runner.run;
    switch (step.kind) {
      case "reply": {
        const chunks = Math.max(1, step.chunks ?? 1);
        const messageId = `assistant:${run.id}:${runner.index}`;
        const base = this.newItem(state, run, chunks > 1 ? "running" : "completed", null);
        // The text is cumulative on the wire: each update carries everything so far.
        for (let chunk = 1; chunk <= chunks; chunk++) {
          const text = step.text.slice(0, Math.ceil((step.text.length * chunk) / chunks));
          const done = chunk === chunks;
          this.putItem(state, { ...base, status: done ? "completed" : "running", completedAt: done ? this.now() : null, type: "assistant_message", messageId, text, streaming: !done });
          this.putMessage(state, { createdBy: "agent", creationSource: "provider", id: messageId, threadId: state.thread.id, runId: run.id, nodeId: run.rootNodeId, role: "assistant", text, attachments: [], streaming: !done, createdAt: base.startedAt!, updatedAt: this.now() });
        }
        runner.assistantText = step.text;
        break;
      }
      case "tool": {
        const base = this.newItem(state, run, "running", step.command);
        this.putItem(state, { ...base, type: "command_execution", input: step.command });
        this.putItem(state, { ...base, status: step.exitCode ? "failed" : "completed", completedAt: this.now(), type: "command_execution", input: step.command, exitCode: step.exitCode ?? 0 });
        break;
      }
      case "file": {
        const base = this.newItem(state, run, "completed", step.fileName);
        this.putItem(state, { ...base, type: "file_change", fileName: step.fileName, additions: 3, deletions: 1 });
        break;
      }
      case "approval":
      case "question": {
        const requestId = `request-${shortId()}`;
        const request: RuntimeRequest = {
          id: requestId,
          nodeId: run.rootNodeId ?? `node-${requestId}`,
          providerTurnId: null,
          nativeRequestRef: null,
          kind: step.kind === "approval" ? step.requestKind : "user_input",
          status: "pending",
          responseCapability: { type: "live", providerSessionId: state.sessions[0]?.id ?? `session-${state.thread.id}` },
          createdAt: this.now(),
          resolvedAt: null,
        };
        const base = this.newItem(state, run, "pending", step.kind === "approval" ? step.prompt : "Questions");
        this.putRequest(state, request, run.id);
        if (step.kind === "approval") {
          const labels: Record<Decision, string> = { accept: "Allow once", acceptForSession: "Allow for this session", acceptAlways: "Always allow", decline: "Deny", cancel: "Deny and stop" };
          this.putItem(state, {
            ...base,
            type: "approval_request",
            requestId,
            requestKind: step.requestKind,
            prompt: step.prompt,
            ...(step.options && { options: step.options.map((decision) => ({ decision, label: labels[decision] })) }),
          });
        } else {
          this.putItem(state, { ...base, type: "user_input_request", requestId, questions: step.questions });
        }
        runner.blockedOn = { kind: "request", requestId };
        return;
      }
      case "subagent": {
        this.startSubagent(state, runner, step);
        return;
      }
      case "fail": {
        const base = this.newItem(state, run, "failed", "Provider error");
        this.putItem(state, { ...base, completedAt: this.now(), type: "error", failure: { class: step.failureClass, message: step.message, code: step.code ?? null, retryable: step.failureClass === "transport_error" } });
        this.endRun(state, runner, "failed", undefined, step.message);
        return;
      }
      case "hold":
        runner.blockedOn = { kind: "hold" };
        return;
      case "background": {
        state.pendingBackgroundTasks = [{ taskId: `task-${shortId()}`, description: step.description }];
        runner.blockedOn = { kind: "background" };
        this.setRunStatus(state, runner, "waiting");
        return;
      }
    }
    this.schedule(state);
  }

  private startSubagent(state: ThreadState, runner: Runner, step: Extract<AgentStep, { kind: "subagent" }>): void {
    const run = runner.run;
    const subagentId = `node:subagent:${shortId()}`;
    let childThreadId: string | null = null;
    if (step.origin === "app_owned") {
      const child = this.createThread({
        projectId: state.thread.projectId,
        title: step.title ?? "Delegated task",
        provider: state.provider,
        parent: { threadId: state.thread.id, relationship: "subagent" },
        createdBy: "agent",
        creationSource: "mcp",
      });
      childThreadId = child.thread.id;
      child.nextScript = step.steps ?? [{ kind: "reply", text: step.result ?? "Done." }];
    }
    const now = this.now();
    const subagent: Subagent = {
      id: subagentId,
      threadId: state.thread.id,
      runId: run.id,
      parentNodeId: run.rootNodeId ?? subagentId,
      origin: step.origin,
      createdBy: "agent",
      driver: state.provider,
      providerInstanceId: state.thread.providerInstanceId,
      providerThreadId: null,
      childThreadId,
      nativeTaskRef: null,
      prompt: step.prompt,
      title: step.title ?? null,
      model: state.thread.modelSelection.model,
      status: "running",
      result: null,
      startedAt: now,
      completedAt: null,
      updatedAt: now,
    };
    const item = { ...this.newItem(state, run, "running" as ItemStatus, step.title ?? null), type: "subagent" as const, subagentId, origin: step.origin, driver: state.provider, providerInstanceId: state.thread.providerInstanceId, childThreadId, prompt: step.prompt, result: null };
    this.putSubagent(state, subagent);
    this.putItem(state, item);
    runner.blockedOn = { kind: "subagent", subagentId };
    const complete = (status: ItemStatus, result: string | null) => {
      if (state.runner !== runner || runner.blockedOn?.kind !== "subagent") return;
      const current = state.subagents.find((entry) => entry.id === subagentId)!;
      this.putSubagent(state, { ...current, status, result, completedAt: this.now() });
      this.putItem(state, { ...item, status, result, completedAt: this.now() });
      runner.blockedOn = undefined;
      this.schedule(state);
    };
    if (childThreadId) {
      const onEvent = (stored: StoredEvent) => {
        if (stored.event.threadId !== childThreadId || (stored.event.type !== "run.updated" && stored.event.type !== "run.created")) return;
        const childRun = stored.event.payload as Run;
        if (!TERMINAL_RUN_STATUSES.has(childRun.status)) return;
        this.off("event", onEvent);
        const child = this.threads.get(childThreadId!);
        const text = [...(child?.messages ?? [])].reverse().find((message) => message.role === "assistant")?.text ?? null;
        complete(childRun.status === "completed" ? "completed" : "failed", text);
      };
      this.on("event", onEvent);
      this.dispatch({
        type: "message.dispatch",
        createdBy: "agent",
        creationSource: "mcp",
        commandId: `delegate:${subagentId}`,
        threadId: childThreadId,
        messageId: `message-${shortId()}`,
        text: step.prompt,
        attachments: [],
        dispatchMode: { type: "start_immediately" },
      });
    } else {
      const progressTimer = setTimeout(() => {
        if (this.halted) return;
        const current = state.subagents.find((entry) => entry.id === subagentId)!;
        this.putSubagent(state, { ...current, progress: "Reading files…" });
        complete("completed", step.result ?? "Done.");
      }, this.options.tickMs);
      runner.timer = progressTimer;
    }
  }

  /** The answer is final: waiting while the checkpoint is taken, then completed. */
  private settle(state: ThreadState, runner: Runner): void {
    this.setRunStatus(state, runner, "waiting");
    this.finishRun(state, runner);
  }

  private finishRun(state: ThreadState, runner: Runner): void {
    const checkpointId = `checkpoint-${shortId()}`;
    const base = this.newItem(state, runner.run, "completed", "Checkpoint");
    this.putItem(state, { ...base, type: "checkpoint", checkpointId, scopeId: `scope-${runner.run.id}`, files: [] });
    this.endRun(state, runner, "completed", undefined, undefined, checkpointId);
  }

  private endRun(state: ThreadState, runner: Runner, status: RunStatus, notice?: string, lastError?: string, checkpointId?: string): void {
    clearTimeout(runner.timer);
    for (const request of state.requests) {
      if (request.status !== "pending") continue;
      this.putRequest(state, { ...request, status: "cancelled", resolvedAt: this.now() }, runner.run.id);
      const item = state.items.find((entry) => (entry.type === "approval_request" || entry.type === "user_input_request") && entry.requestId === request.id);
      if (item) this.putItem(state, { ...item, status: "cancelled", completedAt: this.now() });
    }
    for (const subagent of state.subagents) {
      if (subagent.runId === runner.run.id && (subagent.status === "running" || subagent.status === "pending")) {
        this.putSubagent(state, { ...subagent, status: status === "failed" ? "failed" : "interrupted", completedAt: this.now() });
      }
    }
    if (status === "interrupted") {
      this.putItem(state, { ...this.newItem(state, runner.run, "completed", "Interrupted"), type: "run_interrupt_result", message: notice ?? "The run was interrupted." });
    } else if (notice) {
      this.putItem(state, { ...this.newItem(state, runner.run, "completed", null), type: "system_notice", message: notice });
    }
    state.pendingBackgroundTasks = [];
    state.runner = undefined;
    this.setRunStatus(state, runner, status, { completedAt: this.now(), ...(checkpointId && { checkpointId }) });
    this.putSession(state, status === "failed" ? "error" : "ready", lastError ?? null);
    const next = state.runs.filter((run) => run.status === "queued").sort((a, b) => a.ordinal - b.ordinal)[0];
    if (next && !this.halted) this.startRun(state, next);
  }
}
