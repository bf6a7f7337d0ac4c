// Which threads the fleet follows to know their truth (starting, running, blocked).
// A followed stream that falls behind its fleet row is re-subscribed by its protocol adapter.
// A thread whose turn just ended is followed a little longer: T3 reports the turn's checkpoint
// (its changed files) and its last token figures just after the turn ends (protocol 1
// `thread.turn-diff-completed`), which the fleet row does not carry. It is let go as soon as its
// stream shows them (`ThreadDetailFacts.lastTurnReported`), else after `SETTLE_FOLLOW_MS`: every
// followed thread holds its whole transcript, and an agent busy all day ends a turn every few
// minutes (issue 23: the hour-long soak's heap rose with the transcripts of threads kept 30 s each).
import type { ThreadDetail } from "../../shared/fleet/facts";
import { splitKey } from "../../shared/fleet/model";
import { agentKey, type AgentView } from "../../shared/fleet/types";
import { needsFollowing } from "../../shared/fleet/status";
import type { Environments } from "./environments";

/** How long a thread stays followed after its turn ended, for its checkpoint and usage, at most. */
export const SETTLE_FOLLOW_MS = 30_000;

interface Settling {
  timer: NodeJS.Timeout;
  /** Its stream was opened for settling: its first snapshot is newer than the row that ended the turn. */
  fresh: boolean;
}

export class ThreadFollowing {
  private readonly settling = new Map<string, Settling>();
  /** Each agent's row time when last seen, to tell a row that moved from one sent again. */
  private readonly seenUpdates = new Map<string, string>();

  constructor(
    private readonly environments: Environments,
    private readonly settleMs = SETTLE_FOLLOW_MS,
  ) {}

  /** An agent's view changed: follow or unfollow its thread. */
  agentChanged(agent: AgentView): void {
    const runtime = this.environments.get(agent.environmentId);
    if (!runtime) return;
    const previousUpdate = this.seenUpdates.get(agent.key);
    this.seenUpdates.set(agent.key, agent.updatedAt);
    // Rows of a machine not online (its snapshot before the synchronized mark included) are only remembered.
    if (agent.status === "unknown") return;
    if (needsFollowing(agent.lastKnownStatus)) {
      runtime.followers.follow(agent.threadId, "active");
      this.endSettling(agent.key);
      runtime.followers.unfollow(agent.threadId, "settling");
      return;
    }
    // A turn ended: the thread was followed while it ran, or its row is new or moved while the machine was online (a turn too quick to catch running).
    const moved = previousUpdate !== agent.updatedAt;
    if ((runtime.followers.isFollowing(agent.threadId, "active") || moved) && !this.settling.has(agent.key)) {
      const fresh = !runtime.followers.isFollowing(agent.threadId);
      const timer = setTimeout(() => this.release(agent.key), this.settleMs);
      timer.unref?.();
      this.settling.set(agent.key, { timer, fresh });
      runtime.followers.follow(agent.threadId, "settling");
      // A stream ahead of the row may have shown the whole turn already.
      const followed = runtime.followers.get(agent.threadId);
      if (followed) this.threadChanged(agent.environmentId, agent.threadId, followed.detail);
    }
    runtime.followers.unfollow(agent.threadId, "active");
  }

  /**
   * A followed thread's stream changed: a settling thread whose last turn is fully reported is let
   * go. Only a stream caught up with the row counts (opened for settling, with an event no older
   * than the row, or with no event since its snapshot, which then showed the turn reported: a quick
   * turn can end before the stream opened for it synchronizes): one behind it may not have seen the
   * turn the row ended yet.
   */
  threadChanged(environmentId: string, threadId: string, detail: ThreadDetail): void {
    const key = agentKey(environmentId, threadId);
    const settling = this.settling.get(key);
    if (!settling || !detail.synced || detail.facts.lastTurnReported !== true) return;
    const rowAt = this.seenUpdates.get(key);
    const eventAt = detail.facts.lastEventAt;
    if (settling.fresh || eventAt === null || (rowAt !== undefined && eventAt >= rowAt)) this.release(key);
  }

  stop(): void {
    for (const { timer } of this.settling.values()) clearTimeout(timer);
    this.settling.clear();
    this.seenUpdates.clear();
  }

  /** An agent left the fleet: its thread is no longer followed for it (a stream on a thread that is gone would stay open). */
  agentRemoved(key: string): void {
    this.seenUpdates.delete(key);
    this.endSettling(key);
    const [environmentId, threadId] = splitKey(key);
    const followers = this.environments.get(environmentId)?.followers;
    followers?.unfollow(threadId, "active");
    followers?.unfollow(threadId, "settling");
  }

  /** Settling ends: its thread is no longer followed for it. */
  private release(key: string): void {
    this.endSettling(key);
    const [environmentId, threadId] = splitKey(key);
    this.environments.get(environmentId)?.followers.unfollow(threadId, "settling");
  }

  private endSettling(key: string): void {
    const settling = this.settling.get(key);
    if (!settling) return;
    clearTimeout(settling.timer);
    this.settling.delete(key);
  }
}
