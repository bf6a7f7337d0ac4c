// Test helpers for the protocol-2 adapter: record what the fleet and thread streams deliver, and
// resolve when a condition holds. They wait on the streams' own callbacks, never on timers.
import { FLEET_SCOPES } from "../../../../shared/t3/pairing";
import type { AgentFacts, ThreadDetail } from "../../../../shared/fleet/facts";
import { EnvironmentDescriptor } from "../../../../shared/t3/schemas";
import { V2SimServer } from "../../../../sim/protocol2/server";
import { T3EnvironmentClient } from "../client";
import { StreamRecorder } from "../streams.testkit";
import { Protocol2Adapter, type Protocol2Options } from "./adapter";
import { OriginToken } from "../origin-token";
import type { FleetStreamListener, ThreadStreamListener } from "../adapter";

export class FleetRecorder extends StreamRecorder implements FleetStreamListener {
  readonly agents = new Map<string, AgentFacts>();
  readonly removed: string[] = [];
  /** How each removed thread left, as the stream said (archived, deleted, or unsure). */
  readonly leftAs = new Map<string, string>();
  snapshots = 0;
  synced = 0;

  snapshot(agents: AgentFacts[]): void {
    this.snapshots++;
    this.agents.clear();
    for (const agent of agents) this.agents.set(agent.threadId, agent);
    this.changed();
  }
  upsert(agent: AgentFacts): void {
    this.agents.set(agent.threadId, agent);
    this.changed();
  }
  remove(threadId: string, lifecycle: string): void {
    this.agents.delete(threadId);
    this.removed.push(threadId);
    this.leftAs.set(threadId, lifecycle);
    this.changed();
  }
  synchronized(): void {
    this.synced++;
    this.changed();
  }
  agent(threadId: string): AgentFacts | undefined {
    return this.agents.get(threadId);
  }
  untilAgent(threadId: string, check: (agent: AgentFacts) => boolean, what: string): Promise<AgentFacts> {
    return this.until(() => {
      const agent = this.agents.get(threadId);
      return agent !== undefined && check(agent);
    }, what).then(() => this.agents.get(threadId)!);
  }
}

export class ThreadDetailRecorder extends StreamRecorder implements ThreadStreamListener {
  latest: ThreadDetail | undefined;
  changes = 0;

  override changed(detail?: ThreadDetail): void {
    if (detail) {
      this.latest = detail;
      this.changes++;
    }
    super.changed();
  }
  untilDetail(check: (detail: ThreadDetail) => boolean, what: string): Promise<ThreadDetail> {
    return this.until(() => this.latest !== undefined && check(this.latest), what).then(() => this.latest!);
  }
}

/** A running v2 simulator, an adapter for it and a bearer token with the fleet's scopes. */
export async function v2Fixture(options: { tickMs?: number; adapter?: Protocol2Options; server?: V2SimServer } = {}) {
  const sim = options.server ?? (await new V2SimServer({ tickMs: options.tickMs ?? 2 }).start());
  const client = new T3EnvironmentClient(sim.baseUrl, { clientLabel: "T3 Fleet on test" });
  const descriptor = EnvironmentDescriptor.parse(sim.descriptor());
  const adapter = new Protocol2Adapter({ client, generation: "upstream", descriptor }, options.adapter);
  const token = sim.auth.issueSession({ scopes: [...FLEET_SCOPES], role: "client", label: "T3 Fleet on test" }).token;
  return { sim, client, adapter, credentials: { token: OriginToken.issuedBy(sim.baseUrl, token), generation: "upstream" as const } };
}
