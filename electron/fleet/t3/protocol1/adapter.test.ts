// The protocol-1 adapter against the protocol-faithful simulator: fleet stream facts, followed
// threads with the fork live-tail repair, archived vs deleted, and neutral commands.
import { describe, expect, it } from "vitest";
import { makeThread, turnStartCommand } from "../../../../sim/protocol1/threads.testkit";
import type { AgentFacts, ThreadDetail } from "../../../../shared/fleet/facts";
import { connect, FleetRecorder, ThreadRecorder } from "./adapter.testkit";

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
    const { sim, session } = await connect("upstream", { serverVersion: "0.0.42" });
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
