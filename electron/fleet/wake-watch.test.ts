// Noticing a sleep, a clock change or a stalled event loop from the clocks alone (./wake-watch.ts),
// and what the fleet service does then: every connection re-verified before it is trusted, "as of"
// times from before the jump, and no notification replayed.
import { describe, expect, it } from "vitest";
import type { BridgeEvent } from "../../shared/bridge/contract";
import type { NotificationIntent } from "../../shared/fleet/notifications";
import { agent, pairAll, setup, until } from "./service.testkit";
import { CLOCK_JUMP_THRESHOLD_MS, EVENT_LOOP_STALL_THRESHOLD_MS, type Wake, WakeWatch } from "./wake-watch";

function clocks() {
  const clock = { wall: 1_700_000_000_000, monotonic: 10_000 };
  const wakes: Wake[] = [];
  const watch = new WakeWatch((wake) => wakes.push(wake), { intervalMs: 5_000, wallNow: () => clock.wall, monotonicNow: () => clock.monotonic });
  const tick = (wallMs: number, monotonicMs = wallMs) => {
    clock.wall += wallMs;
    clock.monotonic += monotonicMs;
    return watch.check();
  };
  return { tick, wakes };
}

describe("wake watch", () => {
  it("ordinary ticks, and small drifts, are not a wake", () => {
    const { tick, wakes } = clocks();
    expect(tick(5_000)).toBeNull();
    expect(tick(5_200, 5_000)).toBeNull();
    expect(tick(5_000 + CLOCK_JUMP_THRESHOLD_MS, 5_000)).toBeNull(); // at the threshold, not beyond
    expect(tick(5_000 + EVENT_LOOP_STALL_THRESHOLD_MS)).toBeNull();
    expect(wakes).toEqual([]);
  });

  it("the wall clock moving an hour while the monotonic clock moved seconds is a sleep; a clock set back is a jump too", () => {
    const { tick, wakes } = clocks();
    expect(tick(60 * 60_000 + 5_000, 5_000)).toEqual({ kind: "clock-jump", missedMs: 60 * 60_000 });
    expect(tick(5_000 - 10 * 60_000, 5_000)).toEqual({ kind: "clock-jump", missedMs: -10 * 60_000 });
    expect(tick(5_000)).toBeNull();
    expect(wakes).toHaveLength(2);
  });

  it("a tick a minute late by both clocks is a stalled event loop", () => {
    const { tick, wakes } = clocks();
    expect(tick(65_000)).toEqual({ kind: "stall", missedMs: 60_000 });
    expect(wakes).toEqual([{ kind: "stall", missedMs: 60_000 }]);
  });
});

