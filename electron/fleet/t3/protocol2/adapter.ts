// The protocol-2 adapter (docs/t3-protocols.md, "Protocol 2"): its lifecycle and the adapter
// contract (../adapter.ts). It keeps, across connections, the V2 shell with its cursor and what
// followed threads taught it about their rows (steering, failure reasons, the run's phase); a
// connection (Protocol2Session) opens the `?orchestrationProtocol=2` socket (./connection.ts, which
// resumes a stream the server ended) and hands the streams to their classes: the fleet stream
// (./fleet-stream.ts) and each followed thread's stream (./thread-stream.ts); neutral commands go out
// as V2 commands (./wire-commands.ts), and HTTP reads carry the protocol header (./http-reads.ts).
// It retries nothing across connections (electron/fleet/supervisor.ts does).
import type { AgentFacts } from "../../../../shared/fleet/facts";
import { decodeWith } from "../../../../shared/t3/decode";
import { type DiffScope, ThreadDiffResult, diffCall } from "../../../../shared/t3/diff";
import { T3Error } from "../../../../shared/t3/errors";
import type { LaunchOptions } from "../../../../shared/fleet/creation";
import { launchProviders } from "../../../../shared/t3/providers";
import { type ShellState, activeRun, runTakesSteer } from "../../../../shared/t3/protocol2/projection";
import { DispatchResultV2, ServerConfigV2, type ThreadProjection } from "../../../../shared/t3/protocol2/schemas";
import type {
  AdapterContext,
  ProtocolAdapter,
  AdapterSession,
  AgentCommand,
  CommandReceipt,
  FleetStreamListener,
  FollowedThread,
  ThreadStreamListener,
  Subscription,
} from "../adapter";
import type { T3Credentials } from "../client";
import type { RpcSocketOptions } from "../rpc-socket";
import { type FollowedRunPhase, type ServerFeatures, agentFactsOfRow, steeringOf } from "../../../../shared/t3/protocol2/facts";
import { Protocol2Connection } from "./connection";
import { V2Thread } from "./followed-thread";
import { type FailureReasonLimits, FailureReasons } from "./failure-reasons";
import { type FleetState, Protocol2FleetStream } from "./fleet-stream";
import { Protocol2HttpReads } from "./http-reads";
import { Protocol2ThreadStream, type ThreadStreamState } from "./thread-stream";
import { createProject, wireCommand } from "./wire-commands";

export interface Protocol2Options {
  socket?: Pick<RpcSocketOptions, "pingIntervalMs" | "openTimeoutMs" | "onFrame">;
  /** Bounded HTTP snapshot before a thread stream (else the stream's own snapshot). */
  boundedThreadSnapshots?: boolean;
  failureReasons?: FailureReasonLimits;
}

/** A failure reason is one small read; past this the row shows without it. */
const FAILURE_READ_TIMEOUT_MS = 5_000;
const CONFIG_READ_TIMEOUT_MS = 10_000;

/**
 * The adapter for one protocol-2 environment. It holds the shell cursor, so a reconnect resumes
 * where the last connection stopped (a followed thread's own cursor is in its V2Thread, which
 * electron/fleet/threads.ts keeps while it follows it); a new adapter (a machine that changed
 * protocol) starts from nothing. What it learns per thread goes when the thread leaves the shell.
 */
export class Protocol2Adapter implements ProtocolAdapter, FleetState, ThreadStreamState {
  readonly protocol = 2 as const;
  shell: ShellState | undefined;
  /** Threads with a stream open now: a command reads the active run from their projection. */
  private readonly streaming = new Map<string, V2Thread>();
  readonly features: ServerFeatures;
  readonly http: Protocol2HttpReads;

  constructor(
    readonly context: AdapterContext,
    readonly options: Protocol2Options = {},
  ) {
    this.http = new Protocol2HttpReads(context.client.http);
    const capabilities = context.descriptor.capabilities as Record<string, unknown>;
    this.features = {
      settle: capabilities.threadSettlement === true,
      snooze: capabilities.threadSnooze === true,
      steers: (threadId) => this.steering.get(threadId),
      failureReason: (threadId, runId) => this.failures?.reason(threadId, runId),
      followedRun: (threadId) => this.followedRuns.get(threadId),
    };
  }

