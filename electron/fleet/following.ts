// Which threads the fleet follows to know their truth (starting, running, blocked).
// A followed stream that falls behind its fleet row is re-subscribed by its protocol adapter.
// A thread whose turn just ended is followed a little longer: T3 reports the turn's checkpoint
// (its changed files) and its last token figures just after the turn ends (protocol 1
// `thread.turn-diff-completed`), which the fleet row does not carry.
import { splitKey } from "../../shared/fleet/model";
import { needsFollowing } from "../../shared/fleet/status";
import type { AgentView } from "../../shared/fleet/types";
import type { Environments } from "./environments";

/** How long a thread stays followed after its turn ended, for its checkpoint and usage. */
export const SETTLE_FOLLOW_MS = 30_000;

export class ThreadFollowing {
  private readonly settling = new Map<string, NodeJS.Timeout>();
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
      runtime.followers.follow(agent.threadId, "settling");
      const timer = setTimeout(() => {
        this.settling.delete(agent.key);
        this.environments.get(agent.environmentId)?.followers.unfollow(agent.threadId, "settling");
      }, this.settleMs);
      timer.unref?.();
      this.settling.set(agent.key, timer);
    }
    runtime.followers.unfollow(agent.threadId, "active");
  }

  stop(): void {
    for (const timer of this.settling.values()) clearTimeout(timer);
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

  private endSettling(key: string): void {
    const timer = this.settling.get(key);
    if (!timer) return;
    clearTimeout(timer);
    this.settling.delete(key);
  }
}
