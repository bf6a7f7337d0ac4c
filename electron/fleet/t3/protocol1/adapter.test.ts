// The protocol-1 adapter against the protocol-faithful simulator: fleet stream facts, followed
// threads with the fork live-tail repair, archived vs deleted, and neutral commands.
import { afterEach, describe, expect, it } from "vitest";
import type { Generation } from "../../../../sim/protocol1/model";
import { makeThread, turnStartCommand } from "../../../../sim/protocol1/threads.testkit";
import { SimServer } from "../../../../sim/protocol1/server";
import type { AgentFacts, AgentLifecycle, ThreadDetail } from "../../../../shared/fleet/facts";
import type { T3Error } from "../../../../shared/t3/errors";
import { parsePairingInput } from "../../../../shared/t3/pairing";
import { T3EnvironmentClient } from "../client";
import { Waitable } from "../streams.testkit";
import { Protocol1Adapter } from "./adapter";
import type { AdapterSession, FleetStreamListener, ThreadStreamListener } from "../adapter";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

class FleetRecorder extends Waitable implements FleetStreamListener {
  agents = new Map<string, AgentFacts>();
  removed = new Map<string, Exclude<AgentLifecycle, "active"> | "archived-or-deleted">();
  synchronizedCount = 0;
  ended: T3Error | undefined | null = null;
  snapshot(agents: AgentFacts[]): void {
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

class ThreadRecorder extends Waitable implements ThreadStreamListener {
  detail: ThreadDetail | undefined;
  changed(detail?: ThreadDetail): void {
    if (detail) this.detail = detail;
    this.notify();
  }
  end(): void {
    this.notify();
  }
}

async function connect(generation: Generation, serverVersion?: string): Promise<{ sim: SimServer; adapter: Protocol1Adapter; session: AdapterSession }> {
  const sim = await new SimServer({ generation, tickMs: 5, ...(serverVersion && { serverVersion }) }).start();
  cleanups.push(() => sim.stop());
  const target = parsePairingInput(sim.pairingUrl());
  if (!target.ok || !target.target.pairingToken) throw new Error("bad pairing url");
  const client = new T3EnvironmentClient(target.target.baseUrl, { clientLabel: "T3 Fleet on test" });
  const paired = await client.pair({ pairingToken: target.target.pairingToken });
  const adapter = new Protocol1Adapter({ client, generation: paired.generation, descriptor: paired.environment });
  const session = await adapter.connect({ token: paired.token, generation: paired.generation });
  cleanups.push(() => session.close());
  return { sim, adapter, session };
}

describe.each(["fork", "upstream"] as const)("protocol-1 adapter on a %s simulator", (generation) => {
  it("reports the fleet as facts, then a running turn and its completion", async () => {
    const { sim, session } = await connect(generation);
    const threadId = makeThread(sim, "claudeAgent");
    const fleet = new FleetRecorder();
    session.subscribeFleet(fleet);
    await fleet.until(() => fleet.synchronizedCount === 1 && fleet.agents.has(threadId));
    expect(fleet.agents.get(threadId)).toMatchObject({
      lifecycle: "active",
      parent: null,
      provider: { instanceId: "claudeAgent" },
      // Harnesses were observed under upstream servers only (shared/t3/protocol1/harnesses.ts).
      capabilities: { whileRunning: ["queue"], runningMessage: generation === "fork" ? "unobserved" : "next-turn" },
    });
    const phases: string[] = [];
    const upsert = fleet.upsert.bind(fleet);
    fleet.upsert = (agent) => {
      if (agent.threadId === threadId) phases.push(agent.run.phase);
      upsert(agent);
    };
    sim.engine.dispatch(turnStartCommand(threadId, "take your time #slow"));
    await fleet.until(() => phases.includes("running") && ["idle", "completed"].includes(phases.at(-1)!));
    // Asked for, then running, then settled: never idle before the turn ran.
    const firstRunning = phases.indexOf("running");
    expect(phases.slice(0, firstRunning).every((phase) => phase === "requested" || phase === "starting")).toBe(true);
  });

  it("follows a thread: transcript items with cumulative text, and an answered approval leaves the pending list", async () => {
    const { sim, adapter, session } = await connect(generation);
    const threadId = makeThread(sim, "codex");
    const thread = adapter.thread(threadId);
    const recorder = new ThreadRecorder();
    session.followThread(thread, recorder);
    await recorder.until(() => recorder.detail?.synced === true);
    sim.engine.dispatch(turnStartCommand(threadId, "deploy #approval"));
    await recorder.until(() => recorder.detail?.facts.pending.length === 1);
    const request = recorder.detail!.facts.pending[0]!;
    // What the real Codex took under T3 0.0.42 (shared/t3/protocol1/harnesses.ts).
    expect(request).toMatchObject({
      kind: "approval",
      decisions: [{ decision: "accept" }, { decision: "acceptForSession" }, { decision: "decline" }, { decision: "cancel" }],
    });
    await session.execute({ type: "respond-approval", commandId: `c-${threadId}`, threadId, requestId: request.requestId, decision: "acceptForSession" });
    await recorder.until(() => recorder.detail?.facts.pending.length === 0);
    await recorder.until(() => recorder.detail!.items.some((item) => item.type === "message" && item.role === "assistant" && !item.streaming));
    const user = recorder.detail!.items.find((item) => item.type === "message" && item.role === "user");
    expect(user).toMatchObject({ text: "deploy #approval" });
  });

  it("tells an archived thread from a deleted one when it leaves the shell", async () => {
    const { sim, session } = await connect(generation);
    const archived = makeThread(sim, "codex");
    const deleted = makeThread(sim, "codex");
    const fleet = new FleetRecorder();
    session.subscribeFleet(fleet);
    await fleet.until(() => fleet.synchronizedCount === 1);
    sim.engine.dispatch({ type: "thread.archive", commandId: "archive-1", threadId: archived });
    sim.engine.dispatch({ type: "thread.delete", commandId: "delete-1", threadId: deleted });
    await fleet.until(() => fleet.removed.get(archived) === "archived" && fleet.removed.get(deleted) === "deleted");
  });

  it("refuses, without sending, what protocol 1 cannot do", async () => {
    const { sim, session } = await connect(generation);
    const threadId = makeThread(sim, "codex");
    await expect(session.execute({ type: "cancel-queued", commandId: "q", threadId, runId: "r" })).rejects.toMatchObject({ kind: "rejected" });
    await expect(session.execute({ type: "respond-approval", commandId: "a", threadId, requestId: "r", decision: "acceptAlways" })).rejects.toMatchObject({
      kind: "rejected",
    });
  });
});

describe("protocol-1 adapter on a T3 0.0.42 simulator", () => {
  it("tells archived from deleted on a server that reads both as not found (T3 0.0.42), even when several leave at once", async () => {
    const { sim, session } = await connect("upstream", "0.0.42");
    const archived = [makeThread(sim, "codex"), makeThread(sim, "codex")];
    const deleted = [makeThread(sim, "codex"), makeThread(sim, "codex")];
    const fleet = new FleetRecorder();
    session.subscribeFleet(fleet);
    await fleet.until(() => fleet.synchronizedCount === 1);
    for (const threadId of archived) sim.engine.dispatch({ type: "thread.archive", commandId: `archive-${threadId}`, threadId });
    for (const threadId of deleted) sim.engine.dispatch({ type: "thread.delete", commandId: `delete-${threadId}`, threadId });
    const settled = (threadId: string) => ["archived", "deleted"].includes(fleet.removed.get(threadId) ?? "");
    await fleet.until(() => [...archived, ...deleted].every(settled));
    expect(archived.map((threadId) => fleet.removed.get(threadId))).toEqual(["archived", "archived"]);
    expect(deleted.map((threadId) => fleet.removed.get(threadId))).toEqual(["deleted", "deleted"]);
  });
});

describe("protocol-1 adapter, fork live-tail repair", () => {
  it("takes a new shell snapshot when a row changed between the snapshot and its Ack, and synchronizes once", async () => {
    const { sim, session } = await connect("fork");
    const threadId = makeThread(sim, "codex");
    let snapshots = 0;
    const fleet = new (class extends FleetRecorder {
      override snapshot(agents: AgentFacts[]): void {
        snapshots++;
        // A rename while our Ack is still on the wire: 0.0.24 does not deliver it live.
        if (snapshots === 1) sim.engine.dispatch({ type: "thread.meta.update", commandId: "rename-in-gap", threadId, title: "Renamed in the gap" });
        super.snapshot(agents);
      }
    })();
    session.subscribeFleet(fleet);
    await fleet.until(() => fleet.synchronizedCount === 1);
    expect(snapshots).toBe(2);
    expect(fleet.agents.get(threadId)?.title).toBe("Renamed in the gap");
    expect(fleet.ended).toBeNull();
  });

  it("merges events produced between a thread snapshot and its Ack, in order", async () => {
    const { sim, adapter, session } = await connect("fork");
    const threadId = makeThread(sim, "codex");
    const thread = adapter.thread(threadId);
    let gapSequence = -1;
    const recorder = new (class extends ThreadRecorder {
      override changed(detail?: ThreadDetail): void {
        if (detail?.loaded && gapSequence < 0) {
          // Produced while our Ack is still on the wire: 0.0.24 does not deliver it live.
          gapSequence = sim.engine.append("thread", threadId, "thread.activity-appended", "provider:gap", {
            threadId,
            activity: {
              id: "gap-activity",
              tone: "info",
              kind: "task.started",
              summary: "in the gap",
              payload: { taskId: "t1", detail: "gap task" },
              turnId: null,
              createdAt: sim.engine.now(),
            },
          }).sequence;
        }
        super.changed(detail);
      }
    })();
    session.followThread(thread, recorder);
    await recorder.until(() => recorder.detail?.synced === true);
    expect(recorder.detail!.appliedSequence).toBeGreaterThanOrEqual(gapSequence);
    expect(recorder.detail!.facts.subagents).toEqual([expect.objectContaining({ id: "t1", status: "running", title: "gap task" })]);
  });
});
