// Undo and the "handled today" log (issue 25 points 2-3) against simulators: waking a snoozed agent
// and un-acknowledging a failure go back through T3 where T3 holds the snooze or the settlement,
// and every action the fleet carried out is listed with its agent and machine, newest first.
import { describe, expect, it } from "vitest";
import type { BridgeEvent, BridgeResults } from "../../shared/bridge/contract";
import { HANDLED_KEPT, handledWords, startOfLocalDay } from "../../shared/fleet/handled";
import type { FleetModel } from "../../shared/fleet/model";
import { HandledLog } from "./handled-log";
import type { SimServer } from "../../sim/protocol1/server";
import { agent, pairAll, setup, until } from "./service.testkit";

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
const time = (ms: number) => new Date(ms).toISOString().slice(11, 16);

/** Resolves when the simulated T3 writes this event for the thread. */
function seen(sim: SimServer, type: string, threadId: string): Promise<void> {
  return new Promise<void>((resolve) => {
    const listener = (event: { type: string; aggregateId: string }) => {
      if (event.type !== type || event.aggregateId !== threadId) return;
      sim.engine.off("event", listener);
      resolve();
    };
    sim.engine.on("event", listener);
  });
}

describe("undo and the handled log", () => {
  it("waking an agent T3 holds snoozed unsnoozes it in T3; a window-only snooze is the window's to drop", async () => {
    const { sims, service } = await setup(["upstream", "fork"]);
    const [upstream, fork] = sims.servers as [(typeof sims.servers)[number], (typeof sims.servers)[number]];
    const upstreamThread = sims.createThread(upstream, { title: "Flaky", text: "build #fail" });
    const forkThread = sims.createThread(fork, { title: "Flaky too", text: "build #fail" });
    await pairAll(service, sims);
    await until(
      service,
      () => agent(service, upstream, upstreamThread)?.status === "failed" && agent(service, fork, forkThread)?.status === "failed",
      "failed",
    );
    const key = `${upstream.environmentId}/${upstreamThread}`;
    await service.request("agent.snooze", { key, until: inAnHour() });
    await until(service, () => agent(service, upstream, upstreamThread)?.snoozedUntil != null, "snoozed in T3");

    const woken = seen(upstream, "thread.unsnoozed", upstreamThread);
    expect(await service.request("agent.unsnooze", { key })).toEqual({ key, onServer: "unsnoozed", note: null } satisfies BridgeResults["agent.unsnooze"]);
    await woken;
    await until(service, () => agent(service, upstream, upstreamThread)?.snoozedUntil === null, "awake in the facts");

    // T3 holds no snooze here (0.0.24 has none; "until it changes" is never T3's): nothing to ask T3.
    const forkKey = `${fork.environmentId}/${forkThread}`;
    expect(await service.request("agent.snooze", { key: forkKey, until: null })).toEqual({ key: forkKey, onServer: "local", until: null, note: null });
    expect(await service.request("agent.unsnooze", { key: forkKey })).toEqual({ key: forkKey, onServer: "local", note: null });
  });

  it("un-acknowledging brings the failure back into 'need you', and unsettles it in T3 where T3 settled it", async () => {
    const { sims, service } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Flaky", text: "build #fail" });
    await pairAll(service, sims);
    const key = `${sim.environmentId}/${threadId}`;
    await until(service, () => agent(service, sim, threadId)?.status === "failed", "failed");
    await expect(service.request("agent.unacknowledge", { key })).rejects.toThrow(/not acknowledged/);
    await service.request("agent.acknowledge", { key });
    expect(service.model.counts().needsYou).toBe(0);

    const unsettled = seen(sim, "thread.unsettled", threadId);
    expect(await service.request("agent.unacknowledge", { key })).toEqual({ key, onServer: "unsettled", note: null });
    await unsettled;
    expect(agent(service, sim, threadId)).toMatchObject({ status: "failed", acknowledged: false });
    expect(service.model.counts().needsYou).toBe(1);
  });

  it("lists what the user did since a time, newest first, with agent and machine, and publishes each as it happens", async () => {
    const { sims, service } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const approval = sims.createThread(sim, { title: "Deploy", text: "deploy #approval" });
    const failing = sims.createThread(sim, { title: "Nightly", text: "build #fail" });
    await pairAll(service, sims);
    // The approval's request (its command) comes with the thread, a moment after the row says it waits.
    await until(service, () => agent(service, sim, approval)?.pending.length === 1 && agent(service, sim, failing)?.status === "failed", "both need you");
    const published: BridgeEvent[] = [];
    service.on("event", (event: BridgeEvent) => {
      if (event.type === "handled") published.push(event);
    });
    const approvalKey = `${sim.environmentId}/${approval}`;
    const failingKey = `${sim.environmentId}/${failing}`;
    const requestId = agent(service, sim, approval)!.pending[0]!.requestId;
    await service.request("agent.respondApproval", { key: approvalKey, requestId, decision: "accept" });
    await service.request("agent.acknowledge", { key: failingKey });
    await service.request("agent.unacknowledge", { key: failingKey });
    // Refused by the service: nothing was done, nothing is listed.
    await expect(service.request("agent.unacknowledge", { key: failingKey })).rejects.toThrow();

    const { entries } = (await service.request("handled.list", { since: startOfLocalDay(Date.now()) })) as BridgeResults["handled.list"];
    expect(entries.map((entry) => handledWords(entry, time))).toEqual([
      `Brought back Nightly on ${sim.label}: no longer acknowledged`,
      `Acknowledged Nightly on ${sim.label}`,
      `Approved “npm test” for Deploy on ${sim.label}`,
    ]);
    expect(published.map((event) => event.type === "handled" && event.entry.id)).toEqual(entries.map((entry) => entry.id).reverse());
    expect((await service.request("handled.list", { since: Date.now() + 60_000 })) as BridgeResults["handled.list"]).toEqual({ entries: [], letGo: 0 });
  });
});

