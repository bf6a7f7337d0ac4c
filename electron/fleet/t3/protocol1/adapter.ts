// The protocol-1 adapter (T3 up to 0.0.45, both auth generations): its lifecycle and the adapter
// contract (../adapter.ts). It keeps, across connections, the shell cursor and what later look-ups
// need of each row; a connection (Protocol1Session) opens the socket (./connection.ts) and hands the
// streams to their classes: the fleet stream with its repairs (./fleet-stream.ts) and each followed
// thread's stream (./thread-stream.ts); neutral commands go out in their wire form (./wire-commands.ts)
// and the full read model is read over HTTP (./http-reads.ts). It retries nothing on failure: errors
// end the stream and the connection supervisor decides.
import type { DiffScope } from "../../../../shared/t3/diff";
import type { LaunchOptions } from "../../../../shared/fleet/creation";
import { launchProviders } from "../../../../shared/t3/providers";
import type { AgentFacts } from "../../../../shared/fleet/facts";
import { Protocol1Rows } from "../../../../shared/t3/protocol1/facts";
import type { SkippedItem } from "../../../../shared/fleet/types";
import type { ClientCommand, ThreadSettleCommand } from "../../../../shared/t3/protocol1/commands";
import { T3Error } from "../../../../shared/t3/errors";
import type { ThreadShell } from "../../../../shared/t3/protocol1/schemas";
import { type RowModes, wireCommand } from "./wire-commands";
import type {
  AdapterContext,
  ProtocolAdapter,
  AdapterSession,
  AgentCommand,
  CommandReceipt,
  FleetStreamListener,
  FollowedThread,
  Subscription,
  ThreadStreamListener,
} from "../adapter";
import type { T3Credentials } from "../client";
import { Protocol1HttpReads } from "./http-reads";
import { T3Connection } from "./connection";
import { Protocol1Thread } from "./followed-thread";
import { type FleetState, Protocol1FleetStream } from "./fleet-stream";
import { Protocol1ThreadStream } from "./thread-stream";

export interface Protocol1Options {
  streamLagMs?: number;
}

/**
 * What the adapter keeps of a thread's latest shell row: only what it looks up later (commands need
 * the modes, the stream-lag check the session's time), not the whole decoded row.
 */
interface RowLookups extends RowModes {
  sessionUpdatedAt: string | null;
}

export class Protocol1Adapter implements ProtocolAdapter, FleetState {
  readonly protocol = 1 as const;
  readonly rows = new Protocol1Rows();
  /** Per thread, what later look-ups need from its latest shell row. */
  readonly lastRows = new Map<string, RowLookups>();
  /** Last shell sequence applied: a reconnect resumes after it (protocol-1 sequences only). */
  shellSequence: number | undefined;
  readonly http: Protocol1HttpReads;

  constructor(
    readonly context: AdapterContext,
    readonly options: Protocol1Options = {},
  ) {
    this.http = new Protocol1HttpReads(context.client.http);
    this.rows.settleSupported = context.descriptor.capabilities.threadSettlement === true;
    this.rows.harnessesObserved = context.generation !== "fork";
    this.rows.snoozeSupported = context.descriptor.capabilities.threadSnooze === true;
  }

  async connect(credentials: T3Credentials): Promise<AdapterSession> {
    const connection = await T3Connection.open(this.context.client, credentials);
    return new Protocol1Session(this, connection, credentials);
  }

  thread(threadId: string): FollowedThread {
    return new Protocol1Thread(threadId);
  }

  get fork(): boolean {
    return this.context.generation === "fork";
  }

  get streamLagMs(): number | undefined {
    return this.options.streamLagMs;
  }

  factsOf(row: ThreadShell): AgentFacts {
    const facts = this.rows.facts(row);
    // The modes are interned by the facts: keep those copies, not the row's.
    this.lastRows.set(row.id, {
      runtimeMode: facts.runtimeMode as ThreadShell["runtimeMode"],
      interactionMode: facts.interactionMode as ThreadShell["interactionMode"],
      sessionUpdatedAt: row.session?.updatedAt ?? null,
    });
    return facts;
  }
}

class Protocol1Session implements AdapterSession {
  readonly protocol = 1 as const;
  /** The thread streams open on this connection, by thread (the fleet stream checks them for lag). */
  private readonly followed = new Map<string, Protocol1ThreadStream>();
  /** The fleet stream on this connection: a followed stream's newer run is shown on its row there. */
  private fleet: Protocol1FleetStream | undefined;

  constructor(
    private readonly adapter: Protocol1Adapter,
    private readonly connection: T3Connection,
    private readonly credentials: T3Credentials,
  ) {
    connection.onClose(() => {
      for (const stream of this.followed.values()) stream.cancelLagCheck();
    });
  }

  get lastFrameAt(): number {
    return this.connection.socket.lastFrameAt;
  }

  probe(timeoutMs: number): Promise<void> {
    return this.connection.socket.probe(timeoutMs);
  }

  onClose(listener: (error: T3Error) => void): () => void {
    return this.connection.onClose(listener);
  }

  onSkipped(listener: (item: SkippedItem) => void): () => void {
    return this.connection.socket.onSkipped(listener);
  }

  close(): void {
    this.connection.close();
  }

  // ------------------------------------------------------------------ streams

  subscribeFleet(listener: FleetStreamListener): Subscription {
    const stream = new Protocol1FleetStream(this.adapter, this.connection, this.credentials, this.followed, listener);
    this.fleet = stream;
    stream.start();
    return stream;
  }

  followThread(followed: FollowedThread, listener: ThreadStreamListener): Subscription {
    if (!(followed instanceof Protocol1Thread)) throw new T3Error("incompatible", "This thread was followed on another protocol.");
    const stream = new Protocol1ThreadStream(
      this.connection,
      followed,
      listener,
      this.adapter.fork,
      (ended) => {
        if (this.followed.get(ended.thread.threadId) === ended) this.followed.delete(ended.thread.threadId);
      },
      (moved) => this.fleet?.streamRunMoved(moved),
    );
    this.followed.set(followed.threadId, stream);
    stream.start();
    return stream;
  }

  // ------------------------------------------------------------------ commands

  readDiff(threadId: string, scope: DiffScope, timeoutMs?: number): Promise<string> {
    return this.connection.readDiff(threadId, scope, timeoutMs);
  }

  async launchOptions(timeoutMs?: number): Promise<LaunchOptions> {
    const config = await this.connection.socket.call("server.getConfig", {}, timeoutMs);
    // T3 takes `project.create` from any client with the operate scope (the machine is not offered without it).
    return { projects: this.adapter.rows.projects(), providers: launchProviders(config), projectCreation: null };
  }

  execute(command: AgentCommand, timeoutMs?: number): Promise<CommandReceipt> {
    let wire: ClientCommand | ThreadSettleCommand;
    try {
      wire = wireCommand(command, (threadId) => this.adapter.lastRows.get(threadId));
    } catch (error) {
      return Promise.reject(T3Error.from(error));
    }
    return this.connection.dispatch(wire, timeoutMs);
  }
}

/** Creates the protocol-1 adapter for one environment. */
export function createProtocol1Adapter(context: AdapterContext, options?: Protocol1Options): ProtocolAdapter {
  return new Protocol1Adapter(context, options);
}
