// Thread streams of one environment (threads.ts): a thread followed lean and then opened is read
// afresh, and what this client does to it meanwhile reaches the state that takes over.
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { noThreadFacts, type ThreadDetail } from "../../shared/fleet/facts";
import { FOLLOWED_TAIL, OPEN_VIEW_TAIL, type TailLimits } from "../../shared/fleet/transcript-tail";
import type { ConnectionSupervisor } from "./supervisor";
import type { AdapterSession, FollowedThread, ProtocolAdapter, ThreadStreamListener } from "./t3/adapter";
import { OPEN_REASON, ThreadFollowers } from "./threads";

/** A thread's state as an adapter keeps it: what was answered here, and what it holds. */
class ThreadState implements FollowedThread {
  readonly answered: string[] = [];
  limits: TailLimits | undefined;
  heldShort = false;
  constructor(readonly threadId: string) {
    this.shown = { threadId, loaded: true, synced: true, facts: noThreadFacts(), items: [], appliedSequence: 0, error: null };
  }
  /** What this state answers, the same object each time, so a test can tell which state answered. */
  readonly shown: ThreadDetail;
  detail(): ThreadDetail {
    return this.shown;
  }
  markAnswered(requestId: string): void {
    this.answered.push(requestId);
  }
  retain(limits: TailLimits): void {
    this.limits = limits;
  }
}

function rig() {
  const streams: { thread: ThreadState; listener: ThreadStreamListener; closed: boolean }[] = [];
  const adapter = { thread: (threadId: string) => new ThreadState(threadId) } as unknown as ProtocolAdapter;
  const connection = {
    followThread: (thread: FollowedThread, listener: ThreadStreamListener) => {
      const stream = { thread: thread as ThreadState, listener, closed: false };
      streams.push(stream);
      return { close: () => (stream.closed = true) };
    },
  } as unknown as AdapterSession;
  const supervisor = Object.assign(new EventEmitter(), { adapter, currentConnection: connection });
  const changes: string[] = [];
  const followers = new ThreadFollowers(supervisor as unknown as ConnectionSupervisor, (threadId) => changes.push(threadId));
  supervisor.emit("phase", { phase: "online" });
  return { followers, streams, changes };
}

describe("a thread followed lean, then opened", () => {
  it("is read afresh on a new stream, answers with what it held until that is in, and keeps what was answered meanwhile", () => {
    const { followers, streams } = rig();
    followers.follow("thread-1", "delivery:c1");
    const lean = streams[0]!.thread;
    expect(lean.limits).toBe(FOLLOWED_TAIL);
    // It let go of something a view shows: opening it reads it afresh.
    lean.heldShort = true;
    followers.follow("thread-1", OPEN_REASON);
    expect(streams[0]!.closed).toBe(true);
    const fresh = streams[1]!.thread;
    expect(fresh).not.toBe(lean);
    expect(fresh.limits).toBe(OPEN_VIEW_TAIL);
    expect(followers.get("thread-1")!.detail, "the view is answered with what was held").toBe(lean.shown);

    // The user answers a request before the fresh snapshot is in.
    followers.markAnswered("thread-1", "request-1");
    streams[1]!.listener.changed(fresh.detail());
    expect(followers.get("thread-1")!.detail).toBe(fresh.shown);
    expect(fresh.answered, "the state that took over knows the answer").toEqual(["request-1"]);
  });
});