  /** Whether the server streams assistant text, from its `server.getConfig` settings; undefined until read. */
  replyStreams: boolean | undefined;

  /** Per followed thread, what its stream shows of the active run. */
  private readonly followedRuns = new Map<string, FollowedRunPhase | "loading">();

  /** What a followed thread's projection tells about its row: steering support, failure reasons, the run's phase. */
  learnFromThread(threadId: string, projection: ThreadProjection): void {
    this.learnSteering(threadId, steeringOf(projection));
    this.learnFailures(projection);
    const active = activeRun(projection);
    this.learnRunPhase(
      threadId,
      active
        ? { runId: active.id, takesSteer: runTakesSteer(projection, active), finishing: active.status === "waiting" }
        : { runId: null, takesSteer: false, finishing: false },
    );
  }

  /** Records what a followed thread shows of its active run; re-sends the row when that changed. */
  learnRunPhase(threadId: string, phase: FollowedRunPhase | "loading" | undefined): void {
    const known = this.followedRuns.get(threadId);
    if (
      known === phase ||
      (typeof known === "object" &&
        typeof phase === "object" &&
        known.runId === phase.runId &&
        known.takesSteer === phase.takesSteer &&
        known.finishing === phase.finishing)
    )
      return;
    if (phase === undefined) this.followedRuns.delete(threadId);
    else this.followedRuns.set(threadId, phase);
    for (const listener of this.rowListeners) listener(threadId);
  }

  /** Failure reasons read for failed rows, kept across reconnects; reads use the latest connection's credentials. */
  failures: FailureReasons | undefined;
  private failureCredentials: T3Credentials | undefined;

  /** The reader of failure reasons, reading with the credentials of the latest connection. */
  failureReasons(credentials: T3Credentials): FailureReasons {
    this.failureCredentials = credentials;
    this.failures ??= new FailureReasons(
      (threadId) => this.http.getBoundedThread(this.failureCredentials!, threadId, FAILURE_READ_TIMEOUT_MS).then((snapshot) => snapshot.projection),
      this.options.failureReasons,
    );
    return this.failures;
  }

  /** Takes what a followed thread shows about failed runs; re-sends the row when its reason was new. */
  learnFailures(projection: ThreadProjection): void {
    if (!this.failures?.learn(projection)) return;
    for (const listener of this.rowListeners) listener(projection.thread.id);
  }

  /** Steering support per thread, learned from followed threads' provider sessions. */
  private readonly steering = new Map<string, boolean>();
  /** Open fleet streams, told when something learned from a thread stream changes a row's facts. */
  readonly rowListeners = new Set<(threadId: string) => void>();

  /** Records what a followed thread's provider session says about steering; re-sends the row when it changed. */
  learnSteering(threadId: string, steers: boolean | undefined): void {
    if (steers === undefined || this.steering.get(threadId) === steers) return;
    this.steering.set(threadId, steers);
    for (const listener of this.rowListeners) listener(threadId);
  }

  thread(threadId: string): FollowedThread {
    return new V2Thread(threadId, () => this.replyStreams);
  }

  /** The projection of a thread whose stream is open now, if any. */
  streamedProjection(threadId: string): ThreadProjection | undefined {
    return this.streaming.get(threadId)?.projection;
  }

  /** A stream on this thread opened (`open`) or ended; a later stream of the same thread stays registered. */
  streamed(thread: V2Thread, open: boolean): void {
    if (open) this.streaming.set(thread.threadId, thread);
    else if (this.streaming.get(thread.threadId) === thread) {
      this.streaming.delete(thread.threadId);
      // A thread deleted while followed: what its stream taught after the shell let it go goes now (issue 43).
      if (this.shell && !this.shell.threads.has(thread.threadId)) this.forgetThread(thread.threadId);
    }
  }

  /** Whether anything learned from this thread's stream is kept (steering, failure reasons): for the heap bound's tests. */
  keepsLearned(threadId: string): boolean {
    return this.steering.has(threadId) || this.failures?.holds(threadId) === true;
  }

  /** The thread left the shell (deleted, or gone from a new snapshot): what was learned about it goes too. */
  forgetThread(threadId: string): void {
    this.steering.delete(threadId);
    this.failures?.forget(threadId);
  }

