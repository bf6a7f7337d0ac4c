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
import type { AgentFacts, ThreadDetail } from "../../../../shared/fleet/facts";
import { Protocol1Rows } from "../../../../shared/t3/protocol1/facts";
import { ThreadProjection } from "../../../../shared/t3/protocol1/thread-projection";
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
import { T3Connection, type ThreadEventItem, type ThreadListener } from "./connection";

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

/** One followed thread on protocol 1: its projection, kept across reconnects for resuming. */
class Protocol1Thread implements FollowedThread {
  readonly projection = new ThreadProjection();
  synced = false;
  error: string | null = null;

  constructor(readonly threadId: string) {}

  detail(): ThreadDetail {
    const projection = this.projection;
    return {
      threadId: this.threadId,
      loaded: projection.thread !== undefined,
      synced: this.synced,
      facts: projection.facts(),
      ...projection.transcript(),
      appliedSequence: projection.lastSequence,
      error: this.error,
    };
  }

  markAnswered(requestId: string): void {
    this.projection.markAnswered(requestId);
  }
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
  private readonly followed = new Map<string, { thread: Protocol1Thread; resubscribe: () => void; lagTimer?: NodeJS.Timeout }>();
  /** Removals waiting for the next full read-model read (one read answers all that left together). */
  private unreadableRemovals: UnreadableRemoval[] = [];
  private readModelRead: Promise<void> | undefined;

  constructor(
    private readonly adapter: Protocol1Adapter,
    private readonly connection: T3Connection,
    private readonly credentials: T3Credentials,
  ) {
    connection.onClose(() => {
      for (const entry of this.followed.values()) clearTimeout(entry.lagTimer);
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
    const thread = followed;
    const threadId = thread.threadId;
    const { projection } = thread;
    let closed = false;
    let current: Subscription | undefined;
    const subscribe = () => {
      thread.synced = false;
      const active = () => !closed && current === subscription;
      const notify = () => listener.changed(thread.detail());
      const base: ThreadListener = {
        snapshot: (snapshot) => {
          if (!active()) return;
          projection.applySnapshot(snapshot);
          notify();
        },
        delta: (event) => {
          if (active() && projection.applyEvent(event) && thread.synced) notify();
        },
        synchronized: () => {
          if (!active()) return;
          thread.synced = true;
          thread.error = null;
          notify();
        },
        skipped: (item) => {
          if (active()) listener.skipped?.(item);
        },
        end: (error) => {
          if (!active()) return;
          closed = true;
          thread.synced = false;
          this.forgetFollowed(threadId, resubscribe);
          if (error?.kind === "not-found") {
            // The thread is gone (deleted); nothing to retry.
            thread.error = "This thread no longer exists on its environment.";
            notify();
            listener.end();
            return;
          }
          if (error?.kind === "decode") {
            // T3 sent this thread in a form the fleet cannot read: the thread's fault, not the
            // connection's (issue 43). The reason is shown and counted on the machine; a reconnect tries again.
            thread.error = `T3 sent this thread in a form T3 Fleet cannot read: ${error.message}`;
            listener.skipped?.({ method: "orchestration.subscribeThread", path: error.details.decode?.path ?? "", message: error.message, sequence: null });
            notify();
            listener.end();
            return;
          }
          listener.end(error);
        },
      };
      const subscription = this.connection.subscribeThread(
        threadId,
        this.fork ? this.repairThreadTail(threadId, base) : base,
        projection.thread ? { afterSequence: projection.lastSequence } : {},
      );
      current = subscription;
    };
    const resubscribe = () => {
      if (closed) return;
      const previous = current;
      current = undefined;
      previous?.close();
      subscribe();
    };
    this.followed.set(threadId, { thread, resubscribe });
    subscribe();
    return {
      close: () => {
        if (closed) return;
        closed = true;
        this.forgetFollowed(threadId, resubscribe);
        const subscription = current;
        current = undefined;
        thread.synced = false;
        subscription?.close();
        listener.end();
      },
    };
  }

  private forgetFollowed(threadId: string, resubscribe: () => void): void {
    const entry = this.followed.get(threadId);
    if (entry?.resubscribe !== resubscribe) return;
    clearTimeout(entry.lagTimer);
    this.followed.delete(threadId);
  }

  /** Whether a followed, synchronized thread stream has not seen the session change its shell row shows. */
  private behind(threadId: string, shellSession: string | null | undefined): boolean {
    const entry = this.followed.get(threadId);
    const projection = entry?.thread.projection;
    if (!entry?.thread.synced || !projection?.thread || !shellSession) return false;
    const streamSession = projection.thread.session?.updatedAt;
    return streamSession === undefined || shellSession > streamSession;
  }

  private checkLag(row: ThreadShell): void {
    const entry = this.followed.get(row.id);
    if (!entry || entry.lagTimer || !this.behind(row.id, row.session?.updatedAt)) return;
    entry.lagTimer = setTimeout(() => {
      entry.lagTimer = undefined;
      const latest = this.adapter.lastRows.get(row.id);
      if (this.followed.get(row.id) === entry && latest && this.behind(row.id, latest.sessionUpdatedAt)) entry.resubscribe();
    }, this.adapter.options.streamLagMs ?? STREAM_LAG_MS);
    entry.lagTimer.unref?.();
  }

  /** Holds live events while the gap between snapshot and live tail is fetched, then merges by sequence (fork). */
  private repairThreadTail(threadId: string, listener: ThreadListener): ThreadListener {
    let buffer: ThreadEventItem[] | undefined;
    let synchronizedAt: number | undefined;
    let ended = false;
    return {
      snapshot: (snapshot) => {
        listener.snapshot(snapshot);
        const held: ThreadEventItem[] = [];
        buffer = held;
        this.connection.replayEvents(snapshot.snapshotSequence).then(
          (events) => {
            if (ended || buffer !== held) return;
            const merged = new Map<number, ThreadEventItem>();
            for (const event of events) if (event.aggregateId === threadId && event.known) merged.set(event.sequence, event);
            for (const event of held) merged.set(event.sequence, event);
            buffer = undefined;
            for (const sequence of [...merged.keys()].sort((a, b) => a - b)) listener.delta(merged.get(sequence)!);
            listener.synchronized(Math.max(synchronizedAt ?? -1, ...merged.keys()));
          },
          (error: unknown) => {
            if (ended) return;
            ended = true;
            listener.end(T3Error.from(error));
          },
        );
      },
      delta: (event) => (buffer ? buffer.push(event) : listener.delta(event)),
      synchronized: (lastSequence) => {
        if (buffer) synchronizedAt = lastSequence;
        else listener.synchronized(lastSequence);
      },
      end: (error) => {
        if (ended) return;
        ended = true;
        listener.end(error);
      },
      skipped: (item) => listener.skipped?.(item),
    };
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
