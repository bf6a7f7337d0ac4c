// The protocol adapter contract: what every protocol adapter offers the connection supervisor and
// the thread followers (docs/architecture.md, "Protocol adapters"). One adapter per T3
// orchestration protocol, chosen by negotiation (./adapters.ts) from the environment descriptor on
// every connect; it turns its wire into the neutral facts of shared/fleet/facts.ts, so nothing above
// it knows which protocol a machine speaks.
import type { DiffScope } from "../../../shared/t3/diff";
import type { CreateRuntimeMode, LaunchOptions } from "../../../shared/fleet/creation";
import type {
  AgentFacts,
  AgentLifecycle,
  ApprovalDecision,
  OrchestrationProtocol,
  QuestionAnswers,
  RunningMessageMode,
  ThreadDetail,
} from "../../../shared/fleet/facts";
import type { TailLimits } from "../../../shared/fleet/transcript-tail";
import type { SkippedItem } from "../../../shared/fleet/types";
import type { T3Error } from "../../../shared/t3/errors";
import type { EnvironmentDescriptor } from "../../../shared/t3/schemas";
import type { AuthGeneration, T3Credentials, T3EnvironmentClient } from "./client";

/**
 * One environment's adapter for one protocol. It lives as long as the environment keeps speaking
 * that protocol and holds the fleet stream's resume cursor; a followed thread's cursor lives in the
 * `FollowedThread` it makes, which electron/fleet/threads.ts keeps while it follows the thread. So a
 * reconnect resumes where the last connection stopped, and nothing is kept for threads that are
 * gone. A machine upgraded to another protocol gets a new adapter: cursors of one protocol are
 * never used with another.
 */
export interface ProtocolAdapter {
  readonly protocol: OrchestrationProtocol;
  /** Opens one authenticated connection; resolves once it can subscribe and dispatch. */
  connect(credentials: T3Credentials): Promise<AdapterSession>;
  /** The state of one thread to follow (kept across reconnects by the caller). */
  thread(threadId: string): FollowedThread;
}

export interface AdapterContext {
  client: T3EnvironmentClient;
  generation: AuthGeneration;
  descriptor: EnvironmentDescriptor;
  /** A followed thread stream behind its fleet row for this long is subscribed again (tests shorten it). */
  streamLagMs?: number;
}

export type AdapterFactory = (context: AdapterContext) => ProtocolAdapter;

export interface Subscription {
  /** Stops the stream; its listener's `end` follows once, without an error. */
  close(): void;
}

/** Receives one environment's fleet stream. Every call is newer than the ones before it. */
export interface FleetStreamListener {
  /** The complete set of agents: replace what you had; threads absent from it are gone. */
  snapshot(agents: AgentFacts[]): void;
  upsert(agent: AgentFacts): void;
  /**
   * A thread left the fleet stream. `lifecycle` says why when the server tells (protocol 2
   * locations), else "archived-or-deleted"; an adapter that later learns which sends an upsert.
   */
  remove(threadId: string, lifecycle: Exclude<AgentLifecycle, "active"> | "archived-or-deleted"): void;
  /** Caught up with the server: after the snapshot or the resume replay. Once per subscription. */
  synchronized(): void;
  /** The stream ended; with an error when it was not closed by us (the supervisor decides what next). */
  end(error?: T3Error): void;
  /** An item that did not decode was skipped; the stream stays trusted and goes on. */
  skipped?(item: SkippedItem): void;
}

/** Receives one followed thread's detail as it changes. */
export interface ThreadStreamListener {
  changed(detail: ThreadDetail): void;
  end(error?: T3Error): void;
  /** An item that did not decode was skipped; the stream stays trusted and goes on. */
  skipped?(item: SkippedItem): void;
}

/**
 * One thread's state inside an adapter, kept across reconnects so a stream resumes where it left
 * off. Created by `AdapterSession.thread`/`ProtocolAdapter.thread`; dropped with its adapter.
 */
export interface FollowedThread {
  readonly threadId: string;
  detail(): ThreadDetail;
  /** A request answered by this client leaves the pending list at once (protocol 1 projections do the same). */
  markAnswered(requestId: string): void;
  /** Holds this much of the thread's history from now on (shared/fleet/transcript-tail.ts); lower limits let go at once. */
  retain(limits: TailLimits): void;
  /** Something an open view shows was let go under limits lower than an open view's: only a fresh snapshot brings it back. */
  readonly heldShort: boolean;
}

