// Thread streams of one environment: the threads the fleet must follow to know their truth
// (starting, running, blocked, a send in flight) and the ones a user opened. They ride on the
// supervisor's connection and are re-subscribed, resuming by sequence, whenever it reconnects.
import type { T3Error } from "../../shared/t3/errors";
import { ThreadProjection } from "../../shared/fleet/thread-projection";
import type { Subscription, T3Connection } from "./t3/client";
import type { ConnectionSupervisor } from "./supervisor";

interface Followed {
  projection: ThreadProjection;
  /** Why it is followed: "active", "open", "delivery:<commandId>" … */
  reasons: Set<string>;
  subscription: Subscription | undefined;
  /** The stream delivered its snapshot or resume marker on the current connection. */
  synced: boolean;
  error: string | null;
}

export type FollowChange = (threadId: string, projection: ThreadProjection, state: { synced: boolean; error: string | null }) => void;

export class ThreadFollowers {
  private readonly followed = new Map<string, Followed>();
  private connection: T3Connection | undefined;

  constructor(
    private readonly supervisor: ConnectionSupervisor,
    private readonly onChange: FollowChange,
  ) {
    supervisor.on("connected", (connection) => this.attach(connection));
    supervisor.on("phase", (phase) => {
      if (phase.phase !== "online") this.detach();
    });
  }

  follow(threadId: string, reason: string): void {
    let entry = this.followed.get(threadId);
    if (!entry) {
      entry = { projection: new ThreadProjection(), reasons: new Set(), subscription: undefined, synced: false, error: null };
      this.followed.set(threadId, entry);
    }
    entry.reasons.add(reason);
    if (!entry.subscription && this.connection) this.subscribe(threadId, entry, this.connection);
  }

  unfollow(threadId: string, reason: string): void {
    const entry = this.followed.get(threadId);
    if (!entry) return;
    entry.reasons.delete(reason);
    if (entry.reasons.size > 0) return;
    entry.subscription?.close();
    this.followed.delete(threadId);
  }

  /** The stream fell behind what the shell shows: subscribe again, resuming from what was applied. */
  resync(threadId: string): void {
    const entry = this.followed.get(threadId);
    if (!entry || !this.connection) return;
    entry.subscription?.close();
    entry.subscription = undefined;
    this.subscribe(threadId, entry, this.connection);
  }

  isFollowing(threadId: string, reason?: string): boolean {
    const entry = this.followed.get(threadId);
    return entry !== undefined && (reason === undefined || entry.reasons.has(reason));
  }

  get(threadId: string): { projection: ThreadProjection; synced: boolean; error: string | null } | undefined {
    return this.followed.get(threadId);
  }

  get size(): number {
    return this.followed.size;
  }

  stop(): void {
    this.detach();
    this.followed.clear();
  }

  private attach(connection: T3Connection): void {
    this.connection = connection;
    for (const [threadId, entry] of this.followed) this.subscribe(threadId, entry, connection);
  }

  private detach(): void {
    this.connection = undefined;
    for (const entry of this.followed.values()) {
      entry.subscription?.close();
      entry.subscription = undefined;
      entry.synced = false;
    }
  }

  private subscribe(threadId: string, entry: Followed, connection: T3Connection): void {
    entry.synced = false;
    const { projection } = entry;
    const notify = () => this.onChange(threadId, projection, { synced: entry.synced, error: entry.error });
    const current = () => this.followed.get(threadId) === entry && entry.subscription === subscription;
    const subscription: Subscription = connection.subscribeThread(
      threadId,
      {
        snapshot: (snapshot) => {
          projection.applySnapshot(snapshot);
          if (current()) notify();
        },
        delta: (event) => {
          if (projection.applyEvent(event) && current() && entry.synced) notify();
        },
        synchronized: () => {
          entry.synced = true;
          entry.error = null;
          if (current()) notify();
        },
        end: (error?: T3Error) => {
          if (!current()) return;
          entry.subscription = undefined;
          entry.synced = false;
          if (!error || error.kind === "interrupted") return;
          if (error.kind === "not-found") {
            // The thread is gone (deleted); nothing to retry.
            entry.error = "This thread no longer exists on its environment.";
            notify();
            return;
          }
          // Anything else means the connection cannot be trusted: the supervisor decides.
          this.supervisor.reportFailure(error);
        },
      },
      {
        ...(projection.thread && { afterSequence: projection.lastSequence }),
        repairLiveTail: this.supervisor.generation === "fork",
      },
    );
    entry.subscription = subscription;
  }
}