describe("the handled log's bound", () => {
  const QUARTER_HOUR = 15 * 60_000;
  const midnight = Date.UTC(2026, 11, 5);
  const logAt = (clock: { now: number }) =>
    new HandledLog(
      { agent: () => undefined, environment: () => undefined } as unknown as FleetModel,
      () => {},
      () => clock.now,
    );

  it("keeps the newest entries and says how many of the day it let go, never losing them silently", () => {
    const clock = { now: midnight - QUARTER_HOUR };
    const log = logAt(clock);
    // Yesterday's last quarter hour, then a busy day: a minute apart.
    for (let index = 0; index < 10; index++) log.record(`env-1/thread-${index}`, { kind: "acknowledged" });
    clock.now = midnight;
    for (let index = 0; index < HANDLED_KEPT + 40; index++, clock.now += 60_000) log.record(`env-1/today-${index}`, { kind: "acknowledged" });
    const today = log.since(midnight);
    expect(today.entries).toHaveLength(HANDLED_KEPT);
    expect(today.entries[0]!.key, "newest first").toBe(`env-1/today-${HANDLED_KEPT + 39}`);
    // 50 let go in all: yesterday's 10 and today's first 40; today's list counts only its own.
    expect(today.letGo).toBe(40);
    expect(log.since(midnight - QUARTER_HOUR).letGo).toBe(50);
  });

  it("lets go of entries older than two days without counting them as the day's", () => {
    const clock = { now: midnight };
    const log = logAt(clock);
    log.record("env-1/thread-1", { kind: "acknowledged" });
    clock.now += 49 * 3_600_000;
    log.record("env-1/thread-2", { kind: "acknowledged" });
    expect(log.since(0)).toMatchObject({ entries: [{ key: "env-1/thread-2" }], letGo: 0 });
  });
});
