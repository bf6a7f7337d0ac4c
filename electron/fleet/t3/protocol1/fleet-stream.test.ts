// The protocol-1 fleet stream's repairs, through a session on the protocol-faithful simulator, where
// electron/fleet/t3/protocol1/adapter.test.ts does not reach: the fork live-tail repair's bound, and
// the lag check seen from the follower of the stream it re-subscribes.
import { afterEach, describe, expect, it } from "vitest";
import type { Generation } from "../../../../sim/protocol1/model";
import { makeThread, turnStartCommand } from "../../../../sim/protocol1/threads.testkit";
import { SimServer } from "../../../../sim/protocol1/server";
import type { AgentFacts, ThreadDetail } from "../../../../shared/fleet/facts";
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

class FleetRecorder extends Waitable implements FleetStreamListener {
  agents = new Map<string, AgentFacts>();
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
  remove(): void {
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

class ThreadRecorder extends Waitable implements ThreadStreamListener {
  detail: ThreadDetail | undefined;
  ends = 0;
  changed(detail: ThreadDetail): void {
    this.detail = detail;
    this.notify();
  }
  end(): void {
    this.ends++;
    this.notify();
  }
}

async function connect(generation: Generation, streamLagMs?: number): Promise<{ sim: SimServer; adapter: Protocol1Adapter; session: AdapterSession }> {
  const sim = await new SimServer({ generation, tickMs: 5 }).start();
  cleanups.push(() => sim.stop());
  const target = parsePairingInput(sim.pairingUrl());
  if (!target.ok || !target.target.pairingToken) throw new Error("bad pairing url");
  const client = new T3EnvironmentClient(target.target.baseUrl, { clientLabel: "T3 Fleet on test" });
  const paired = await client.pair({ pairingToken: target.target.pairingToken });
  const adapter = new Protocol1Adapter(
    { client, generation: paired.generation, descriptor: paired.environment },
    streamLagMs !== undefined ? { streamLagMs } : {},
  );
  const session = await adapter.connect({ token: paired.token, generation: paired.generation });
  cleanups.push(() => session.close());
  return { sim, adapter, session };
}

describe("protocol-1 fleet stream", () => {
  it("on a fork, re-snapshots at most three times in a row when every snapshot's gap changed a row, then reports synchronized once", async () => {
    const { sim, session } = await connect("fork");
    const threadId = makeThread(sim, "codex");
    const fleet = new (class extends FleetRecorder {
      override snapshot(agents: AgentFacts[]): void {
        // A rename while each snapshot's Ack is still on the wire: 0.0.24 does not deliver it live.
        sim.engine.dispatch({ type: "thread.meta.update", commandId: `rename-${this.snapshots}`, threadId, title: `Renamed ${this.snapshots}` });
        super.snapshot(agents);
      }
    })();
    session.subscribeFleet(fleet);
    await fleet.until(() => fleet.synchronizedCount === 1);
    expect(fleet.snapshots).toBe(4);
    // The fourth snapshot holds the third rename; the fourth rename fell in a gap no longer repaired.
    expect(fleet.agents.get(threadId)?.title).toBe("Renamed 2");
    expect(fleet.ended).toBeNull();
  });

  it("re-subscribes a followed thread stream that stays behind its shell row, unseen by the stream's follower", async () => {
    const { sim, adapter, session } = await connect("upstream", 150);
    const threadId = makeThread(sim, "codex");
    const fleet = new FleetRecorder();
    session.subscribeFleet(fleet);
    await fleet.until(() => fleet.synchronizedCount === 1);
    const thread = new ThreadRecorder();
    session.followThread(adapter.thread(threadId), thread);
    await thread.until(() => thread.detail?.synced === true);
    sim.muteThreadStreams = true; // live thread events stop, the shell keeps moving
    sim.engine.dispatch(turnStartCommand(threadId, "are you there"));
    await thread.until(() => thread.detail!.items.some((item) => item.type === "message" && item.role === "assistant" && item.text.includes("are you there")));
    expect(sim.muteThreadStreams).toBe(true);
    expect(thread.ends).toBe(0);
    expect(thread.detail!.error).toBeNull();
  });
});
