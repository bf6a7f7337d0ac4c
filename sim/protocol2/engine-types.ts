// The data of a simulated protocol-2 engine (sim/protocol2/engine.ts) and the part of it its
// collaborators (commands.ts, runner.ts, seed.ts) work through. They take an EngineCore rather
// than the V2Engine that constructs them, so no module imports the one that imports it.
import type { EventEmitter } from "node:events";
import type { ClientCommandV2 } from "../../shared/t3/protocol2/commands";
import type { ProviderKind } from "../providers";
import type {
  AppThread,
  ApprovalKind,
  Checkpoint,
  CheckpointScope,
  ConversationMessage,
  Decision,
  FailureClass,
  ItemStatus,
  ProjectShell,
  ProviderSession,
  ProviderThread,
  ProviderTurn,
  Question,
  Run,
  RunAttempt,
  RunNode,
  RuntimeRequest,
  Subagent,
  TurnItem,
} from "./model";

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
  /** The provider retries through a capacity limit `attempts` times, `retryDelayMs` apart, then goes on (sim/protocol2/retries.ts). */
  | { kind: "retry"; failureClass: FailureClass; attempts: number; retryDelayMs: number }
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

export interface PendingReply {
  nativeId: string;
  text: string;
  startedAt: string;
  itemId: string;
  messageId: string;
}

export interface Runner {
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
  /** The message that started the run: its scenario words decide the run's changes and tokens (sim/changes.ts). */
  text?: string;
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
  /** Each checkpointed run's diff by its ordinal, for getTurnDiff / getFullThreadDiff. */
  diffs?: Map<number, string>;
}

/** What a new thread starts with; everything but its project and title has a default. */
export interface ThreadSeed {
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
}

/** What commands.ts, runner.ts and seed.ts use of the engine (V2Engine implements it). */
export interface EngineCore extends Pick<EventEmitter, "emit" | "on" | "off"> {
  readonly projects: Map<string, ProjectShell>;
  readonly threads: Map<string, ThreadState>;
  readonly settings: V2Settings;
  /** Provider turns carry token figures (builds since upstream #8144); the recorded engine predates them. */
  readonly reportsTokenUsage: boolean;
  readonly responses: Map<string, { decision?: Decision; answers?: Record<string, unknown> }>;
  sequence: number;
  readonly tickMs: number;
  now(): string;
  emitEvent(state: ThreadState, type: string, payload: unknown, scope?: { runId?: string | null; nodeId?: string | null; driver?: boolean }): number;
  upsert<T extends { id: string }>(list: T[], entity: T): void;
  putRun(state: ThreadState, run: Run, type?: "run.created" | "run.updated"): number;
  putItem(state: ThreadState, item: TurnItem): number;
  putRequest(state: ThreadState, request: RuntimeRequest, runId: string | null): number;
  putSubagent(state: ThreadState, subagent: Subagent): number;
  putMessage(state: ThreadState, message: ConversationMessage): number;
  putAttempt(state: ThreadState, attempt: RunAttempt, type?: "run-attempt.created" | "run-attempt.updated"): void;
  putNode(state: ThreadState, node: RunNode): void;
  putProviderThread(state: ThreadState, status: ProviderThread["status"], run: Run): void;
  putProviderTurn(state: ThreadState, runner: Runner, status: ProviderTurn["status"]): void;
  putSession(state: ThreadState): void;
  putThread(state: ThreadState, type: string): number;
  setRootNode(state: ThreadState, run: Run, status: ItemStatus): void;
  setAttempt(state: ThreadState, run: Run, status: RunAttempt["status"]): void;
  providerNode(state: ThreadState, runner: Runner, id: string, kind: RunNode["kind"], status: ItemStatus, extra?: Partial<RunNode>): RunNode;
  newItem(
    state: ThreadState,
    run: Run | undefined,
    status: ItemStatus,
    title: string | null,
    where?: { id?: string; nodeId?: string | null; providerTurnId?: string | null; native?: string },
  ): Omit<TurnItem, "type">;
  projectRecord(project: ProjectShell): Record<string, unknown>;
  addProject(project: Pick<ProjectShell, "id" | "title" | "workspaceRoot"> & Partial<ProjectShell>): ProjectShell;
  createThread(options: ThreadSeed): ThreadState;
  requireThread(threadId: string, commandType: string, commandId: string): ThreadState;
  dispatch(command: ClientCommandV2): number;
}
