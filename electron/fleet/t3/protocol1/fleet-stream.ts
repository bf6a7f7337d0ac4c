// Protocol 1's fleet stream: the socket's shell subscription (docs/t3-protocols.md, "Streams") as
// neutral facts, resumed after the adapter's shell cursor. It owns the repairs only protocol-1
// servers need (docs/t3-protocols.md, "Repairs (inside the protocol-1 adapter)"):
// - 0.0.24 (fork) servers attach the live tail only after the snapshot's Ack, so events in between
//   are lost: when the event replay shows a row changed in that gap, the shell is snapshotted again;
// - a followed thread stream that stays behind the session its shell row shows is subscribed again;
// - a shell row behind its followed thread stream's session shows the stream's run (a turn's start
//   or end reaches the thread stream first);
// - a thread that leaves the shell is looked up once to tell archived from deleted; where its thread
//   read says "not found" (T3 0.0.42 says so for archived threads too) the full read model decides.
import type { AgentFacts } from "../../../../shared/fleet/facts";
import { T3Error } from "../../../../shared/t3/errors";
import { type Protocol1Rows, withNewerRun } from "../../../../shared/t3/protocol1/facts";
import { isStarting } from "../../../../shared/fleet/status";
import type { ReadModelSnapshot, ShellDelta, ShellSnapshot, ThreadShell } from "../../../../shared/t3/protocol1/schemas";
import type { FleetStreamListener, Subscription } from "../adapter";
import type { T3Credentials } from "../client";
import type { T3Connection } from "./connection";
import type { Protocol1HttpReads } from "./http-reads";
import type { Protocol1ThreadStream } from "./thread-stream";

/** A fork shell stream re-snapshots at most this often in a row to close its live-tail gap. */
const MAX_SHELL_REPAIRS = 3;
/**
 * A followed thread's stream that stays behind the shell's session for this long is stalled (a
 * stream that stays silent while the thread is known to change, seen on 0.0.24) and is subscribed again.
 */
export const STREAM_LAG_MS = 3_000;
/** Bound for the one-shot look-up that tells an archived thread from a deleted one. */
const REMOVAL_LOOKUP_MS = 10_000;

/** A removed thread whose thread read said "not found": the full read model tells archived from deleted. */
interface UnreadableRemoval {
  threadId: string;
  answer: (lifecycle: "archived" | "deleted") => void;
}

/** What the fleet stream reads and keeps in its adapter, which holds it across connections (./adapter.ts). */
export interface FleetState {
  readonly rows: Protocol1Rows;
  /** Per thread, what later look-ups need from its latest shell row (here: the session's time). */
  readonly lastRows: Map<string, { sessionUpdatedAt: string | null }>;
  /** Last shell sequence applied: a new subscription resumes after it. */
  shellSequence: number | undefined;
  readonly http: Protocol1HttpReads;
  /** A 0.0.24 server, whose live tail needs the repair. */
  readonly fork: boolean;
  /** The lag bound when not STREAM_LAG_MS (tests shorten it). */
  readonly streamLagMs: number | undefined;
  /** The row's facts; also records its look-ups in `lastRows`. */
  factsOf(row: ThreadShell): AgentFacts;
}

export class Protocol1FleetStream implements Subscription {
  /** Closed by the caller, or ended: nothing more reaches the listener. */
  private closed = false;
  /** The shell subscription now delivering; a replaced one's callbacks are ignored. */
  private current: Subscription | undefined;
  /** Fork only: how many more times the shell may be snapshotted again to close its live-tail gap. */
  private repairsLeft = MAX_SHELL_REPAIRS;
  /** The current subscription's snapshot, whose gap to the live tail a fork repair checks. */
  private snapshotSequence: number | undefined;
  /** Until the synchronized mark is checked (a fork's lost tail), each thread's latest delta; then no longer kept. */
  private latestDelta: Map<string, number> | undefined;
  /** Removals waiting for the next full read-model read (one read answers all that left together). */
  private unreadableRemovals: UnreadableRemoval[] = [];
  private readModelRead: Promise<void> | undefined;
  /**
   * The latest shell row of each followed thread or thread with a run in progress (the fleet follows
   * those: shared/fleet/status.ts `needsFollowing`), to show a followed stream's newer run on it; rows
   * of settled, unfollowed threads are not kept (a fleet of 50,000 idle rows holds none).
   */
  private readonly rowsKept = new Map<string, ThreadShell>();

  constructor(
    private readonly adapter: FleetState,
    private readonly connection: T3Connection,
    private readonly credentials: T3Credentials,
    /** The thread streams open on this connection, by thread: checked for lag against each row. */
    private readonly followed: ReadonlyMap<string, Protocol1ThreadStream>,
    private readonly listener: FleetStreamListener,
  ) {}

  start(): void {
    this.subscribe();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    const subscription = this.current;
    this.current = undefined;
    subscription?.close();
    this.listener.end();
  }

  private subscribe(): void {
    this.snapshotSequence = undefined;
    this.latestDelta = new Map<string, number>();
    const active = () => !this.closed && this.current === subscription;
    const subscription: Subscription = this.connection.subscribeShell(
      {
        snapshot: (snapshot) => {
          if (active()) this.applySnapshot(snapshot);
        },
        delta: (delta) => {
          if (active()) this.applyDelta(delta);
        },
        synchronized: () => {
          if (active()) this.synchronize(subscription);
        },
        end: (error) => {
          if (!active()) return;
          this.closed = true;
          this.listener.end(error ?? new T3Error("server", "The server ended the shell stream."));
        },
        skipped: (item) => {
          if (active()) this.listener.skipped?.(item);
        },
      },
      this.adapter.shellSequence !== undefined ? { afterSequence: this.adapter.shellSequence } : {},
    );
    this.current = subscription;
  }

