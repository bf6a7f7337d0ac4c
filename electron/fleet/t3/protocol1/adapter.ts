// The protocol-1 adapter (T3 up to 0.0.45, both auth generations): shell rows and thread streams
// → neutral facts (shared/fleet/facts.ts), neutral commands → protocol-1 commands. It also owns the
// repairs only protocol-1 servers need (docs/t3-protocols.md, "Protocol 1: repairs"):
// - 0.0.24 (fork) servers attach a stream's live tail only after the snapshot's Ack, so events in
//   between are lost: the shell re-snapshots when a replay shows a row changed in that gap, and a
//   thread stream merges the replayed gap by sequence before it reports synchronized;
// - a followed thread stream that stays behind the session its shell row shows is subscribed again;
// - a thread that leaves the shell is looked up once to tell archived from deleted; where its thread
//   read says "not found" (T3 0.0.42 says so for archived threads too) the full read model decides.
// It retries nothing on failure: errors end the stream and the connection supervisor decides.
import type { DiffScope } from "../../../../shared/t3/diff";
import type { LaunchOptions } from "../../../../shared/fleet/creation";
import { launchProviders } from "../../../../shared/t3/providers";
import type { AgentFacts } from "../../../../shared/fleet/facts";
import { Protocol1Rows } from "../../../../shared/t3/protocol1/facts";
import type { SkippedItem } from "../../../../shared/fleet/types";
import type { ClientCommand, ThreadSettleCommand } from "../../../../shared/t3/protocol1/commands";
import { T3Error } from "../../../../shared/t3/errors";
import type { ReadModelSnapshot, ThreadShell } from "../../../../shared/t3/protocol1/schemas";
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
import { Protocol1ThreadStream } from "./thread-stream";

/** A fork shell stream re-snapshots at most this often in a row to close its live-tail gap. */
const MAX_SHELL_REPAIRS = 3;
/**
 * A followed thread's stream that stays behind the shell's session for this long is stalled (a
 * stream that stays silent while the thread is known to change, seen on 0.0.24) and is subscribed again.
 */
export const STREAM_LAG_MS = 3_000;
/** Bound for the one-shot look-up that tells an archived thread from a deleted one. */
const REMOVAL_LOOKUP_MS = 10_000;

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

export class Protocol1Adapter implements ProtocolAdapter {
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

/** A removed thread whose thread read said "not found": the full read model tells archived from deleted. */
interface UnreadableRemoval {
  threadId: string;
  answer: (lifecycle: "archived" | "deleted") => void;
}

class Protocol1Session implements AdapterSession {
  readonly protocol = 1 as const;
  /** The thread streams open on this connection, by thread (the fleet stream checks them for lag). */
  private readonly followed = new Map<string, Protocol1ThreadStream>();
  /** Removals waiting for the next full read-model read (one read answers all that left together). */
  private unreadableRemovals: UnreadableRemoval[] = [];
  private readModelRead: Promise<void> | undefined;

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

  private get fork(): boolean {
    return this.adapter.context.generation === "fork";
  }

  // ------------------------------------------------------------------ fleet stream

  subscribeFleet(listener: FleetStreamListener): Subscription {
    let closed = false;
    let current: Subscription | undefined;
    const subscribe = (repairsLeft: number) => {
      let snapshotSequence: number | undefined;
      /** Until the synchronized mark is checked (a fork's lost tail), each thread's latest delta; then no longer kept. */
      let latestDelta: Map<string, number> | undefined = new Map<string, number>();
      const active = () => !closed && current === subscription;
      const subscription: Subscription = this.connection.subscribeShell(
        {
          snapshot: (snapshot) => {
            if (!active()) return;
            snapshotSequence = snapshot.snapshotSequence;
            this.adapter.shellSequence = snapshot.snapshotSequence;
            for (const project of snapshot.projects) this.adapter.rows.setProject(project.id, project.deletedAt ? null : project.title, project.workspaceRoot);
            this.adapter.lastRows.clear(); // a snapshot is the whole fleet: rows absent from it are gone
            listener.snapshot(snapshot.threads.map((row) => this.adapter.factsOf(row)));
            for (const row of snapshot.threads) this.checkLag(row);
          },
          delta: (delta) => {
            if (!active()) return;
            this.adapter.shellSequence = delta.sequence;
            switch (delta.kind) {
              case "thread-upserted":
                latestDelta?.set(delta.thread.id, delta.sequence);
                listener.upsert(this.adapter.factsOf(delta.thread));
                this.checkLag(delta.thread);
                return;
              case "thread-removed":
                latestDelta?.set(delta.threadId, delta.sequence);
                this.adapter.rows.forget(delta.threadId);
                this.adapter.lastRows.delete(delta.threadId);
                listener.remove(delta.threadId, "archived-or-deleted");
                this.lookUpRemoval(delta.threadId, listener, () => !closed);
                return;
              case "project-upserted":
                this.adapter.rows.setProject(delta.project.id, delta.project.deletedAt ? null : delta.project.title, delta.project.workspaceRoot);
                return;
              case "project-removed":
                this.adapter.rows.setProject(delta.projectId, null);
                return;
            }
          },
          synchronized: () => {
            if (!active()) return;
            if (this.fork && snapshotSequence !== undefined && repairsLeft > 0 && latestDelta) {
              void this.repairShellTail(snapshotSequence, latestDelta).then(
                (stale) => {
                  if (!active()) return;
                  latestDelta = undefined;
                  if (!stale) return listener.synchronized();
                  current = undefined; // the replaced stream's end is not the fleet stream's end
                  subscription.close();
                  subscribe(repairsLeft - 1);
                },
                (error: unknown) => {
                  if (!active()) return;
                  closed = true;
                  current = undefined;
                  subscription.close();
                  listener.end(T3Error.from(error));
                },
              );
              return;
            }
            latestDelta = undefined;
            listener.synchronized();
          },
          end: (error) => {
            if (!active()) return;
            closed = true;
            listener.end(error ?? new T3Error("server", "The server ended the shell stream."));
          },
          skipped: (item) => {
            if (active()) listener.skipped?.(item);
          },
        },
        this.adapter.shellSequence !== undefined ? { afterSequence: this.adapter.shellSequence } : {},
      );
      current = subscription;
    };
    subscribe(MAX_SHELL_REPAIRS);
    return {
      close: () => {
        if (closed) return;
        closed = true;
        const subscription = current;
        current = undefined;
        subscription?.close();
        listener.end();
      },
    };
  }

