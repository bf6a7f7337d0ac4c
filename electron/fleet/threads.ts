// Thread streams of one environment: the threads the fleet must follow to know their truth
// (starting, running, blocked, a send in flight) and the ones a user opened. They ride on the
// supervisor's connection through its protocol adapter and are re-subscribed, resuming where they
// stopped, whenever it reconnects. A new adapter (the machine now speaks another protocol) starts
// every followed thread afresh.
// A thread open in a view holds the view's tail; one followed only for its truth holds what its row
// and the delivery rules read (shared/fleet/transcript-tail.ts), and is read afresh when it opens
// if that let go of something the view shows (issue 43: the threads followed all day set the heap).
import { noThreadFacts, type ThreadDetail } from "../../shared/fleet/facts";
import { FOLLOWED_TAIL, OPEN_VIEW_TAIL, type TailLimits } from "../../shared/fleet/transcript-tail";
import type { T3Error } from "../../shared/t3/errors";
import type { ConnectionSupervisor } from "./supervisor";
import type { ProtocolAdapter, AdapterSession, FollowedThread, Subscription } from "./t3/adapter";

interface Followed {
  thread: FollowedThread;
  /** The thread being read afresh (`readAfresh`): it replaces `thread` once its snapshot is in, so a view never sees it empty. */
  fresh?: FollowedThread;
  /** Why it is followed: "active", "open", "delivery:<commandId>" … */
  reasons: Set<string>;
  subscription: Subscription | undefined;
}

export type FollowChange = (threadId: string, detail: ThreadDetail) => void;

export class ThreadFollowers {
  private readonly followed = new Map<string, Followed>();
  private connection: AdapterSession | undefined;

  constructor(
    private readonly supervisor: ConnectionSupervisor,
    private readonly onChange: FollowChange,
  ) {
    supervisor.on("adapter", (adapter) => this.replaceAdapter(adapter));
    supervisor.on("phase", (phase) => {
      if (phase.phase !== "online") this.detach();
      // Online on a new connection, or on the same one re-verified after a wake: follow on it.
      else if (supervisor.currentConnection) this.attach(supervisor.currentConnection);
    });
  }

  follow(threadId: string, reason: string): void {
    let entry = this.followed.get(threadId);
    if (!entry) {
      const adapter = this.supervisor.adapter;
      if (!adapter) {
        // Not connected yet: the first adapter creates the thread's state.
        entry = { thread: placeholder(threadId), reasons: new Set(), subscription: undefined };
      } else {
        entry = { thread: adapter.thread(threadId), reasons: new Set(), subscription: undefined };
      }
      this.followed.set(threadId, entry);
    }
    entry.reasons.add(reason);
    if (reason === OPEN_REASON && entry.thread.heldShort && !entry.fresh) this.readAfresh(threadId, entry);
    else retainWhatItNeeds(entry);
    if (!entry.subscription && this.connection) this.subscribe(threadId, entry, this.connection);
  }

  unfollow(threadId: string, reason: string): void {
    const entry = this.followed.get(threadId);
    if (!entry) return;
    const held = limitsOf(entry);
    entry.reasons.delete(reason);
    if (entry.reasons.size === 0) {
      const subscription = entry.subscription;
      entry.subscription = undefined;
      this.followed.delete(threadId);
      subscription?.close();
    }
    retainWhatItNeeds(entry);
    if (limitsOf(entry) === held) return;
    // Closed: what the fleet keeps of the thread (its row's detail, kept after it is let go) is cut to
    // what a followed thread holds, not the view's tail (a hundred turns of files), for as long as the agent lives.
    const detail = entry.thread.detail();
    if (detail.loaded) this.onChange(threadId, detail);
  }

  isFollowing(threadId: string, reason?: string): boolean {
    const entry = this.followed.get(threadId);
    return entry !== undefined && (reason === undefined || entry.reasons.has(reason));
  }

  /** What the thread's stream knows now. */
  get(threadId: string): { detail: ThreadDetail } | undefined {
    const entry = this.followed.get(threadId);
    return entry && { detail: entry.thread.detail() };
  }