  private applySnapshot(snapshot: ShellSnapshot): void {
    const { adapter } = this;
    this.snapshotSequence = snapshot.snapshotSequence;
    adapter.shellSequence = snapshot.snapshotSequence;
    for (const project of snapshot.projects) adapter.rows.setProject(project.id, project.deletedAt ? null : project.title, project.workspaceRoot);
    adapter.lastRows.clear(); // a snapshot is the whole fleet: rows absent from it are gone
    this.rowsKept.clear();
    this.listener.snapshot(snapshot.threads.map((row) => this.factsOf(row)));
    for (const row of snapshot.threads) this.checkLag(row);
  }

  private applyDelta(delta: ShellDelta): void {
    const { adapter, listener } = this;
    adapter.shellSequence = delta.sequence;
    switch (delta.kind) {
      case "thread-upserted":
        this.latestDelta?.set(delta.thread.id, delta.sequence);
        listener.upsert(this.factsOf(delta.thread));
        this.checkLag(delta.thread);
        return;
      case "thread-removed":
        this.latestDelta?.set(delta.threadId, delta.sequence);
        adapter.rows.forget(delta.threadId);
        adapter.lastRows.delete(delta.threadId);
        this.rowsKept.delete(delta.threadId);
        listener.remove(delta.threadId, "archived-or-deleted");
        this.lookUpRemoval(delta.threadId);
        return;
      case "project-upserted":
        adapter.rows.setProject(delta.project.id, delta.project.deletedAt ? null : delta.project.title, delta.project.workspaceRoot);
        return;
      case "project-removed":
        adapter.rows.setProject(delta.projectId, null);
        return;
    }
  }

  /** A row's facts, with the run of its followed stream where that is newer (keeps the row while it may be). */
  private factsOf(row: ThreadShell): AgentFacts {
    const stream = this.followed.get(row.id);
    const facts = this.adapter.factsOf(withNewerRun(row, stream?.streamRun() ?? null));
    if (stream || facts.run.phase === "running" || facts.run.phase === "waiting" || isStarting(facts.run)) this.rowsKept.set(row.id, row);
    else this.rowsKept.delete(row.id);
    return facts;
  }

  /**
   * A followed thread's stream saw its session or turn change: when it tells a newer run than the
   * row, the row is shown again with it (a listener given the same facts again changes nothing, and
   * the shell row with the same session that follows yields them too).
   */
  streamRunMoved(stream: Protocol1ThreadStream): void {
    const threadId = stream.thread.threadId;
    const row = this.rowsKept.get(threadId);
    const run = stream.streamRun();
    if (this.closed || !row || !run || this.followed.get(threadId) !== stream) return;
    if (withNewerRun(row, run) !== row) this.listener.upsert(this.factsOf(row));
  }

  /** Caught up: on a fork, first checks the live-tail gap, and snapshots again when a row changed in it. */
  private synchronize(subscription: Subscription): void {
    const { snapshotSequence, latestDelta } = this;
    if (!this.adapter.fork || snapshotSequence === undefined || this.repairsLeft <= 0 || !latestDelta) {
      this.latestDelta = undefined;
      this.listener.synchronized();
      return;
    }
    const active = () => !this.closed && this.current === subscription;
    void this.tailIsStale(snapshotSequence, latestDelta).then(
      (stale) => {
        if (!active()) return;
        this.latestDelta = undefined;
        if (!stale) return this.listener.synchronized();
        this.current = undefined; // the replaced stream's end is not the fleet stream's end
        subscription.close();
        this.repairsLeft--;
        this.subscribe();
      },
      (error: unknown) => {
        if (!active()) return;
        this.closed = true;
        this.current = undefined;
        subscription.close();
        this.listener.end(T3Error.from(error));
      },
    );
  }

  /**
   * Fork servers lose events between a snapshot and its Ack. Rows are full state, so only a thread
   * whose latest change fell in that gap is stale: true when the replay shows one (take a new snapshot).
   */
  private async tailIsStale(since: number, latestDelta: Map<string, number>): Promise<boolean> {
    const events = await this.connection.replayEvents(since);
    return events.some((event) => event.aggregateKind === "thread" && (latestDelta.get(event.aggregateId) ?? -1) < event.sequence);
  }

  /** A followed stream behind this row's session is subscribed again if it is still behind after the lag bound. */
  private checkLag(row: ThreadShell): void {
    const stream = this.followed.get(row.id);
    if (!stream?.behind(row.session?.updatedAt)) return;
    stream.recheckLagAfter(
      this.adapter.streamLagMs ?? STREAM_LAG_MS,
      () => this.followed.get(row.id) === stream && stream.behind(this.adapter.lastRows.get(row.id)?.sessionUpdatedAt),
    );
  }

  /**
   * The shell says a thread left it, not why: its thread stream tells archived from deleted. T3
   * 0.0.42 reads archived threads as "not found" like deleted ones; then the full read model, which
   * keeps both with archivedAt or deletedAt, decides.
   */
  private lookUpRemoval(threadId: string): void {
    const open = () => !this.closed;
    const { listener } = this;
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
}
