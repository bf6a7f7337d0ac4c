// One followed protocol-1 thread's stream (docs/t3-protocols.md, "Streams"): the socket's thread
// subscription applied to the thread's projection (./followed-thread.ts), resumed after what it
// already holds. Repairs only protocol-1 servers need (docs/t3-protocols.md, "Repairs (inside the
// protocol-1 adapter)"): on 0.0.24 (fork) servers the events between the snapshot and its Ack are
// fetched and merged by sequence before the stream reports synchronized; a stream the fleet stream
// finds behind its shell row is subscribed again; and a stream ahead of its row tells the fleet
// stream, which shows the stream's run on the row (both checks are the fleet stream's, ./fleet-stream.ts).
import { T3Error } from "../../../../shared/t3/errors";
import type { Subscription, ThreadStreamListener } from "../adapter";
import type { T3Connection, ThreadEventItem, ThreadListener } from "./connection";
import type { Protocol1Thread } from "./followed-thread";
import type { StreamRun } from "../../../../shared/t3/protocol1/facts";

export class Protocol1ThreadStream implements Subscription {
  /** Closed by the caller, or ended by the server: nothing more reaches the listener. */
  private closed = false;
  /** The socket subscription now delivering; a replaced one's callbacks are ignored. */
  private current: Subscription | undefined;
  /** Pending re-check of a stream found behind its shell row (at most one at a time). */
  private lagTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly connection: T3Connection,
    readonly thread: Protocol1Thread,
    private readonly listener: ThreadStreamListener,
    /** 0.0.24 servers: merge the gap between the snapshot and the live tail. */
    private readonly fork: boolean,
    /** Told once when the stream ends or is closed (the session stops tracking it). */
    private readonly done: (stream: Protocol1ThreadStream) => void,
    /** Told when the synchronized stream's session or latest turn changed: the row may be behind it (./fleet-stream.ts). */
    private readonly runMoved: (stream: Protocol1ThreadStream) => void = () => {},
  ) {}

  /** The run as this stream knows it, once synchronized (before, it may be older than the row). */
  streamRun(): StreamRun | null {
    return this.thread.synced && !this.closed ? this.thread.projection.streamRun() : null;
  }

  start(): void {
    this.subscribe();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.finish();
    const subscription = this.current;
    this.current = undefined;
    this.thread.synced = false;
    subscription?.close();
    this.listener.end();
  }

  /** Whether this stream, synchronized, has not seen the session change `shellSession` (its shell row's) shows. */
  behind(shellSession: string | null | undefined): boolean {
    const projection = this.thread.projection;
    if (!this.thread.synced || !projection.thread || !shellSession) return false;
    const streamSession = projection.thread.session?.updatedAt;
    return streamSession === undefined || shellSession > streamSession;
  }

  /** After `delayMs`, subscribes again if `stillBehind`; nothing when a check is already pending. */
  recheckLagAfter(delayMs: number, stillBehind: () => boolean): void {
    if (this.lagTimer) return;
    this.lagTimer = setTimeout(() => {
      this.lagTimer = undefined;
      if (stillBehind()) this.resubscribe();
    }, delayMs);
    this.lagTimer.unref?.();
  }

  /** The connection closed or the stream finished: no lag re-check runs. */
  cancelLagCheck(): void {
    clearTimeout(this.lagTimer);
    this.lagTimer = undefined;
  }

  private resubscribe(): void {
    if (this.closed) return;
    const previous = this.current;
    this.current = undefined;
    previous?.close();
    this.subscribe();
  }

  private finish(): void {
    this.cancelLagCheck();
    this.done(this);
  }

  private subscribe(): void {
    const { thread } = this;
    thread.synced = false;
    const applying = this.projectionListener(() => subscription);
    const subscription = this.connection.subscribeThread(
      thread.threadId,
      this.fork ? this.repairTail(applying) : applying,
      thread.projection.thread ? { afterSequence: thread.projection.lastSequence } : {},
    );
    this.current = subscription;
  }

  /** What one socket subscription delivers, applied to the projection while it is the current one. */
  private projectionListener(subscription: () => Subscription): ThreadListener {
    const { thread, listener } = this;
    const { projection } = thread;
    const active = () => !this.closed && this.current === subscription();
    const notify = () => listener.changed(thread.detail());
    return {
      snapshot: (snapshot) => {
        if (!active()) return;
        projection.applySnapshot(snapshot);
        notify();
      },
      delta: (event) => {
        if (!active()) return;
        const { session, latestTurn } = projection.thread ?? {};
        if (!projection.applyEvent(event) || !thread.synced) return;
        notify();
        if (projection.thread?.session !== session || projection.thread?.latestTurn !== latestTurn) this.runMoved(this);
      },
      synchronized: () => {
        if (!active()) return;
        thread.synced = true;
        thread.error = null;
        notify();
        this.runMoved(this);
      },
      skipped: (item) => {
        if (active()) listener.skipped?.(item);
      },
      end: (error) => {
        if (!active()) return;
        this.closed = true;
        thread.synced = false;
        this.finish();
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
  }

  /** Holds live events while the gap between snapshot and live tail is fetched, then merges by sequence (fork). */
  private repairTail(listener: ThreadListener): ThreadListener {
    const threadId = this.thread.threadId;
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
}