describe("the fleet service after a clock jump", () => {
  it("re-verifies every connection before trusting it, keeps the agents' as-of time from before the jump, and replays no notification", async () => {
    let jumpMs = 0;
    const wall = () => Date.now() + jumpMs;
    // Pings so rare that only the re-check after the jump tests the connections.
    const { sims, service, events } = await setup(["upstream", "fork"], {
      socket: { pingIntervalMs: 60_000, openTimeoutMs: 1_000 },
      now: wall,
      wakeWatch: { wallNow: wall, monotonicNow: () => performance.now(), intervalMs: 50 },
    });
    const [first, second] = sims.servers as [(typeof sims.servers)[0], (typeof sims.servers)[0]];
    const asking = sims.createThread(first, { title: "Deploy", text: "deploy #approval" });
    const idle = sims.createThread(second, { title: "Idle" });
    await pairAll(service, sims);
    const notifications = () => events.flatMap((event) => (event.type === "notification" ? [event.notification] : [])) as NotificationIntent[];
    sims.sendMessage(second, idle, "deploy too #approval");
    await until(service, () => notifications().some((n) => n.reason === "needs-approval"), "the approval on the second machine notified");
    await until(service, () => agent(service, first, asking)?.status === "needs-approval", "the first machine's approval found at start-up");
    const before = notifications().length;
    const jumpedAt = events.length;

    jumpMs = 60 * 60_000; // the laptop slept for an hour
    const sinceJump = () => events.slice(jumpedAt);
    const phasesOf = (environmentId: string) =>
      sinceJump().flatMap((event: BridgeEvent) =>
        event.type === "fleet.delta" ? event.environments.filter((view) => view.environmentId === environmentId).map((view) => view.connection.phase) : [],
      );
    const reverified = (environmentId: string) => {
      const phases = phasesOf(environmentId);
      return phases.some((phase) => phase !== "online") && phases.at(-1) === "online";
    };
    await until(service, () => reverified(first.environmentId) && reverified(second.environmentId), "both machines re-verified");

    // While being re-verified the agents were unknown, as of their last confirmation: a frame's time by the real clock, not the jumped one.
    const whileChecking = sinceJump().flatMap((event) =>
      event.type === "fleet.delta" ? event.agents.filter((view) => view.key === `${first.environmentId}/${asking}` && view.status === "unknown") : [],
    );
    expect(whileChecking.length).toBeGreaterThan(0);
    for (const view of whileChecking) expect(Date.parse(view.asOf!)).toBeLessThanOrEqual(Date.now());
    expect(agent(service, first, asking)).toMatchObject({ status: "needs-approval" });
    expect(notifications().length).toBe(before);
  });

  it("an agent open before the sleep streams again after its connection was re-verified", async () => {
    let jumpMs = 0;
    const wall = () => Date.now() + jumpMs;
    const { sims, service, events } = await setup(["upstream"], {
      socket: { pingIntervalMs: 60_000, openTimeoutMs: 1_000 },
      now: wall,
      wakeWatch: { wallNow: wall, monotonicNow: () => performance.now(), intervalMs: 50 },
    });
    const [machine] = sims.servers as [(typeof sims.servers)[0]];
    const threadId = sims.createThread(machine, { title: "Reviewer", text: "review the patch" });
    await pairAll(service, sims);
    const key = `${machine.environmentId}/${threadId}`;
    await service.request("agent.open", { key });
    await until(service, () => service.detail(key).loaded, "transcript loaded");
    const jumpedAt = events.length;

    jumpMs = 60 * 60_000;
    const phases = () =>
      events.slice(jumpedAt).flatMap((event) => (event.type === "fleet.delta" ? event.environments.map((view) => view.connection.phase) : []));
    await until(service, () => phases().some((phase) => phase !== "online") && phases().at(-1) === "online", "re-verified");
    // Before: the re-check closed the open agent's stream and nothing opened it again.
    sims.sendMessage(machine, threadId, "after waking");
    await until(
      service,
      () => service.detail(key).items.some((item) => item.type === "message" && item.text.includes("after waking")),
      "the message after waking shown",
    );
  });

  it("an hour asleep is not an hour of quiet: a running agent is not flagged stalled on waking, and nothing notifies", async () => {
    let jumpMs = 0;
    const wall = () => Date.now() + jumpMs;
    const { sims, service, events } = await setup(["upstream"], {
      now: wall,
      wakeWatch: { wallNow: wall, monotonicNow: () => performance.now(), intervalMs: 50 },
    });
    const [machine] = sims.servers as [(typeof sims.servers)[0]];
    const working = sims.createThread(machine, { title: "Long job", text: "migrate everything #hang" });
    await pairAll(service, sims);
    await until(service, () => agent(service, machine, working)?.status === "running", "running");
    const notifiedBefore = events.filter((event) => event.type === "notification").length;
    const jumpedAt = events.length;

    jumpMs = 60 * 60_000; // the laptop slept for an hour; the run went on without a word
    const phases = () =>
      events.slice(jumpedAt).flatMap((event) => (event.type === "fleet.delta" ? event.environments.map((view) => view.connection.phase) : []));
    await until(service, () => phases().some((phase) => phase !== "online") && phases().at(-1) === "online", "re-verified");
    expect(agent(service, machine, working)).toMatchObject({ status: "running", stalled: false });
    expect(events.filter((event) => event.type === "notification").slice(notifiedBefore)).toEqual([]);
  });
});