  async connect(credentials: T3Credentials): Promise<AdapterSession> {
    const connection = await Protocol2Connection.open(this.context.client, credentials, this.options.socket);
    // Read once per connection, in the background: a server that does not answer leaves it unknown.
    connection.socket.call("server.getConfig", {}, CONFIG_READ_TIMEOUT_MS).then(
      (value) => {
        const decoded = decodeWith(ServerConfigV2, value, "server config");
        const streams = decoded.ok ? decoded.value.settings?.enableLegacyTokenStreaming : undefined;
        if (streams !== undefined) this.replyStreams = streams;
      },
      () => undefined,
    );
    return new Protocol2Session(this, connection, credentials);
  }

  /** Whether a thread that holds nothing starts from its bounded snapshot over HTTP. */
  get boundedThreadSnapshots(): boolean {
    return this.options.boundedThreadSnapshots !== false;
  }

  /**
   * The agents of the shell: its active threads (the shell keeps no archived one: archived threads
   * are not agents of the fleet, as T3's own list and protocol 1's shell leave them out); one
   * archived while watched shows so for a few minutes (./fleet-stream.ts), then leaves, as on protocol 1.
   */
  agentFacts(): AgentFacts[] {
    const shell = this.shell;
    if (!shell) return [];
    return [...shell.threads.values()].map((row) => agentFactsOfRow(row, shell, this.features));
  }
}

class Protocol2Session implements AdapterSession {
  readonly protocol = 2 as const;

  constructor(
    private readonly adapter: Protocol2Adapter,
    private readonly connection: Protocol2Connection,
    private readonly credentials: T3Credentials,
  ) {}

  get lastFrameAt(): number {
    return this.connection.socket.lastFrameAt;
  }

  probe(timeoutMs: number): Promise<void> {
    return this.connection.socket.probe(timeoutMs);
  }

  onClose(listener: (error: T3Error) => void): () => void {
    return this.connection.socket.onClose(listener);
  }

  close(): void {
    this.connection.socket.close();
  }

  subscribeFleet(listener: FleetStreamListener): Subscription {
    const stream = new Protocol2FleetStream(this.adapter, this.connection, this.credentials, listener);
    stream.start();
    return stream;
  }

  followThread(followed: FollowedThread, listener: ThreadStreamListener): Subscription {
    if (!(followed instanceof V2Thread)) throw new T3Error("incompatible", "This thread was followed on another protocol.");
    const stream = new Protocol2ThreadStream(this.adapter, this.connection, this.credentials, followed, listener);
    stream.start();
    return stream;
  }

  async readDiff(threadId: string, scope: DiffScope, timeoutMs?: number): Promise<string> {
    const { method, payload } = diffCall(threadId, scope);
    const value = await this.connection.call(method, payload, timeoutMs);
    const decoded = decodeWith(ThreadDiffResult, value, "thread diff");
    if (!decoded.ok) throw T3Error.decode(decoded.error);
    return decoded.value.diff;
  }

  async launchOptions(timeoutMs?: number): Promise<LaunchOptions> {
    const config = await this.connection.socket.call("server.getConfig", {}, timeoutMs);
    const projects = [...(this.adapter.shell?.projects.values() ?? [])]
      .filter((project) => !project.deletedAt)
      .map((project) => ({ id: project.id, title: project.title, workspaceRoot: project.workspaceRoot }));
    return { projects, providers: launchProviders(config), projectCreation: null };
  }

  async execute(command: AgentCommand, timeoutMs?: number): Promise<CommandReceipt> {
    if (command.type === "create-project") return createProject(this.connection.socket, command, timeoutMs);
    const wire = wireCommand(command, (threadId) => {
      // The thread stream is usually ahead of the (coalesced) shell row.
      const followed = this.adapter.streamedProjection(threadId);
      return (followed && activeRun(followed)?.id) ?? this.adapter.shell?.threads.get(threadId)?.activeRunId ?? null;
    });
    const value = await this.connection.call("orchestration.dispatchCommand", wire, timeoutMs);
    const decoded = decodeWith(DispatchResultV2, value, `${wire.type} result`);
    if (!decoded.ok) throw T3Error.decode(decoded.error);
    return decoded.value;
  }
}

/** The factory the supervisor calls when a descriptor announces protocol 2. */
export function createProtocol2Adapter(context: AdapterContext, options?: Protocol2Options): ProtocolAdapter {
  return new Protocol2Adapter(context, options);
}
