// What the protocol-1 adapter tests share: a session on the protocol-faithful simulator, paired as
// the fleet pairs, and listeners that record what its fleet and thread streams deliver.
import { afterEach } from "vitest";
import type { Generation } from "../../../../sim/protocol1/model";
import { SimServer } from "../../../../sim/protocol1/server";
import type { AgentFacts, AgentLifecycle, ThreadDetail } from "../../../../shared/fleet/facts";
import type { T3Error } from "../../../../shared/t3/errors";
import { parsePairingInput } from "../../../../shared/t3/pairing";
import type { AdapterSession, FleetStreamListener, ThreadStreamListener } from "../adapter";
import { T3EnvironmentClient } from "../client";
import { Waitable } from "../streams.testkit";
import { Protocol1Adapter } from "./adapter";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

export class FleetRecorder extends Waitable implements FleetStreamListener {
  agents = new Map<string, AgentFacts>();
  removed = new Map<string, Exclude<AgentLifecycle, "active"> | "archived-or-deleted">();
  snapshots = 0;
  synchronizedCount = 0;
  ended: T3Error | undefined | null = null;
  snapshot(agents: AgentFacts[]): void {
    this.snapshots++;
    this.agents = new Map(agents.map((agent) => [agent.threadId, agent]));
    this.notify();
  }
  upsert(agent: AgentFacts): void {
    this.agents.set(agent.threadId, agent);
    this.notify();
  }
  remove(threadId: string, lifecycle: Exclude<AgentLifecycle, "active"> | "archived-or-deleted"): void {
    this.removed.set(threadId, lifecycle);
    this.notify();
  }
  synchronized(): void {
    this.synchronizedCount++;
    this.notify();
  }
  end(error?: T3Error): void {
    this.ended = error;
    this.notify();
  }
}

export class ThreadRecorder extends Waitable implements ThreadStreamListener {
  detail: ThreadDetail | undefined;
  ends = 0;
  changed(detail?: ThreadDetail): void {
    if (detail) this.detail = detail;
    this.notify();
  }
  end(): void {
    this.ends++;
    this.notify();
  }
}

/** A simulator of `generation` and an adapter session on it, both closed after the test. */
export async function connect(
  generation: Generation,
  options: { serverVersion?: string; streamLagMs?: number } = {},
): Promise<{ sim: SimServer; adapter: Protocol1Adapter; session: AdapterSession }> {
  const sim = await new SimServer({ generation, tickMs: 5, ...(options.serverVersion && { serverVersion: options.serverVersion }) }).start();
  cleanups.push(() => sim.stop());
  const target = parsePairingInput(sim.pairingUrl());
  if (!target.ok || !target.target.pairingToken) throw new Error("bad pairing url");
  const client = new T3EnvironmentClient(target.target.baseUrl, { clientLabel: "T3 Fleet on test" });
  const paired = await client.pair({ pairingToken: target.target.pairingToken });
  const adapter = new Protocol1Adapter(
    { client, generation: paired.generation, descriptor: paired.environment },
    options.streamLagMs !== undefined ? { streamLagMs: options.streamLagMs } : {},
  );
  const session = await adapter.connect({ token: paired.token, generation: paired.generation });
  cleanups.push(() => session.close());
  return { sim, adapter, session };
}
