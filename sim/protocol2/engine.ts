// The state of a simulated protocol-2 T3 server (docs/t3-protocols.md, "Protocol 2"), shaped after
// T3's real V2 engine: threads with lineage and their runs, items, requests, subagents and the
// engine's own entities (attempts, nodes, provider threads and turns, checkpoints). Every change is
// a full-entity domain event with one global sequence, kept in a log for resumes; the reads serve
// the shell and thread projections. Seeding is in seed.ts, the command decider in commands.ts, the
// scripted agent that drives runs in runner.ts.
import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import type { ClientCommandV2 } from "../../shared/t3/protocol2/commands";
import { CommandDecider } from "./commands";
import {
  type AgentStep,
  type DomainEvent,
  DispatchError,
  type EngineCore,
  type Runner,
  type StoredEvent,
  type ThreadSeed,
  type ThreadState,
  type V2Settings,
} from "./engine-types";
import * as ids from "./ids";
import {
  ACTIVE_RUN_STATUSES,
  type ConversationMessage,
  type Decision,
  type ItemStatus,
  type ProjectShell,
  type ProviderSession,
  type ProviderThread,
  type ProviderTurn,
  type Run,
  type RunAttempt,
  type RunNode,
  type RuntimeRequest,
  type Subagent,
  type TurnItem,
  capabilitiesFor,
} from "./model";
import { type LineageCommand, applyLineageCommand } from "./lineage-commands";
import { ScriptedAgent } from "./runner";
import { addProject, createThread, forkThread } from "./seed";

// The engine's data lives in engine-types.ts (so its collaborators need not import this module); its importers read it here.
export {
  type AgentStep,
  type DomainEvent,
  DispatchError,
  type EngineCore,
  type PendingReply,
  type Runner,
  type StoredEvent,
  type ThreadSeed,
  type ThreadState,
  type V2Settings,
} from "./engine-types";

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

export class V2Engine extends EventEmitter implements EngineCore {
  readonly projects = new Map<string, ProjectShell>();
  readonly threads = new Map<string, ThreadState>();
  readonly settings: V2Settings;
  /** What each runtime request was answered with: the wire's request has no decision (T3 before 006bb815). */
  readonly responses = new Map<string, { decision?: Decision; answers?: Record<string, unknown> }>();
  sequence: number;
  clockOffsetMs = 0;
  /** Threads its shell leaves out: a delegated task's child (lineage-commands.ts). */
  readonly outsideShell = new Set<string>();
  readonly agent: ScriptedAgent;
  private readonly commands: CommandDecider;
  private log: StoredEvent[] = [];

  constructor(private readonly options: { tickMs: number; firstSequence?: number; settings?: Partial<V2Settings>; reportsTokenUsage?: boolean }) {
    super();
    this.setMaxListeners(0);
    this.sequence = options.firstSequence ?? 0;
    this.settings = { enableLegacyTokenStreaming: false, ...options.settings };
    this.agent = new ScriptedAgent(this);
    this.commands = new CommandDecider(this, this.agent);
  }

  get reportsTokenUsage(): boolean {
    return this.options.reportsTokenUsage === true;
  }

