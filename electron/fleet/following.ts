// Which threads the fleet follows to know their truth (starting, running, blocked).
// A followed stream that falls behind its fleet row is re-subscribed by its protocol adapter.
import { needsFollowing } from "../../shared/fleet/status";
import type { AgentView } from "../../shared/fleet/types";
import type { Environments } from "./environments";

export class ThreadFollowing {
  constructor(private readonly environments: Environments) {}

  /** An agent's view changed: follow or unfollow its thread. */
  agentChanged(agent: AgentView): void {
    const runtime = this.environments.get(agent.environmentId);
    if (!runtime || agent.status === "unknown") return;
    if (needsFollowing(agent.lastKnownStatus)) runtime.followers.follow(agent.threadId, "active");
    else runtime.followers.unfollow(agent.threadId, "active");
  }
}