  /**
   * Fork servers lose events between a snapshot and its Ack. Rows are full state, so only a thread
   * whose latest change fell in that gap is stale: true when the replay shows one (take a new snapshot).
   */
  private async repairShellTail(since: number, latestDelta: Map<string, number>): Promise<boolean> {
    const events = await this.connection.replayEvents(since);
    return events.some((event) => event.aggregateKind === "thread" && (latestDelta.get(event.aggregateId) ?? -1) < event.sequence);
  }

  /**
   * The shell says a thread left it, not why: its thread stream tells archived from deleted. T3
   * 0.0.42 reads archived threads as "not found" like deleted ones; then the full read model, which
   * keeps both with archivedAt or deletedAt, decides.
   */
  private lookUpRemoval(threadId: string, listener: FleetStreamListener, open: () => boolean): void {
    let done = false;
    const finish = (answer: (() => void) | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      subscription.close();
      if (answer && open()) answer();
    };
    const timer = setTimeout(() => finish(undefined), REMOVAL_LOOKUP_MS);
    timer.unref?.();
    const subscription = this.connection.subscribeThread(threadId, {
      snapshot: (snapshot) => {
        const thread = snapshot.thread;
        if (thread.deletedAt) return finish(() => listener.remove(threadId, "deleted"));
        if (thread.archivedAt) return finish(() => listener.remove(threadId, "archived"));
        finish(undefined);
      },
      delta: () => {},
      synchronized: () => {},
      end: (error) =>
        finish(
          error?.kind === "not-found"
            ? () => this.askReadModel({ threadId, answer: (lifecycle) => open() && listener.remove(threadId, lifecycle) })
            : undefined,
        ),
    });
  }

  /** Queues a removal for the next read-model read; at most one read runs at a time. */
  private askReadModel(removal: UnreadableRemoval): void {
    this.unreadableRemovals.push(removal);
    if (this.readModelRead) return; // the running read started before this removal: the next one answers it
    const readNext = (): Promise<void> | undefined => {
      const batch = this.unreadableRemovals;
      if (batch.length === 0) return undefined;
      this.unreadableRemovals = [];
      const next = () => {
        this.readModelRead = readNext();
      };
      return this.readRemovals(batch).then(next, next); // a throwing listener must not stall later removals
    };
    this.readModelRead = readNext();
  }

  private async readRemovals(batch: UnreadableRemoval[]): Promise<void> {
    let model: ReadModelSnapshot;
    try {
      model = await this.adapter.http.getReadModel(this.credentials, REMOVAL_LOOKUP_MS);
    } catch (error) {
      // A server that does not offer this session its read model (fork: owners only, a 400) reads
      // archived threads, so "not found" meant deleted there; any other failure leaves the removal unsure.
      const kind = T3Error.from(error).kind;
      if (kind === "rejected" || kind === "not-found" || kind === "incompatible") for (const removal of batch) removal.answer("deleted");
      return;
    }
    const threads = new Map(model.threads.map((thread) => [thread.id, thread]));
    for (const removal of batch) {
      const thread = threads.get(removal.threadId);
      removal.answer(thread?.archivedAt && !thread.deletedAt ? "archived" : "deleted");
    }
  }

  // ------------------------------------------------------------------ thread streams

  followThread(followed: FollowedThread, listener: ThreadStreamListener): Subscription {
    if (!(followed instanceof Protocol1Thread)) throw new T3Error("incompatible", "This thread was followed on another protocol.");
    const stream = new Protocol1ThreadStream(this.connection, followed, listener, this.fork, (ended) => {
      if (this.followed.get(ended.thread.threadId) === ended) this.followed.delete(ended.thread.threadId);
    });
    this.followed.set(followed.threadId, stream);
    stream.start();
    return stream;
  }

  private checkLag(row: ThreadShell): void {
    const stream = this.followed.get(row.id);
    if (!stream?.behind(row.session?.updatedAt)) return;
    stream.recheckLagAfter(
      this.adapter.options.streamLagMs ?? STREAM_LAG_MS,
      () => this.followed.get(row.id) === stream && stream.behind(this.adapter.lastRows.get(row.id)?.sessionUpdatedAt),
    );
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