  /**
   * A request this client answered leaves the thread's pending list at once, in the state it holds
   * and in the one being read afresh, which would otherwise show it pending again once it takes over.
   */
  markAnswered(threadId: string, requestId: string): void {
    const entry = this.followed.get(threadId);
    entry?.thread.markAnswered(requestId);
    entry?.fresh?.markAnswered(requestId);
  }

  get size(): number {
    return this.followed.size;
  }

  stop(): void {
    this.detach();
    this.followed.clear();
  }

  private replaceAdapter(adapter: ProtocolAdapter): void {
    this.detach();
    for (const [threadId, entry] of this.followed) {
      entry.thread = adapter.thread(threadId);
      entry.fresh = undefined;
      entry.thread.retain(limitsOf(entry));
    }
  }

  /**
   * A new state for the thread, read from a fresh snapshot on a stream opened again (when connected).
   * What it held so far stays what `get` answers until the snapshot is in.
   */
  private readAfresh(threadId: string, entry: Followed): void {
    const adapter = this.supervisor.adapter;
    if (!adapter) return;
    const subscription = entry.subscription;
    entry.subscription = undefined;
    subscription?.close();
    entry.fresh = adapter.thread(threadId);
    entry.fresh.retain(limitsOf(entry));
  }

  private attach(connection: AdapterSession): void {
    if (this.connection === connection) return;
    this.detach();
    this.connection = connection;
    // Opening one stream can follow another thread at once (a row it re-sends): that one is open already.
    for (const [threadId, entry] of this.followed) if (!entry.subscription) this.subscribe(threadId, entry, connection);
  }

  private detach(): void {
    this.connection = undefined;
    for (const entry of this.followed.values()) {
      const subscription = entry.subscription;
      entry.subscription = undefined;
      subscription?.close();
    }
  }

  private subscribe(threadId: string, entry: Followed, connection: AdapterSession): void {
    const thread = entry.fresh ?? entry.thread;
    const subscription: Subscription = connection.followThread(thread, {
      changed: (detail) => {
        if (this.followed.get(threadId) !== entry || entry.subscription !== subscription) return;
        if (entry.fresh === thread) {
          if (!detail.loaded) return;
          entry.thread = thread;
          entry.fresh = undefined;
        }
        this.onChange(threadId, detail);
      },
      skipped: (item) => {
        if (this.followed.get(threadId) === entry && entry.subscription === subscription) this.supervisor.reportSkipped(item);
      },
      end: (error?: T3Error) => {
        if (this.followed.get(threadId) !== entry || entry.subscription !== subscription) return;
        entry.subscription = undefined;
        this.onChange(threadId, entry.thread.detail());
        // Anything but a clean end means the connection cannot be trusted: the supervisor decides.
        if (error && error.kind !== "interrupted") this.supervisor.reportFailure(error);
      },
    });
    // Opening the stream may already have changed what is followed (a row it re-sent moved the
    // following rules): a stream nobody follows any more is closed at once, never left open.
    if (this.followed.get(threadId) !== entry || this.connection !== connection || entry.subscription) {
      subscription.close();
      return;
    }
    entry.subscription = subscription;
  }
}

/** Why a view's thread is followed. */
export const OPEN_REASON = "open";

/** How much of its history a followed thread holds: an open view's tail only while a view has it open. */
function limitsOf(entry: Followed): TailLimits {
  return entry.reasons.has(OPEN_REASON) ? OPEN_VIEW_TAIL : FOLLOWED_TAIL;
}

function retainWhatItNeeds(entry: Followed): void {
  entry.thread.retain(limitsOf(entry));
  entry.fresh?.retain(limitsOf(entry));
}

/** A thread followed before the first connect: no facts yet; replaced when the adapter is chosen. */
function placeholder(threadId: string): FollowedThread {
  return {
    threadId,
    detail: () => ({
      threadId,
      loaded: false,
      synced: false,
      facts: noThreadFacts(),
      items: [],
      appliedSequence: -1,
      error: null,
    }),
    markAnswered: () => {},
    retain: () => {},
    heldShort: false,
  };
}
