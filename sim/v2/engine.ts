// The read model and scripted agents of a simulated protocol-2 T3 server (docs/t3-protocols.md,
// "Protocol 2"), shaped after T3's real V2 engine: threads with lineage, runs that queue, steer,
// block on runtime requests, fail, get interrupted and complete, with the engine's own entities
// (attempts, nodes, provider threads and turns, checkpoints) on the wire in the real engine's order.
// Assistant text is buffered until the provider turn ends unless `enableLegacyTokenStreaming` is on.
// Every change is a full-entity domain event with one global sequence.
import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import type { ClientCommandV2 } from "../../shared/t3/protocol2/commands";
import { PROVIDERS, type ProviderKind } from "../agents";
import * as ids from "./ids";
import {
  ACTIVE_RUN_STATUSES,
  type AppThread,
  type ApprovalKind,
  type Checkpoint,
  type CheckpointScope,
  type ConversationMessage,
  type Decision,
  type FailureClass,
  type ItemStatus,
  type ProjectShell,
  type ProviderSession,
  type ProviderThread,
  type ProviderTurn,
  type Question,
  type Run,
  type RunAttempt,
  type RunNode,
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
/** Shell resumes replay from the log while the gap is at most this long (T3's SHELL_RESUME_MAX_GAP). */
export const SHELL_REPLAY_MAX_EVENTS = 1000;
/** Events kept for resumes; older ones are only in snapshots. */
const LOG_LIMIT = 20_000;
export const SHELL_SCHEMA_VERSION = 3;
/** Turn items of run N have ordinals N·1,000,000 + 1, + 2, …; items outside a run count from 1. */
const ORDINALS_PER_RUN = 1_000_000;

export type AgentStep =
  /** Assistant text. `chunks` > 1 streams it in pieces when the server streams at all. */
  | { kind: "reply"; text: string; chunks?: number }
  | { kind: "tool"; command: string; exitCode?: number }
  | { kind: "file"; fileName: string }
  /** `options` absent: the provider offers no decision list (Codex), the client picks from the contract's. */
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
  nodeId?: string;
  driver?: string;
  providerInstanceId?: string;
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

/** Server settings the engine follows (the real server's `server.getConfig` settings). */
export interface V2Settings {
  /** Off (T3's default): assistant text arrives whole when the provider turn ends. */
  enableLegacyTokenStreaming: boolean;
}

interface PendingReply {
  nativeId: string;
  text: string;
  startedAt: string;
  itemId: string;
  messageId: string;
}

interface Runner {
  run: Run;
  steps: AgentStep[];
  index: number;
  /** starting → running (provider turn live) → waiting (answer final, checkpointing); interrupting after run.interrupt. */
  phase: "starting" | "running" | "waiting" | "interrupting";
  blockedOn?: { kind: "request"; requestId: string } | { kind: "hold" } | { kind: "background" } | { kind: "subagent"; subagentId: string };
  timer?: NodeJS.Timeout;
  providerTurn?: ProviderTurn;
  /** Assistant messages written during the provider turn, sent when it ends (unless streaming). */
  replies: PendingReply[];
  /** Steers taken before the provider wrote anything: they join its next message. */
  steered: string[];
  /** A command item an approval opened, which the next tool step completes. */
  openCommand?: Extract<TurnItem, { type: "command_execution" }>;
  /** Releases that arrived before the hold they end (see release). */
  releases: number;
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
  attempts: RunAttempt[];
  nodes: RunNode[];
  providerThreads: ProviderThread[];
  providerTurns: ProviderTurn[];
  checkpointScopes: CheckpointScope[];
  checkpoints: Checkpoint[];
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
    // Codex's approvals carry no decision list on the real engine; the others' do.
    const options: Decision[] | undefined = provider === "codex" ? undefined : ["accept", "acceptForSession", "decline", "cancel"];
    steps.push({ kind: "approval", requestKind: "command", prompt: "Run `npm test`?", ...(options && { options }) });
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

const projectDefaults = () => ({ repositoryIdentity: null, defaultModelSelection: null, defaultThreadEnvMode: null, faviconPath: null, scripts: [] as unknown[] });

export class V2Engine extends EventEmitter {
  readonly projects = new Map<string, ProjectShell>();
  readonly threads = new Map<string, ThreadState>();
  readonly settings: V2Settings;
  /** What each runtime request was answered with: the wire's request has no decision (T3 before 006bb815). */
  readonly responses = new Map<string, { decision?: Decision; answers?: Record<string, unknown> }>();
  sequence: number;
  clockOffsetMs = 0;
  private log: StoredEvent[] = [];
  private readonly receipts = new Map<string, number>();
  private halted = false;

  constructor(
    private readonly options: { tickMs: number; firstSequence?: number; settings?: Partial<V2Settings> },
  ) {
    super();
    this.setMaxListeners(0);
    this.sequence = options.firstSequence ?? 0;
    this.settings = { enableLegacyTokenStreaming: false, ...options.settings };
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

  private emitEvent(state: ThreadState, type: string, payload: unknown, scope: { runId?: string | null; nodeId?: string | null; driver?: boolean } = {}): number {
    const event: DomainEvent = {
      id: ids.eventId(state.thread.id),
      threadId: state.thread.id,
      ...(scope.runId && { runId: scope.runId }),
      ...(scope.nodeId && { nodeId: scope.nodeId }),
      ...(scope.driver && { driver: state.provider }),
      providerInstanceId: state.thread.providerInstanceId,
      occurredAt: this.now(),
      type,
      payload: structuredClone(payload),
    };
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
    return this.emitEvent(state, type, run, { runId: run.id, nodeId: run.rootNodeId });
  }

  private putItem(state: ThreadState, item: TurnItem): number {
    item.updatedAt = this.now();
    this.upsert(state.items, item);
    this.touch(state);
    return this.emitEvent(state, "turn-item.updated", item, { runId: item.runId, nodeId: item.nodeId, driver: item.providerTurnId !== null });
  }

  private putRequest(state: ThreadState, request: RuntimeRequest, runId: string | null): number {
    this.upsert(state.requests, request);
    this.touch(state);
    return this.emitEvent(state, "runtime-request.updated", request, { runId, nodeId: request.nodeId, driver: true });
  }

  private putSubagent(state: ThreadState, subagent: Subagent): number {
    subagent.updatedAt = this.now();
    this.upsert(state.subagents, subagent);
    this.touch(state);
    return this.emitEvent(state, "subagent.updated", subagent, { runId: subagent.runId, nodeId: subagent.parentNodeId });
  }

  private putMessage(state: ThreadState, message: ConversationMessage): number {
    message.updatedAt = this.now();
    this.upsert(state.messages, message);
    return this.emitEvent(state, "message.updated", message, { runId: message.runId, nodeId: message.nodeId });
  }

  private putAttempt(state: ThreadState, attempt: RunAttempt, type: "run-attempt.created" | "run-attempt.updated" = "run-attempt.updated"): void {
    this.upsert(state.attempts, attempt);
    this.emitEvent(state, type, attempt, { runId: attempt.runId, nodeId: attempt.rootNodeId });
  }

  private putNode(state: ThreadState, node: RunNode): void {
    this.upsert(state.nodes, node);
    this.emitEvent(state, "node.updated", node, { runId: node.runId, nodeId: node.id });
  }

  private putProviderThread(state: ThreadState, status: ProviderThread["status"], run: Run): void {
    const now = this.now();
    const existing = state.providerThreads[0];
    const providerThread: ProviderThread = existing
      ? { ...existing, status, lastRunOrdinal: run.ordinal, updatedAt: now, ...(status === "active" && !existing.nativeThreadRef && { nativeThreadRef: { driver: state.provider, nativeId: randomUUID(), strength: "strong" as const } }) }
      : {
          id: ids.providerThreadId(state.provider, run.id),
          driver: state.provider,
          providerInstanceId: state.thread.providerInstanceId,
          providerSessionId: ids.providerSessionId(state.provider),
          appThreadId: state.thread.id,
          ownerNodeId: null,
          nativeThreadRef: null,
          nativeConversationHeadRef: null,
          status,
          firstRunOrdinal: run.ordinal,
          lastRunOrdinal: run.ordinal,
          handoffIds: [],
          forkedFrom: null,
          pendingBackgroundTasks: [],
          createdAt: now,
          updatedAt: now,
        };
    this.upsert(state.providerThreads, providerThread);
    this.emitEvent(state, "provider-thread.updated", providerThread, { driver: status !== "idle" });
  }

  private putProviderTurn(state: ThreadState, runner: Runner, status: ProviderTurn["status"]): void {
    if (!runner.providerTurn) return;
    runner.providerTurn = { ...runner.providerTurn, status, ...(status !== "running" && { completedAt: this.now() }) };
    this.upsert(state.providerTurns, runner.providerTurn);
    this.emitEvent(state, "provider-turn.updated", runner.providerTurn, { runId: runner.run.id, nodeId: runner.run.rootNodeId, driver: true });
  }

  /**
   * The provider instance's session, shared by every thread of that provider. It reports the
   * provider's own trouble only: a failed turn leaves it `ready` with `lastError` null.
   */
  private putSession(state: ThreadState): void {
    const existing = state.sessions[0];
    const now = this.now();
    const session: ProviderSession = existing
      ? { ...existing, status: "ready", updatedAt: now }
      : {
          id: ids.providerSessionId(state.provider),
          driver: state.provider,
          providerInstanceId: state.thread.providerInstanceId,
          status: "ready",
          cwd: this.projects.get(state.thread.projectId)?.workspaceRoot ?? `/home/user/${state.thread.projectId}`,
          model: state.thread.modelSelection.model,
          capabilities: capabilitiesFor(state.provider),
          createdAt: now,
          updatedAt: now,
          lastError: null,
        };
    this.upsert(state.sessions, session);
    if (!existing) this.emitEvent(state, "provider-session.attached", session, { driver: true });
    this.emitEvent(state, "provider-session.updated", session, { driver: true });
  }

  private putThread(state: ThreadState, type: string): number {
    this.touch(state);
    return this.emitEvent(state, type, state.thread);
  }

  private rootNode(state: ThreadState, run: Run): RunNode {
    return state.nodes.find((node) => node.id === run.rootNodeId)!;
  }

  private setRootNode(state: ThreadState, run: Run, status: ItemStatus): void {
    const node = this.rootNode(state, run);
    const now = this.now();
    this.putNode(state, {
      ...node,
      status,
      providerThreadId: run.providerThreadId,
      ...(status === "running" && { startedAt: node.startedAt ?? now }),
      ...((status === "completed" || status === "failed" || status === "interrupted" || status === "cancelled") && { completedAt: now }),
    });
  }

  private setAttempt(state: ThreadState, run: Run, status: RunAttempt["status"]): void {
    const attempt = state.attempts.find((entry) => entry.id === run.activeAttemptId);
    if (!attempt) return;
    const now = this.now();
    this.putAttempt(state, { ...attempt, status, ...(status === "running" && { startedAt: now }), ...(status !== "running" && status !== "pending" && { completedAt: now }) });
  }

  /** A provider-side node (an item the provider made, or a runtime request) of the active run. */
  private providerNode(state: ThreadState, runner: Runner, id: string, kind: RunNode["kind"], status: ItemStatus, extra: Partial<RunNode> = {}): RunNode {
    const existing = state.nodes.find((node) => node.id === id);
    const now = this.now();
    const node: RunNode = existing
      ? { ...existing, status, ...(TERMINAL_ITEM.has(status) && { completedAt: now }) }
      : {
          id,
          threadId: state.thread.id,
          runId: runner.run.id,
          parentNodeId: runner.run.rootNodeId,
          rootNodeId: runner.run.rootNodeId!,
          kind,
          status,
          countsForRun: false,
          providerThreadId: runner.run.providerThreadId,
          providerTurnId: runner.providerTurn?.id ?? null,
          nativeItemRef: null,
          runtimeRequestId: null,
          checkpointScopeId: null,
          startedAt: now,
          completedAt: TERMINAL_ITEM.has(status) ? now : null,
          ...extra,
        };
    this.putNode(state, node);
    return node;
  }

  private nextOrdinal(state: ThreadState, run: Run | undefined): number {
    if (!run) return state.items.filter((item) => item.runId === null).length + 1;
    return run.ordinal * ORDINALS_PER_RUN + state.items.filter((item) => item.runId === run.id).length + 1;
  }

  private newItem(state: ThreadState, run: Run | undefined, status: ItemStatus, title: string | null, where: { id?: string; nodeId?: string | null; providerTurnId?: string | null; native?: string } = {}): Omit<TurnItem, "type"> {
    const now = this.now();
    return {
      id: where.id ?? `turn-item:${shortId()}`,
      threadId: state.thread.id,
      runId: run?.id ?? null,
      nodeId: where.nodeId !== undefined ? where.nodeId : (run?.rootNodeId ?? null),
      providerThreadId: run?.providerThreadId ?? null,
      providerTurnId: where.providerTurnId ?? null,
      nativeItemRef: where.native ? { driver: state.provider, nativeId: where.native, strength: "strong" } : null,
      parentItemId: null,
      ordinal: this.nextOrdinal(state, run),
      status,
      title,
      startedAt: now,
      completedAt: TERMINAL_ITEM.has(status) ? now : null,
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
    // A waiting queue outranks the active run in the row's status; the active run stays in activityRunStatus.
    const status = queued ? "queued" : (active?.status ?? latest?.status ?? "idle");
    const pending = state.requests.find((request) => request.status === "pending");
    const visible = [...state.messages].reverse().find((message) => message.role !== "system");
    const latestUser = [...state.messages].reverse().find((message) => message.role === "user");
    const t = state.thread;
    return {
      createdBy: t.createdBy,
      creationSource: t.creationSource,
      id: t.id,
      projectId: t.projectId,
      title: t.title,
      providerInstanceId: t.providerInstanceId,
      modelSelection: t.modelSelection,
      runtimeMode: t.runtimeMode,
      interactionMode: t.interactionMode,
      branch: t.branch,
      worktreePath: t.worktreePath,
      ...(t.historyOrigin && { historyOrigin: t.historyOrigin }),
      lineage: t.lineage,
      forkedFrom: t.forkedFrom,
      activeProviderThreadId: t.activeProviderThreadId,
      latestRunId: latest?.id ?? null,
      latestRunRequestedAt: latest?.requestedAt ?? null,
      latestRunStartedAt: latest?.startedAt ?? null,
      latestRunCompletedAt: latest?.completedAt ?? null,
      activeRunId: active?.id ?? null,
      activityRunStatus: active ? (active.status as "preparing" | "starting" | "running" | "waiting") : null,
      status,
      // The provider session's error, not the turn's: a failed turn keeps it null (the reason is the error item).
      lastError: state.sessions[0]?.lastError ?? null,
      pendingRuntimeRequest: pending ? { id: pending.id, kind: pending.kind, createdAt: pending.createdAt } : null,
      latestVisibleMessage: visible ? { id: visible.id, role: visible.role, text: visible.text.slice(0, 500), updatedAt: visible.updatedAt } : null,
      latestUserMessageAt: latestUser?.createdAt ?? null,
      hasActionableProposedPlan: false,
      pendingBackgroundTasks: state.pendingBackgroundTasks,
      itemCount: state.items.length,
      visibleItemCount: state.items.length,
      createdAt: t.createdAt,
      updatedAt: t.updatedAt,
      archivedAt: t.archivedAt,
      settledOverride: t.settledOverride,
      settledAt: t.settledAt,
      snoozedUntil: t.snoozedUntil,
      snoozedAt: t.snoozedAt,
      pinnedAt: null,
      pinOrderKey: null,
      lastVisitedAt: t.lastVisitedAt,
      titleRegeneration: null,
      deletedAt: t.deletedAt,
    };
  }

  isShellVisible(state: ThreadState): boolean {
    return state.thread.deletedAt === null;
  }

  private liveProjects(): ProjectShell[] {
    return [...this.projects.values()];
  }

  shellSnapshot(): Record<string, unknown> {
    const rows = [...this.threads.values()].filter((state) => this.isShellVisible(state));
    return {
      schemaVersion: SHELL_SCHEMA_VERSION,
      snapshotSequence: this.sequence,
      threads: rows.filter((state) => state.location === "active").map((state) => this.shellRow(state)),
      archivedThreads: rows.filter((state) => state.location === "archive").map((state) => this.shellRow(state)),
      projects: this.liveProjects(),
    };
  }

  /**
   * The shell item T3 sends to refresh project metadata (repository identities): a snapshot with no
   * thread rows at all. It opens every resume and follows project and thread creation; it says
   * nothing about which threads exist.
   */
  metadataSnapshotItem(): Record<string, unknown> {
    const projects = this.liveProjects();
    return {
      kind: "snapshot",
      snapshot: { schemaVersion: SHELL_SCHEMA_VERSION, snapshotSequence: this.sequence, threads: [], archivedThreads: [], projects },
      resolvedRepositoryIdentityRoots: projects.map((project) => project.workspaceRoot),
    };
  }

  archivedShellSnapshot(): Record<string, unknown> {
    const rows = [...this.threads.values()].filter((state) => this.isShellVisible(state) && state.location === "archive");
    return { schemaVersion: SHELL_SCHEMA_VERSION, snapshotSequence: this.sequence, projects: this.liveProjects(), threads: rows.map((state) => this.shellRow(state)) };
  }

  /** The projects as `GET /api/projects` and `projects.mutate` give them (with `deletedAt`, without the shell's env mode). */
  projectRecord(project: ProjectShell): Record<string, unknown> {
    const { defaultThreadEnvMode: _mode, ...rest } = project;
    return { id: rest.id, title: rest.title, workspaceRoot: rest.workspaceRoot, repositoryIdentity: rest.repositoryIdentity, faviconPath: rest.faviconPath, defaultModelSelection: rest.defaultModelSelection, scripts: rest.scripts, createdAt: rest.createdAt, updatedAt: rest.updatedAt, deletedAt: null };
  }

  /** The thread projection. `bounded` keeps the latest items only; every non-terminal run stays. */
  projection(state: ThreadState, bounded?: { maxItems: number }): Record<string, unknown> {
    const sorted = [...state.items].sort((a, b) => a.ordinal - b.ordinal);
    const items = bounded ? sorted.slice(-bounded.maxItems) : sorted;
    return {
      thread: state.thread,
      runs: state.runs,
      attempts: state.attempts,
      nodes: state.nodes,
      subagents: state.subagents,
      subagentActivations: [],
      providerSessions: state.sessions,
      providerThreads: state.providerThreads,
      providerTurns: state.providerTurns,
      runtimeRequests: state.requests,
      messages: state.messages,
      plans: [],
      turnItems: items,
      checkpointScopes: state.checkpointScopes,
      checkpoints: state.checkpoints,
      contextHandoffs: [],
      contextTransfers: [],
      visibleTurnItems: items.map((item, position) => ({ position, visibility: "local", sourceThreadId: state.thread.id, sourceItemId: item.id, item })),
      updatedAt: state.thread.updatedAt,
    };
  }

  // ------------------------------------------------------------------ seeding and control

  addProject(project: Pick<ProjectShell, "id" | "title" | "workspaceRoot"> & Partial<ProjectShell>): ProjectShell {
    const now = this.now();
    const row: ProjectShell = { ...projectDefaults(), ...project, createdAt: project.createdAt ?? now, updatedAt: project.updatedAt ?? now };
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
    runtimeMode?: AppThread["runtimeMode"];
    model?: string;
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
      attempts: [],
      nodes: [],
      providerThreads: [],
      providerTurns: [],
      checkpointScopes: [],
      checkpoints: [],
      pendingBackgroundTasks: [],
      thread: {
        createdBy: options.createdBy ?? "user",
        creationSource: options.creationSource ?? "web",
        id,
        projectId: options.projectId,
        title: options.title,
        providerInstanceId: provider,
        modelSelection: { instanceId: provider, model: options.model ?? PROVIDERS[provider].model },
        runtimeMode: options.runtimeMode ?? "full-access",
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
        snoozedUntil: null,
        snoozedAt: null,
        lastVisitedAt: null,
        deletedAt: null,
      },
    };
    this.threads.set(id, state);
    if (options.emit !== false) {
      this.putThread(state, "thread.created");
      this.emit("enrichment");
    }
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

  /**
   * Ends a `hold` or `background` step of the thread's active run. A run that has not reached its
   * hold yet (still starting, or a step before it) gets the release when it does: the caller says
   * the long task is over, whenever the agent gets there.
   */
  release(threadId: string): boolean {
    const state = this.threads.get(threadId);
    const runner = state?.runner;
    if (!state || !runner) return false;
    if (!runner.blockedOn || (runner.blockedOn.kind !== "hold" && runner.blockedOn.kind !== "background")) {
      const ahead = runner.steps.slice(runner.index).some((step) => step.kind === "hold" || step.kind === "background");
      if (ahead) runner.releases++;
      return ahead;
    }
    if (runner.blockedOn.kind === "background") {
      state.pendingBackgroundTasks = [];
      runner.blockedOn = undefined;
      this.finishRun(state, runner);
      return true;
    }
    runner.blockedOn = undefined;
    this.schedule(state, () => this.step(state));
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

  /** `projects.mutate` with `project.create`: the project row, and a shell refresh after it. */
  createProject(command: { commandId: string; projectId: string; title: string; workspaceRoot: string }): Record<string, unknown> {
    const existing = this.projects.get(command.projectId);
    const project = existing ?? this.addProject({ id: command.projectId, title: command.title, workspaceRoot: command.workspaceRoot });
    if (!existing) this.emit("enrichment");
    return this.projectRecord(project);
  }

  private require(threadId: string, commandType: string, commandId: string): ThreadState {
    const state = this.threads.get(threadId);
    if (!state || state.thread.deletedAt) throw new DispatchError(commandId, commandType, `Thread '${threadId}' does not exist.`);
    return state;
  }

  private apply(command: ClientCommandV2): void {
    const fail = (message: string, detail?: string): never => {
      throw new DispatchError(command.commandId, command.type, message, detail ?? message);
    };
    switch (command.type) {
      case "thread.create": {
        if (this.threads.has(command.threadId)) fail(`Thread '${command.threadId}' already exists.`);
        // The real engine takes a thread for a project it does not know; its first message fails.
        const provider = (command.modelSelection.instanceId in PROVIDERS ? command.modelSelection.instanceId : "codex") as ProviderKind;
        this.createThread({
          threadId: command.threadId,
          projectId: command.projectId,
          title: command.title,
          provider,
          model: command.modelSelection.model,
          createdBy: command.createdBy,
          creationSource: command.creationSource,
          ...(command.runtimeMode && { runtimeMode: command.runtimeMode }),
        });
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
        if (!run) fail(`Run ${command.runId} does not exist.`);
        if (run!.status === "queued") fail(`Run ${command.runId} is queued; cancel it with queued-run.cancel.`);
        const runner = state.runner;
        // Once the answer is final (waiting) the run finishes on its own: T3 refuses to interrupt it.
        if (TERMINAL_RUN_STATUSES.has(run!.status) || runner?.run.id !== run!.id || runner.phase === "waiting" || runner.phase === "interrupting") fail(`Run ${command.runId} is not interruptible.`);
        this.interrupt(state, runner!, command.reason);
        return;
      }
      case "thread.snooze": {
        // The real engine's checks: not archived, a wake time in the future, no pending request, no queued run.
        const state = this.require(command.threadId, command.type, command.commandId);
        if (state.thread.archivedAt !== null) fail(`Thread ${command.threadId} is archived.`);
        if (!(Date.parse(command.snoozedUntil) > Date.parse(this.now()))) fail(`Thread ${command.threadId} snooze wake time ${command.snoozedUntil} is not in the future.`);
        if (state.requests.some((request) => request.status === "pending")) fail(`Thread ${command.threadId} has a pending approval or user-input request and cannot be snoozed.`);
        if (state.runs.some((run) => run.status === "queued")) fail(`Thread ${command.threadId} has a queued run and cannot be snoozed.`);
        const sameWake = state.thread.snoozedUntil !== null && Date.parse(state.thread.snoozedUntil) === Date.parse(command.snoozedUntil);
        state.thread.snoozedAt = sameWake ? state.thread.snoozedAt : this.now();
        state.thread.snoozedUntil = new Date(command.snoozedUntil).toISOString();
        this.putThread(state, "thread.snoozed");
        return;
      }
      case "queued-run.cancel": {
        const state = this.require(command.threadId, command.type, command.commandId);
        const run = state.runs.find((entry) => entry.id === command.runId);
        if (!run || run.status !== "queued") fail(`Run ${command.runId} is not queued.`);
        this.putRun(state, { ...run!, status: "cancelled", queuePosition: null, completedAt: this.now() });
        this.renumberQueue(state);
        return;
      }
    }
  }

  private messageDispatch(command: Extract<ClientCommandV2, { type: "message.dispatch" }>): void {
    const state = this.require(command.threadId, command.type, command.commandId);
    const fail = (message: string): never => {
      throw new DispatchError(command.commandId, command.type, message, message);
    };
    if (command.attachments.some((attachment) => typeof attachment === "object" && attachment !== null && "dataUrl" in attachment)) {
      fail("Inline attachment data is not accepted; persist attachments first.");
    }
    if (!this.projects.has(state.thread.projectId)) fail(`Project ${state.thread.projectId} was not found for thread ${state.thread.id}.`);
    const runner = state.runner;
    const mode = command.dispatchMode;
    if (mode.type === "defer_start" || mode.type === "restart_active") fail(`Dispatch mode ${mode.type} is not supported by this simulator.`);
    if (mode.type === "steer_active") {
      const target = state.runs.find((run) => run.id === mode.targetRunId);
      if (!target) fail(`Target run ${mode.targetRunId} does not exist.`);
      // A run that is finishing (waiting) or over cannot take a steer; T3 names the run's state.
      if (!runner || runner.run.id !== mode.targetRunId || runner.phase === "waiting" || runner.phase === "interrupting" || runner.blockedOn?.kind === "background") {
        fail(`Target run ${mode.targetRunId} is ${runner?.run.id === mode.targetRunId ? "completed" : target!.status} and cannot be steered.`);
      }
      // The run reads running a moment before its provider turn does; a steer needs the turn.
      if (runner!.providerTurn?.status !== "running") fail(`No running provider turn found for active run ${mode.targetRunId}.`);
      if (!V2_ACTIVE_STEERING[state.provider]) fail(`${PROVIDERS[state.provider].label} does not support steering.`);
      this.steer(state, runner!, command);
      return;
    }
    // New activity wakes a snoozed thread, as the real engine does.
    if (state.thread.snoozedUntil !== null) {
      state.thread.snoozedUntil = null;
      state.thread.snoozedAt = null;
      this.putThread(state, "thread.unsnoozed");
    }
    const ordinal = state.runs.length + 1;
    const busy = runner !== undefined || state.runs.some((run) => run.status === "queued");
    const id = ids.runId(state.thread.id, ordinal);
    const rootNodeId = ids.rootNodeId(id);
    const providerThreadId = state.providerThreads[0]?.id ?? ids.providerThreadId(state.provider, id);
    const now = this.now();
    const run: Run = {
      id,
      threadId: state.thread.id,
      ordinal,
      providerInstanceId: state.thread.providerInstanceId,
      modelSelection: command.modelSelection ? { instanceId: command.modelSelection.instanceId, model: command.modelSelection.model } : state.thread.modelSelection,
      providerThreadId,
      userMessageId: command.messageId,
      rootNodeId,
      activeAttemptId: ids.attemptId(id),
      status: busy ? "queued" : "starting",
      queuePosition: busy ? state.runs.filter((entry) => entry.status === "queued").length + 1 : null,
      requestedAt: now,
      startedAt: null,
      completedAt: null,
      checkpointId: null,
      contextHandoffId: null,
    };
    const steps = state.nextScript ?? stepsFromText(state.provider, command.text);
    state.nextScript = undefined;
    this.pendingTexts.set(run.id, { text: command.text, steps, createdBy: command.createdBy, creationSource: command.creationSource });
    if (!busy) this.putProviderThread(state, "not_loaded", run);
    this.putRun(state, run, "run.created");
    this.putAttempt(state, { id: run.activeAttemptId!, runId: id, attemptOrdinal: 1, rootNodeId, providerInstanceId: run.providerInstanceId, providerThreadId, providerTurnId: null, reason: "initial", status: "pending", startedAt: null, completedAt: null }, "run-attempt.created");
    this.putNode(state, {
      id: rootNodeId,
      threadId: state.thread.id,
      runId: id,
      parentNodeId: null,
      rootNodeId,
      kind: "root_turn",
      status: "pending",
      countsForRun: true,
      providerThreadId,
      providerTurnId: null,
      nativeItemRef: null,
      runtimeRequestId: null,
      checkpointScopeId: ids.checkpointScopeId(state.thread.id),
      startedAt: null,
      completedAt: null,
    });
    const scope: CheckpointScope = {
      id: ids.checkpointScopeId(state.thread.id),
      threadId: state.thread.id,
      runId: id,
      nodeId: rootNodeId,
      parentScopeId: null,
      providerThreadId,
      kind: "root_run",
      ordinalWithinParent: 0,
      advancesAppRunCount: true,
      cwd: this.projects.get(state.thread.projectId)?.workspaceRoot ?? "/",
      createdAt: now,
    };
    this.upsert(state.checkpointScopes, scope);
    this.emitEvent(state, "checkpoint-scope.created", scope, { runId: id, nodeId: rootNodeId });
    // The message exists from the dispatch on; a queued one gets its turn item only when its run starts.
    this.putMessage(state, { createdBy: command.createdBy, creationSource: command.creationSource, id: command.messageId, threadId: state.thread.id, runId: id, nodeId: rootNodeId, role: "user", text: command.text, attachments: [], streaming: false, createdAt: now, updatedAt: now });
    if (!busy) this.startRun(state, run);
  }

  private readonly pendingTexts = new Map<string, { text: string; steps: AgentStep[]; createdBy: AppThread["createdBy"]; creationSource: AppThread["creationSource"] }>();

  private respond(command: Extract<ClientCommandV2, { type: "runtime-request.respond" }>): void {
    const state = this.require(command.threadId, command.type, command.commandId);
    const request = state.requests.find((entry) => entry.id === command.requestId);
    const fail = (message: string): never => {
      throw new DispatchError(command.commandId, command.type, message, message);
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
    this.responses.set(request!.id, { ...(command.decision !== undefined && { decision: command.decision }), ...(command.answers !== undefined && { answers: command.answers }) });
    // The recorded engine resolves a request without saying how it was answered.
    this.putRequest(state, { ...request!, status: "resolved", resolvedAt: this.now() }, runner?.run.id ?? null);
    if (runner) this.providerNode(state, runner, request!.nodeId, "runtime_request", "completed");
    if (item) this.putItem(state, { ...item, status: "completed", completedAt: this.now() });
    if (runner?.blockedOn?.kind === "request" && runner.blockedOn.requestId === request!.id) {
      runner.blockedOn = undefined;
      if (command.decision === "decline" || command.decision === "cancel") {
        // The guarded tool does not run.
        if (runner.steps[runner.index]?.kind === "tool") runner.index++;
        if (runner.openCommand) {
          this.putItem(state, { ...runner.openCommand, status: "cancelled", completedAt: this.now() });
          runner.openCommand = undefined;
        }
      }
      if (command.decision === "cancel") {
        this.interrupt(state, runner, "The request was cancelled.");
        return;
      }
      if (command.answers) {
        const summary = Object.entries(command.answers)
          .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join("+") : String(value)}`)
          .join(", ");
        runner.steps.splice(runner.index, 0, { kind: "reply", text: `Thanks (${summary}).` });
      }
      this.schedule(state, () => this.step(state));
    }
  }

  // ------------------------------------------------------------------ the agent

  /** Starts a run (now, or when the one before it ends): the user's turn item, then the provider after a tick. */
  private startRun(state: ThreadState, queued: Run): void {
    const pending = this.pendingTexts.get(queued.id);
    this.pendingTexts.delete(queued.id);
    const wasQueued = queued.status === "queued";
    if (wasQueued) this.putProviderThread(state, "not_loaded", queued);
    const run: Run = { ...queued, status: "starting", queuePosition: null };
    state.thread.activeProviderThreadId = run.providerThreadId;
    const base = this.newItem(state, run, "completed", null, { id: ids.userMessageItemId(run.userMessageId) });
    this.putItem(state, { ...base, type: "user_message", createdBy: pending?.createdBy ?? "user", creationSource: pending?.creationSource ?? "web", messageId: run.userMessageId, inputIntent: wasQueued ? "queued_turn" : "turn_start", text: pending?.text ?? "", attachments: [] });
    if (wasQueued) {
      this.putRun(state, run);
      this.renumberQueue(state);
    } else {
      this.upsert(state.runs, run);
    }
    const runner: Runner = { run, steps: pending?.steps ?? [{ kind: "reply", text: "Done." }], index: 0, phase: "starting", releases: 0, replies: [], steered: [] };
    state.runner = runner;
    this.schedule(state, () => this.attachProvider(state, runner));
  }

  /** The provider session takes the run: running, then the provider's turn starts. */
  private attachProvider(state: ThreadState, runner: Runner): void {
    if (state.runner !== runner || runner.phase !== "starting") return;
    this.putSession(state);
    this.putProviderThread(state, "active", runner.run);
    this.setRunStatus(state, runner, "running", { startedAt: this.now() });
    this.setAttempt(state, runner.run, "running");
    this.setRootNode(state, runner.run, "running");
    runner.phase = "running";
    this.schedule(state, () => {
      if (state.runner !== runner || runner.phase !== "running") return;
      const native = randomUUID();
      const now = this.now();
      runner.providerTurn = {
        id: ids.providerTurnId(state.provider, native),
        providerThreadId: runner.run.providerThreadId!,
        nodeId: runner.run.rootNodeId!,
        runAttemptId: runner.run.activeAttemptId!,
        nativeTurnRef: { driver: state.provider, nativeId: native, strength: "strong" },
        ordinal: state.providerTurns.length + 1,
        status: "running",
        startedAt: now,
        completedAt: null,
      };
      this.putProviderTurn(state, runner, "running");
      this.schedule(state, () => this.step(state));
    });
  }

  /** A steer joins the running run: the user's message in the same run, and the provider adjusts its answer. */
  private steer(state: ThreadState, runner: Runner, command: Extract<ClientCommandV2, { type: "message.dispatch" }>): void {
    const run = runner.run;
    const now = this.now();
    this.putMessage(state, { createdBy: command.createdBy, creationSource: command.creationSource, id: command.messageId, threadId: state.thread.id, runId: run.id, nodeId: run.rootNodeId, role: "user", text: command.text, attachments: [], streaming: false, createdAt: now, updatedAt: now });
    const base = this.newItem(state, run, "completed", null, { id: ids.userMessageItemId(command.messageId) });
    this.putItem(state, { ...base, type: "user_message", createdBy: command.createdBy, creationSource: command.creationSource, messageId: command.messageId, inputIntent: "steer", text: command.text, attachments: [] });
    // The provider folds the steer into the answer it is writing. Whatever the run waits on (a held
    // task, a request) it keeps waiting on: a steer never lets a held run slip past its release.
    const note = ` [steered: ${command.text.replace(/#\S+/g, "").trim()}]`;
    const last = runner.replies.at(-1);
    if (last) last.text += note;
    else runner.steered.push(note);
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

  private schedule(state: ThreadState, next: () => void): void {
    const runner = state.runner;
    if (!runner || this.halted) return;
    clearTimeout(runner.timer);
    runner.timer = setTimeout(() => {
      if (!this.halted) next();
    }, this.options.tickMs);
  }

  /**
   * Assistant text. With legacy token streaming it goes out as it comes (cumulative updates, then
   * the final one). Otherwise each message waits for the end of the provider turn; a steer's text
   * joins the message being written.
   */
  private say(state: ThreadState, runner: Runner, said: string, chunks: number): void {
    const text = said + runner.steered.join("");
    runner.steered = [];
    const native = `msg_${randomUUID()}`;
    const reply: PendingReply = { nativeId: native, text, startedAt: this.now(), itemId: ids.nativeItemId(state.provider, native), messageId: ids.assistantMessageId(state.provider, native) };
    if (!this.settings.enableLegacyTokenStreaming) {
      runner.replies.push(reply);
      return;
    }
    // The text is cumulative on the wire: each update carries everything so far.
    for (let chunk = 1; chunk < chunks; chunk++) this.putReply(state, runner, reply, text.slice(0, Math.ceil((text.length * chunk) / chunks)), true);
    this.putReply(state, runner, reply, text, false);
  }

  /** One assistant message as its turn item; its conversation message (and, once final, its node) come first. */
  private putReply(state: ThreadState, runner: Runner, reply: PendingReply, text: string, streaming: boolean): void {
    const run = runner.run;
    const nodeId = ids.nativeNodeId(state.provider, reply.nativeId);
    const existing = state.items.find((item) => item.id === reply.itemId);
    if (!streaming) this.providerNode(state, runner, nodeId, "provider_item", "completed", { nativeItemRef: { driver: state.provider, nativeId: reply.nativeId, strength: "strong" } });
    this.putMessage(state, { createdBy: "agent", creationSource: "provider", id: reply.messageId, threadId: state.thread.id, runId: run.id, nodeId, role: "assistant", text, attachments: [], streaming, createdAt: reply.startedAt, updatedAt: this.now() });
    const base = existing ?? this.newItem(state, run, "running", null, { id: reply.itemId, nodeId, providerTurnId: runner.providerTurn?.id ?? null, native: reply.nativeId });
    this.putItem(state, { ...base, status: streaming ? "running" : "completed", completedAt: streaming ? null : this.now(), type: "assistant_message", messageId: reply.messageId, text, streaming });
  }

  /** The provider turn is over (answered, failed or interrupted): the buffered messages go out, whole. */
  private flushReply(state: ThreadState, runner: Runner): void {
    if (runner.steered.length > 0) this.say(state, runner, "", 1);
    const replies = runner.replies;
    runner.replies = [];
    for (const reply of replies) this.putReply(state, runner, reply, reply.text, false);
  }

  private step(state: ThreadState): void {
    this.stepOnce(state);
    // Not a wire event: buffered text and holds change nothing a client sees; tests wait on it.
    this.emit("step", state.thread.id);
  }

  private stepOnce(state: ThreadState): void {
    const runner = state.runner;
    if (!runner || runner.blockedOn || runner.phase !== "running" || this.halted) return;
    const step = runner.steps[runner.index];
    if (!step) {
      this.settle(state, runner);
      return;
    }
    runner.index++;
    const run = runner.run;
    const turnId = runner.providerTurn?.id ?? null;
    switch (step.kind) {
      case "reply":
        this.say(state, runner, step.text, Math.max(1, step.chunks ?? 1));
        break;
      case "tool": {
        if (runner.openCommand) {
          const open = runner.openCommand;
          runner.openCommand = undefined;
          this.providerNode(state, runner, open.nodeId!, "provider_item", step.exitCode ? "failed" : "completed");
          this.putItem(state, { ...open, status: step.exitCode ? "failed" : "completed", completedAt: this.now(), output: "", exitCode: step.exitCode ?? 0 });
          break;
        }
        const native = `call_${randomUUID()}`;
        const node = this.providerNode(state, runner, ids.nativeNodeId(state.provider, native), "provider_item", "running", { nativeItemRef: { driver: state.provider, nativeId: native, strength: "strong" } });
        const base = this.newItem(state, run, "running", null, { id: ids.nativeItemId(state.provider, native), nodeId: node.id, providerTurnId: turnId, native });
        this.putItem(state, { ...base, type: "command_execution", input: step.command, output: null });
        this.providerNode(state, runner, node.id, "provider_item", step.exitCode ? "failed" : "completed");
        this.putItem(state, { ...base, status: step.exitCode ? "failed" : "completed", completedAt: this.now(), type: "command_execution", input: step.command, output: "", exitCode: step.exitCode ?? 0 });
        break;
      }
      case "file": {
        const native = `call_${randomUUID()}`;
        const base = this.newItem(state, run, "completed", step.fileName, { id: ids.nativeItemId(state.provider, native), nodeId: ids.nativeNodeId(state.provider, native), providerTurnId: turnId, native });
        this.putItem(state, { ...base, type: "file_change", fileName: step.fileName, additions: 3, deletions: 1 });
        break;
      }
      case "approval":
      case "question": {
        this.openRequest(state, runner, step);
        return;
      }
      case "subagent": {
        this.startSubagent(state, runner, step);
        return;
      }
      case "fail": {
        this.flushReply(state, runner);
        this.putProviderTurn(state, runner, "failed");
        const base = this.newItem(state, run, "failed", null, { providerTurnId: turnId });
        this.putItem(state, { ...base, completedAt: this.now(), type: "error", failure: { class: step.failureClass, message: step.message, code: step.code ?? null, retryable: step.failureClass === "transport_error" ? true : null } });
        this.endRun(state, runner, "failed");
        return;
      }
      case "hold":
        if (runner.releases > 0) {
          runner.releases--;
          break;
        }
        runner.blockedOn = { kind: "hold" };
        return;
      case "background": {
        // The answer is final; the run stays waiting until its background work drains (release).
        if (runner.releases > 0) {
          runner.releases--;
          break;
        }
        state.pendingBackgroundTasks = [{ taskId: `task-${shortId()}`, description: step.description }];
        runner.blockedOn = { kind: "background" };
        this.endProviderTurn(state, runner);
        return;
      }
    }
    this.schedule(state, () => this.step(state));
  }

  /**
   * An approval or a question. The provider's command item (for a command approval), the request
   * and its item leave together: a client sees the request and what it is about in one chunk.
   */
  private openRequest(state: ThreadState, runner: Runner, step: Extract<AgentStep, { kind: "approval" | "question" }>): void {
    const run = runner.run;
    const turnId = runner.providerTurn?.id ?? ids.providerTurnId(state.provider, randomUUID());
    const native = `call_${randomUUID()}`;
    const nativeRef = { driver: state.provider, nativeId: native, strength: "strong" as const };
    const guarded = runner.steps[runner.index];
    if (step.kind === "approval" && step.requestKind === "command" && guarded?.kind === "tool") {
      // The provider's command item opens with the request; the guarded tool step completes it.
      const node = this.providerNode(state, runner, ids.nativeNodeId(state.provider, native), "provider_item", "running", { nativeItemRef: nativeRef });
      const base = this.newItem(state, run, "running", null, { id: ids.nativeItemId(state.provider, native), nodeId: node.id, providerTurnId: turnId, native });
      runner.openCommand = { ...base, type: "command_execution", input: guarded.command, output: null };
      this.putItem(state, runner.openCommand);
    }
    const requestId = ids.runtimeRequestId(state.provider, turnId, native);
    const nodeId = ids.requestNodeId(requestId);
    this.providerNode(state, runner, nodeId, "runtime_request", "waiting", { runtimeRequestId: requestId, nativeItemRef: nativeRef });
    const request: RuntimeRequest = {
      id: requestId,
      nodeId,
      providerTurnId: turnId,
      nativeRequestRef: nativeRef,
      kind: step.kind === "approval" ? step.requestKind : "user_input",
      status: "pending",
      responseCapability: { type: "live", providerSessionId: state.sessions[0]?.id ?? ids.providerSessionId(state.provider) },
      createdAt: this.now(),
      resolvedAt: null,
    };
    this.putRequest(state, request, run.id);
    const base = this.newItem(state, run, "waiting", null, { id: ids.requestItemId(requestId), nodeId, providerTurnId: turnId, native });
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
      this.putItem(state, { ...base, title: "Questions", type: "user_input_request", requestId, questions: step.questions });
    }
    runner.blockedOn = { kind: "request", requestId };
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
      this.schedule(state, () => this.step(state));
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

  /** The provider turn ended with an answer: the buffered reply, then waiting while the checkpoint is taken. */
  private settle(state: ThreadState, runner: Runner): void {
    this.endProviderTurn(state, runner);
    this.schedule(state, () => this.finishRun(state, runner));
  }

  private endProviderTurn(state: ThreadState, runner: Runner): void {
    this.flushReply(state, runner);
    this.putProviderTurn(state, runner, "completed");
    this.setAttempt(state, runner.run, "completed");
    runner.phase = "waiting";
    this.setRunStatus(state, runner, "waiting");
    this.setRootNode(state, runner.run, "waiting");
    this.putProviderThread(state, "idle", runner.run);
  }

  /** Checkpoints captured: the run completes and the next queued run starts. */
  private finishRun(state: ThreadState, runner: Runner): void {
    if (state.runner !== runner) return;
    const scope = ids.checkpointScopeId(state.thread.id);
    const nodeId = runner.run.rootNodeId!;
    const now = this.now();
    // The first run also captures the baseline the thread started from.
    const ordinals = state.checkpoints.length === 0 ? [0, 1] : [state.checkpoints.length];
    let checkpointId = "";
    for (const ordinal of ordinals) {
      const previous = state.checkpoints.at(-1);
      checkpointId = ids.checkpointId(scope, ordinal);
      const checkpoint: Checkpoint = {
        id: checkpointId,
        threadId: state.thread.id,
        scopeId: scope,
        runId: ordinal === 0 ? null : runner.run.id,
        nodeId,
        parentCheckpointId: previous?.id ?? null,
        ordinalWithinScope: ordinal,
        appRunOrdinal: ordinal === 0 ? null : runner.run.ordinal,
        ref: `refs/t3/orchestration-v2/checkpoints/${Buffer.from(state.thread.id).toString("base64url")}/ordinal/${ordinal}`,
        status: "missing",
        files: [],
        capturedAt: now,
      };
      this.upsert(state.checkpoints, checkpoint);
      this.emitEvent(state, "checkpoint.captured", checkpoint, { ...(ordinal > 0 && { runId: runner.run.id }), nodeId, driver: true });
    }
    const base = this.newItem(state, runner.run, "completed", null, { id: ids.checkpointItemId(state.provider, checkpointId) });
    this.putItem(state, { ...base, type: "checkpoint", checkpointId, scopeId: scope, files: [] });
    this.endRun(state, runner, "completed", undefined, checkpointId);
  }

  /** `run.interrupt` accepted: the request item now, the provider's stop (and partial reply) a tick later. */
  private interrupt(state: ThreadState, runner: Runner, reason: string | undefined): void {
    const run = runner.run;
    const requests = state.items.filter((item) => item.type === "run_interrupt_request" && item.runId === run.id).length;
    const base = this.newItem(state, run, "completed", "Interrupt requested", { id: ids.runItemId(run.id, "interrupt-request", requests + 1) });
    this.putItem(state, { ...base, type: "run_interrupt_request", message: reason ?? "Interrupt requested" });
    runner.phase = "interrupting";
    runner.blockedOn = undefined;
    // A halted engine has no provider to wait for: the run ends at once (its queue stays put).
    if (this.halted) {
      this.endRun(state, runner, "interrupted", "Run interrupted by user");
      return;
    }
    this.schedule(state, () => {
      if (state.runner !== runner) return;
      this.endRun(state, runner, "interrupted", "Run interrupted by user");
    });
  }

  /** Ends the active run with its final status; the provider turn and attempt end with it, then the queue moves. */
  private endRun(state: ThreadState, runner: Runner, status: RunStatus, notice?: string, checkpointId?: string): void {
    clearTimeout(runner.timer);
    const run = runner.run;
    if (status !== "completed") {
      this.flushReply(state, runner);
      if (runner.providerTurn?.status === "running") this.putProviderTurn(state, runner, status === "failed" ? "failed" : "interrupted");
      this.setAttempt(state, run, status === "failed" ? "failed" : status === "cancelled" ? "cancelled" : "interrupted");
    }
    for (const request of state.requests) {
      if (request.status !== "pending") continue;
      this.putRequest(state, { ...request, status: "cancelled", resolvedAt: this.now() }, run.id);
      const item = state.items.find((entry) => (entry.type === "approval_request" || entry.type === "user_input_request") && entry.requestId === request.id);
      if (item) this.putItem(state, { ...item, status: "cancelled", completedAt: this.now() });
    }
    for (const subagent of state.subagents) {
      if (subagent.runId === run.id && (subagent.status === "running" || subagent.status === "pending")) {
        this.putSubagent(state, { ...subagent, status: status === "failed" ? "failed" : "interrupted", completedAt: this.now() });
      }
    }
    if (status === "interrupted") {
      const results = state.items.filter((item) => item.type === "run_interrupt_result" && item.runId === run.id).length;
      this.putItem(state, { ...this.newItem(state, run, "interrupted", "Interrupted", { id: ids.runItemId(run.id, "interrupt-result", results + 1) }), type: "run_interrupt_result", message: notice ?? "Run interrupted by user" });
    } else if (notice) {
      this.putItem(state, { ...this.newItem(state, run, "completed", null), type: "system_notice", message: notice });
    }
    state.pendingBackgroundTasks = [];
    state.runner = undefined;
    this.setRunStatus(state, runner, status, { completedAt: this.now(), ...(checkpointId && { checkpointId }) });
    const node = state.nodes.find((entry) => entry.id === run.rootNodeId);
    if (node) this.setRootNode(state, runner.run, status === "completed" ? "completed" : status === "failed" ? "failed" : status === "cancelled" ? "cancelled" : "interrupted");
    if (status !== "completed") this.putProviderThread(state, "idle", runner.run);
    const next = state.runs.filter((entry) => entry.status === "queued").sort((a, b) => a.ordinal - b.ordinal)[0];
    if (next && !this.halted) this.startRun(state, next);
  }
}

const TERMINAL_ITEM: ReadonlySet<ItemStatus> = new Set(["completed", "failed", "cancelled", "interrupted"]);