/**
 * How a message is sent:
 * - `start`: no run is active, start one;
 * - `steer`: fold into the active run `runId`;
 * - `queue`: start a new run after the active run `runId` (protocol 1: T3 decides by provider,
 *   both `steer` and `queue` send the same command and the agent's capabilities say which happens).
 */
export type SendMode = "start" | RunningMessageMode;

/** A command the fleet asks an adapter to carry out. `commandId` is the idempotency key (resend only with the same). */
export type AgentCommand =
  | { type: "send"; commandId: string; threadId: string; messageId: string; text: string; mode: SendMode; runId: string | null }
  | { type: "respond-approval"; commandId: string; threadId: string; requestId: string; decision: ApprovalDecision }
  | { type: "respond-input"; commandId: string; threadId: string; requestId: string; answers: QuestionAnswers }
  | { type: "interrupt"; commandId: string; threadId: string; runId: string | null }
  | { type: "stop"; commandId: string; threadId: string }
  | { type: "cancel-queued"; commandId: string; threadId: string; runId: string }
  /** Marks the thread settled in T3's own UI; only where `capabilities.settle` says the server has it. */
  | { type: "settle"; commandId: string; threadId: string }
  /** Puts the thread aside in T3 until `until` (ISO); only where `capabilities.snooze` says the server has it. */
  | { type: "snooze"; commandId: string; threadId: string; until: string }
  /** The reverse of `settle` and `snooze` (the user brought the thread back), on the same servers. */
  | { type: "unsettle"; commandId: string; threadId: string }
  | { type: "unsnooze"; commandId: string; threadId: string }
  /**
   * Creates a thread with the client's id (T3's `thread.create` on both protocols); its first message
   * is then a `send` with mode `start`. A child's id is `sub.<parentThreadId>.<suffix>`.
   */
  | {
      type: "create-thread";
      commandId: string;
      threadId: string;
      projectId: string;
      title: string;
      instanceId: string;
      model: string;
      runtimeMode: CreateRuntimeMode;
    }
  /**
   * Creates a project with the client's id on the machine's T3 (`project.create`: protocol 1 through
   * the dispatch API, protocol 2 through `projects.mutate`); T3 resolves `workspaceRoot` on its own
   * machine and creates the folder only with `createIfMissing`.
   */
  | { type: "create-project"; commandId: string; projectId: string; title: string; workspaceRoot: string; createIfMissing: boolean };

/** The server accepted a command; `sequence` is comparable with `ThreadDetail.appliedSequence`. */
export interface CommandReceipt {
  sequence: number;
}

/**
 * One authenticated connection of a protocol adapter. It retries nothing: a failure is an error
 * (a T3Error, see shared/t3/errors.ts) or an `end(error)`, and the connection supervisor decides.
 * A command the protocol cannot carry out is refused with a T3Error of kind "rejected".
 */
export interface AdapterSession {
  readonly protocol: OrchestrationProtocol;
  /** When the last frame arrived (ms since epoch): the "last confirmed" time of an environment. */
  readonly lastFrameAt: number;
  /** Liveness check: resolves when the server answered within the bound. */
  probe(timeoutMs: number): Promise<void>;
  onClose(listener: (error: T3Error) => void): () => void;
  /** Frames that did not decode and were skipped without harming any call or stream (optional). */
  onSkipped?(listener: (item: SkippedItem) => void): () => void;
  close(): void;
  /**
   * The environment's agents. Resumes after what this adapter already delivered (its cursor lives
   * in the adapter, never shared between protocols); repairs the stream where a server generation
   * needs it before reporting synchronized.
   */
  subscribeFleet(listener: FleetStreamListener): Subscription;
  /** Follows one thread, resuming from what `thread` already holds. */
  followThread(thread: FollowedThread, listener: ThreadStreamListener): Subscription;
  execute(command: AgentCommand, timeoutMs?: number): Promise<CommandReceipt>;
  /** What this machine's T3 lists for a new thread: its projects, and its harnesses and models (`server.getConfig`). */
  launchOptions(timeoutMs?: number): Promise<LaunchOptions>;
  /** A turn's or the whole thread's unified diff, as T3 computes it from its checkpoints (shared/t3/diff.ts). */
  readDiff(threadId: string, scope: DiffScope, timeoutMs?: number): Promise<string>;
}