  /** How long the agent takes per step. */
  get tickMs(): number {
    return this.options.tickMs;
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

  // ------------------------------------------------------------------ entity writes (for commands.ts and runner.ts)

  emitEvent(state: ThreadState, type: string, payload: unknown, scope: { runId?: string | null; nodeId?: string | null; driver?: boolean } = {}): number {
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

  touch(state: ThreadState): void {
    state.thread.updatedAt = this.now();
  }

  upsert<T extends { id: string }>(list: T[], entity: T): void {
    const index = list.findIndex((entry) => entry.id === entity.id);
    if (index === -1) list.push(entity);
    else list[index] = entity;
  }

  putRun(state: ThreadState, run: Run, type: "run.created" | "run.updated" = "run.updated"): number {
    this.upsert(state.runs, run);
    this.touch(state);
    return this.emitEvent(state, type, run, { runId: run.id, nodeId: run.rootNodeId });
  }

  putItem(state: ThreadState, item: TurnItem): number {
    item.updatedAt = this.now();
    this.upsert(state.items, item);
    this.touch(state);
    return this.emitEvent(state, "turn-item.updated", item, { runId: item.runId, nodeId: item.nodeId, driver: !APP_ITEMS.has(item.type) });
  }

  putRequest(state: ThreadState, request: RuntimeRequest, runId: string | null): number {
    this.upsert(state.requests, request);
    this.touch(state);
    return this.emitEvent(state, "runtime-request.updated", request, { runId, nodeId: request.nodeId, driver: true });
  }

  putSubagent(state: ThreadState, subagent: Subagent): number {
    subagent.updatedAt = this.now();
    this.upsert(state.subagents, subagent);
    this.touch(state);
    return this.emitEvent(state, "subagent.updated", subagent, { runId: subagent.runId, nodeId: subagent.parentNodeId });
  }

  putMessage(state: ThreadState, message: ConversationMessage): number {
    message.updatedAt = this.now();
    this.upsert(state.messages, message);
    return this.emitEvent(state, "message.updated", message, { runId: message.runId, nodeId: message.nodeId, driver: message.role === "assistant" });
  }

  putAttempt(state: ThreadState, attempt: RunAttempt, type: "run-attempt.created" | "run-attempt.updated" = "run-attempt.updated"): void {
    this.upsert(state.attempts, attempt);
    this.emitEvent(state, type, attempt, { runId: attempt.runId, nodeId: attempt.rootNodeId });
  }

  putNode(state: ThreadState, node: RunNode): void {
    this.upsert(state.nodes, node);
    this.emitEvent(state, "node.updated", node, { runId: node.runId, nodeId: node.id, driver: node.kind !== "root_turn" });
  }

  putProviderThread(state: ThreadState, status: ProviderThread["status"], run: Run): void {
    const now = this.now();
    const existing = state.providerThreads[0];
    const providerThread: ProviderThread = existing
      ? {
          ...existing,
          status,
          lastRunOrdinal: run.ordinal,
          updatedAt: now,
          ...(status === "active" &&
            !existing.nativeThreadRef && { nativeThreadRef: { driver: state.provider, nativeId: randomUUID(), strength: "strong" as const } }),
        }
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
    // The provider's own updates carry its driver; the app's (idle, and not_loaded again for a queued run) do not, as recorded.
    this.emitEvent(state, "provider-thread.updated", providerThread, { driver: status === "active" || (status === "not_loaded" && !existing) });
  }

  putProviderTurn(state: ThreadState, runner: Runner, status: ProviderTurn["status"]): void {
    if (!runner.providerTurn) return;
    runner.providerTurn = { ...runner.providerTurn, status, ...(status !== "running" && { completedAt: this.now() }) };
    this.upsert(state.providerTurns, runner.providerTurn);
    this.emitEvent(state, "provider-turn.updated", runner.providerTurn, { runId: runner.run.id, nodeId: runner.run.rootNodeId, driver: true });
  }

  /**
   * The provider instance's session, shared by every thread of that provider. It reports the
   * provider's own trouble only: a failed turn leaves it `ready` with `lastError` null.
   */
  putSession(state: ThreadState): void {
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

  putThread(state: ThreadState, type: string): number {
    this.touch(state);
    return this.emitEvent(state, type, state.thread);
  }

  rootNode(state: ThreadState, run: Run): RunNode {
    return state.nodes.find((node) => node.id === run.rootNodeId)!;
  }

  setRootNode(state: ThreadState, run: Run, status: ItemStatus): void {
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

  setAttempt(state: ThreadState, run: Run, status: RunAttempt["status"]): void {
    const attempt = state.attempts.find((entry) => entry.id === run.activeAttemptId);
    if (!attempt) return;
    const now = this.now();
    this.putAttempt(state, {
      ...attempt,
      status,
      ...(status === "running" && { startedAt: now }),
      ...(status !== "running" && status !== "pending" && { completedAt: now }),
    });
  }

  /** A provider-side node (an item the provider made, or a runtime request) of the active run. */
  providerNode(state: ThreadState, runner: Runner, id: string, kind: RunNode["kind"], status: ItemStatus, extra: Partial<RunNode> = {}): RunNode {
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

  nextOrdinal(state: ThreadState, run: Run | undefined): number {
    if (!run) return state.items.filter((item) => item.runId === null).length + 1;
    return run.ordinal * ORDINALS_PER_RUN + state.items.filter((item) => item.runId === run.id).length + 1;
  }

  newItem(
    state: ThreadState,
    run: Run | undefined,
    status: ItemStatus,
    title: string | null,
    where: { id?: string; nodeId?: string | null; providerTurnId?: string | null; native?: string } = {},
  ): Omit<TurnItem, "type"> {
    const now = this.now();
    return {
      id: where.id ?? `turn-item:${ids.shortId()}`,
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
    // The newest run, a queued one too (as recorded); a queued run cancelled before it started never
    // ran, so the thread reads as the run before it (not recorded).
    const latest = runs.filter((run) => !(run.status === "cancelled" && run.startedAt === null)).at(-1) ?? runs.at(-1);
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
      // A run whose answer is final (waiting) is no longer the active one; its status stays in activityRunStatus.
      activeRunId: active && active.status !== "waiting" ? active.id : null,
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
    return state.thread.deletedAt === null && !this.outsideShell.has(state.thread.id);
  }

  /** Whether the shell says anything of it: not of a thread it never listed. */
  inShell(state: ThreadState): boolean {
    return !this.outsideShell.has(state.thread.id);
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
    return {
      schemaVersion: SHELL_SCHEMA_VERSION,
      snapshotSequence: this.sequence,
      projects: this.liveProjects(),
      threads: rows.map((state) => this.shellRow(state)),
    };
  }

  /** The projects as `GET /api/projects` and `projects.mutate` give them (with `deletedAt`, without the shell's env mode). */
  projectRecord(project: ProjectShell): Record<string, unknown> {
    const { defaultThreadEnvMode: _mode, ...rest } = project;
    return {
      id: rest.id,
      title: rest.title,
      workspaceRoot: rest.workspaceRoot,
      repositoryIdentity: rest.repositoryIdentity,
      faviconPath: rest.faviconPath,
      defaultModelSelection: rest.defaultModelSelection,
      scripts: rest.scripts,
      createdAt: rest.createdAt,
      updatedAt: rest.updatedAt,
      deletedAt: null,
    };
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

  // ------------------------------------------------------------------ seeding, control and commands

  addProject(project: Pick<ProjectShell, "id" | "title" | "workspaceRoot"> & Partial<ProjectShell>): ProjectShell {
    return addProject(this, project);
  }

  createThread(options: ThreadSeed): ThreadState {
    return createThread(this, options);
  }

  /** A fork of `sourceThreadId` (what `thread.fork` does): lineage "fork". */
  fork(sourceThreadId: string, title: string): ThreadState {
    return forkThread(this, sourceThreadId, title);
  }

  /** The thread a command names; a missing or deleted one refuses the command as T3 does. */
  requireThread(threadId: string, commandType: string, commandId: string): ThreadState {
    const state = this.threads.get(threadId);
    if (!state || state.thread.deletedAt) throw new DispatchError(commandId, commandType, `Thread '${threadId}' does not exist.`);
    return state;
  }

  scriptNextRun(threadId: string, steps: AgentStep[]): void {
    this.agent.scriptNextRun(threadId, steps);
  }

  /** Ends a `hold` or `background` step of the thread's active run (see ScriptedAgent.release). */
  release(threadId: string): boolean {
    return this.agent.release(threadId);
  }

  halt(): void {
    this.agent.halt();
  }

  resume(): void {
    this.agent.resume();
  }

  /** After a restart, runs the server was driving are gone: they end interrupted; their queues restart. */
  reconcileAfterRestart(): void {
    this.agent.reconcileAfterRestart();
  }

  dispatch(command: ClientCommandV2): number {
    return this.commands.dispatch(command);
  }

  /** `thread.fork` or `delegated_task.request` (lineage-commands.ts); the result is the sequence after it. */
  dispatchLineage(command: LineageCommand): number {
    applyLineageCommand(this, command);
    return this.sequence;
  }

  /** `projects.mutate` with `project.create`: the project row, and a shell refresh after it. */
  createProject(command: { commandId: string; projectId: string; title: string; workspaceRoot: string }): Record<string, unknown> {
    return this.commands.createProject(command);
  }
}

/** Items the app writes (the user's input, interrupt notes): their events carry no `driver`, as recorded; the provider's do. */
const APP_ITEMS: ReadonlySet<TurnItem["type"]> = new Set(["user_message", "run_interrupt_request", "run_interrupt_result", "system_notice"]);

export const TERMINAL_ITEM: ReadonlySet<ItemStatus> = new Set(["completed", "failed", "cancelled", "interrupted"]);
