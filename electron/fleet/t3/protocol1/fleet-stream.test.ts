// The protocol-1 fleet stream's repairs, through a session on the protocol-faithful simulator, where
// electron/fleet/t3/protocol1/adapter.test.ts does not reach: the fork live-tail repair's bound, and
// the lag check seen from the follower of the stream it re-subscribes.
import { describe, expect, it } from "vitest";
import { makeThread, turnStartCommand } from "../../../../sim/protocol1/threads.testkit";
import type { AgentFacts } from "../../../../shared/fleet/facts";
import { connect, FleetRecorder, ThreadRecorder } from "./adapter.testkit";

/** An upstream simulator's thread, with the fleet stream synchronized and the thread's stream followed and synchronized. */
async function followedThread(options: { streamLagMs?: number } = {}) {
  const { sim, adapter, session } = await connect("upstream", options);
  const threadId = makeThread(sim, "codex");
  const fleet = new FleetRecorder();
  session.subscribeFleet(fleet);
  await fleet.until(() => fleet.synchronizedCount === 1);
  const thread = new ThreadRecorder();
  session.followThread(adapter.thread(threadId), thread);
  await thread.until(() => thread.detail?.synced === true);
  return { sim, threadId, fleet, thread };
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
    const { sim, threadId, thread } = await followedThread({ streamLagMs: 150 });
    sim.muteThreadStreams = true; // live thread events stop, the shell keeps moving
    sim.engine.dispatch(turnStartCommand(threadId, "are you there"));
    await thread.until(() => thread.detail!.items.some((item) => item.type === "message" && item.role === "assistant" && item.text.includes("are you there")));
    expect(sim.muteThreadStreams).toBe(true);
    expect(thread.ends).toBe(0);
    expect(thread.detail!.error).toBeNull();
  });

  it("shows a followed thread's turn ending when its stream says so, ahead of a lagging shell, and the late rows change nothing", async () => {
    const { sim, threadId, fleet, thread } = await followedThread();
    // An edit makes the workspace a git repository: the turn's checkpoint tells how it ended.
    sim.engine.dispatch(turnStartCommand(threadId, "take your time #slow #edit"));
    await fleet.until(() => fleet.agents.get(threadId)!.run.phase === "running");
    // From here the shell lags: its rows are held until the turn has ended on the thread stream.
    const release = sim.holdShellStreams();
    const running = fleet.agents.get(threadId)!;
    const phases: string[] = [];
    const upsert = fleet.upsert.bind(fleet);
    fleet.upsert = (agent) => {
      if (agent.threadId === threadId) phases.push(agent.run.phase);
      upsert(agent);
    };
    const settled = () => ["completed", "idle"].includes(fleet.agents.get(threadId)!.run.phase);
    await fleet.until(settled);
    expect(fleet.agents.get(threadId)!.updatedAt, "no shell row arrived").toBe(running.updatedAt);
    expect(thread.detail!.items.some((item) => item.type === "message" && item.role === "assistant" && !item.streaming)).toBe(true);
    const seenBeforeRelease = phases.length;
    release();
    const finalRow = sim.engine.shellRow(sim.engine.threads.get(threadId)!) as { updatedAt: string };
    await fleet.until(() => fleet.agents.get(threadId)!.updatedAt === finalRow.updatedAt);
    // The late rows say what the stream said: the turn never shows running again.
    expect(phases.slice(seenBeforeRelease).filter((phase) => phase !== "completed" && phase !== "idle")).toEqual([]);
    expect(settled()).toBe(true);
  });
});
