// One followed protocol-2 thread's stream (docs/t3-protocols.md, "Protocol 2"): a bounded snapshot
// over HTTP first when the thread holds nothing yet (the latest items and every non-terminal run),
// then the thread stream from the thread's cursor, its projections and full-entity events applied to
// the followed thread (./followed-thread.ts). What the thread shows of its runs goes back to the
// adapter, which re-sends the row when it changed (steering, failure reasons, the run's phase).
import type { FollowedRunPhase } from "../../../../shared/t3/protocol2/facts";
import type { SkippedItem } from "../../../../shared/fleet/types";
import { droppedAsSkipped, droppedOf } from "../../../../shared/t3/decode";
import type { T3Error } from "../../../../shared/t3/errors";
import { applyThreadEvent } from "../../../../shared/t3/protocol2/projection";
import { type ThreadDetailSnapshotV2, type ThreadProjection, type ThreadStreamItemV2, ThreadStreamItemV2Schema } from "../../../../shared/t3/protocol2/schemas";
import type { Subscription, ThreadStreamListener } from "../adapter";
import type { T3Credentials } from "../client";
import type { Protocol2Connection } from "./connection";
import type { V2Thread } from "./followed-thread";
import type { Protocol2HttpReads } from "./http-reads";

/** What a thread stream reads from and tells its adapter (./adapter.ts). */
export interface ThreadStreamState {
  readonly http: Protocol2HttpReads;
  /** Start a thread that holds nothing with its bounded snapshot over HTTP (else the stream's own snapshot). */
  readonly boundedThreadSnapshots: boolean;
  /** A stream on this thread opened (`open`) or ended. */
  streamed(thread: V2Thread, open: boolean): void;
  /** What the thread's stream shows of its active run ("loading" until it shows it; undefined: not followed). */
  learnRunPhase(threadId: string, phase: FollowedRunPhase | "loading" | undefined): void;
  learnFromThread(threadId: string, projection: ThreadProjection): void;
}

export class Protocol2ThreadStream implements Subscription {
  /** Closed by the caller: nothing more starts or reaches the listener. */
  private closed = false;
  /** The socket stream, once the bounded snapshot (if any) was read. */
  private inner: Subscription | undefined;

  constructor(
    private readonly adapter: ThreadStreamState,
    private readonly connection: Protocol2Connection,
    private readonly credentials: T3Credentials,
    private readonly thread: V2Thread,
    private readonly listener: ThreadStreamListener,
  ) {}

  start(): void {
    const { adapter, thread } = this;
    adapter.streamed(thread, true);
    thread.synced = false;
    // Until this follow shows the run, the row offers no steer: the thread, not the row, tells whether T3 takes one.
    adapter.learnRunPhase(thread.threadId, "loading");
    if (!thread.projection && adapter.boundedThreadSnapshots) {
      // A bounded snapshot over HTTP first: the latest items and every non-terminal run, then resume live.
      adapter.http.getBoundedThread(this.credentials, thread.threadId).then(
        (snapshot) => this.startFrom(snapshot),
        () => this.subscribe(),
      );
    } else {
      this.subscribe();
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.inner) this.inner.close();
    else {
      this.adapter.streamed(this.thread, false);
      this.adapter.learnRunPhase(this.thread.threadId, undefined);
      this.listener.end();
    }
  }

  private startFrom(snapshot: ThreadDetailSnapshotV2): void {
    const { thread, listener } = this;
    if (this.closed) return;
    if (!thread.projection) {
      for (const failure of droppedOf(snapshot)) listener.skipped?.(droppedAsSkipped("bounded thread snapshot", failure));
      thread.takeSnapshot(snapshot.projection);
      thread.appliedSequence = snapshot.snapshotSequence;
      thread.lastEventAt = snapshot.projection.updatedAt;
      this.adapter.learnFromThread(thread.threadId, snapshot.projection);
      listener.changed(thread.detail());
    }
    this.subscribe();
  }

  private subscribe(): void {
    if (this.closed) return;
    const { thread } = this;
    this.inner = this.connection.stream<ThreadStreamItemV2>({
      tag: "orchestration.subscribeThread",
      schema: ThreadStreamItemV2Schema,
      what: "thread stream item",
      payload: () => ({ threadId: thread.threadId, ...(thread.projection && { afterSequence: thread.appliedSequence }), requestCompletionMarker: true }),
      resumable: () => thread.projection !== undefined,
      apply: (item) => this.apply(item),
      chunkDone: () => this.chunkDone(),
      skipped: (item) => this.skip(item),
      end: (error) => this.end(error),
    });
  }

  private apply(item: ThreadStreamItemV2): void {
    const { thread } = this;
    switch (item.kind) {
      case "snapshot":
        thread.takeSnapshot(item.projection);
        thread.appliedSequence = item.snapshotSequence;
        thread.lastEventAt = item.projection.updatedAt;
        thread.synced = true;
        thread.error = null;
        return;
      case "synchronized":
        thread.synced = true;
        return;
      case "event":
        // The cursor advances for every event, also the ones the fleet does not track.
        if (!thread.projection || item.sequence <= thread.appliedSequence) return;
        thread.projection = applyThreadEvent(thread.projection, item.event);
        thread.appliedSequence = item.sequence;
        thread.lastEventAt = item.event.occurredAt;
        return;
      default:
        return;
    }
  }

  private chunkDone(): void {
    const projection = this.thread.trim();
    if (projection) this.adapter.learnFromThread(this.thread.threadId, projection);
    this.listener.changed(this.thread.detail());
  }

  /** An item that did not decode: the cursor moves past it when its sequence was readable. */
  private skip(item: SkippedItem): void {
    const { thread } = this;
    if (thread.projection && item.sequence !== null) thread.appliedSequence = Math.max(thread.appliedSequence, item.sequence);
    this.listener.skipped?.(item);
  }

  private end(error?: T3Error): void {
    const { adapter, thread, listener } = this;
    adapter.streamed(thread, false);
    adapter.learnRunPhase(thread.threadId, undefined);
    if (error?.details.tag === "OrchestrationV2GetThreadProjectionError" || error?.kind === "decode") {
      // T3 could not read this one thread (it is gone, or failed to load), or sent it in a form
      // the fleet cannot read: the thread's fault, not the connection's (issue 43). It ends this
      // follow, with the reason shown (and counted on the machine); a reconnect tries again.
      thread.synced = false;
      thread.error = error.kind === "decode" ? `T3 sent this thread in a form T3 Fleet cannot read: ${error.message}` : error.message;
      if (error.kind === "decode")
        listener.skipped?.({ method: "orchestration.subscribeThread", path: error.details.decode?.path ?? "", message: error.message, sequence: null });
      listener.end();
      return;
    }
    listener.end(error);
  }
}
