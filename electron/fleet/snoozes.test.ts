// Snoozing through T3 (electron/fleet/snoozes.ts) against the simulators of every protocol: where
// the descriptor advertises threadSnooze the thread is snoozed in T3 and its wake time comes back in
// the agent's facts; elsewhere, or when T3 refuses, the answer says the window keeps it and why.
import { describe, expect, it } from "vitest";
import type { BridgeResults } from "../../shared/bridge/contract";
import type { AgentView } from "../../shared/fleet/types";
import { createV2Thread, sendV2Message } from "../../sim/protocol2/fleet-hooks";
import { trayModel } from "../../shared/fleet/tray";
import { FAST, cleanups, setup, until } from "./service.testkit";
import { FleetService } from "./service";

type Snoozed = BridgeResults["agent.snooze"];

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

async function start() {
  // Liveness as shipped, not the service tests' hair trigger: a busy machine must not drop the connection mid-test.
  const { sims, service } = await setup(["upstream", "fork", "v2"], {
    socket: { pingIntervalMs: 5_000, openTimeoutMs: 10_000 },
    timing: { ...FAST.timing, probeTimeoutMs: 5_000 },
  });
  const [upstream, fork] = sims.servers as [(typeof sims.servers)[number], (typeof sims.servers)[number]];
  const v2 = sims.v2Servers[0]!;
  const pairing = [...sims.servers, ...sims.v2Servers];
  return { sims, service, upstream, fork, v2, pairing };
}

async function pair(service: FleetService, sims: { pairingUrl(): string; environmentId: string }[]) {
  for (const sim of sims) await service.request("pair.confirm", { input: sim.pairingUrl() });
  await until(service, () => sims.every((sim) => service.model.environment(sim.environmentId)?.connection.phase === "online"), "all online");
}

const agentOf = (service: FleetService, key: string): AgentView | undefined => service.model.agent(key);

describe("snoozing an agent through T3", () => {
  it("is snoozed in T3 where the server has snooze, and the wake time comes back in the facts; kept by the window elsewhere", async () => {
    const { sims, service, upstream, fork, v2, pairing } = await start();
    const keys = {
      upstream: `${upstream.environmentId}/${sims.createThread(upstream, { title: "Flaky", text: "build #fail" })}`,
      fork: `${fork.environmentId}/${sims.createThread(fork, { title: "Flaky", text: "build #fail" })}`,
      v2: `${v2.environmentId}/${createV2Thread(v2, { title: "Flaky", provider: "codex", text: "build #fail" })}`,
    };
    await pair(service, pairing);
    await until(service, () => Object.values(keys).every((key) => agentOf(service, key)?.status === "failed"), "three failures");
    expect(Object.values(keys).map((key) => agentOf(service, key)!.capabilities.snooze)).toEqual([true, false, true]);

    const until_ = inAnHour();
    for (const key of [keys.upstream, keys.v2]) {
      const result = (await service.request("agent.snooze", { key, until: until_ })) as Snoozed;
      expect(result).toEqual({ key, onServer: "snoozed", until: until_, note: null });
      await until(service, () => agentOf(service, key)?.snoozedUntil != null, "the server's wake time in the facts");
      expect(Date.parse(agentOf(service, key)!.snoozedUntil!)).toBe(Date.parse(until_));
    }
    // 0.0.24 has no snooze: the window keeps it, and nothing went to the server.
    expect(await service.request("agent.snooze", { key: keys.fork, until: until_ })).toEqual({ key: keys.fork, onServer: "local", until: until_, note: null });
    expect(agentOf(service, keys.fork)!.snoozedUntil).toBeNull();
  });

  it("T3 refuses to snooze a thread waiting on an approval: the window keeps it and says why", async () => {
    const { sims, service, upstream, v2, pairing } = await start();
    const keys = [
      `${upstream.environmentId}/${sims.createThread(upstream, { title: "Deploy", text: "deploy #approval" })}`,
      `${v2.environmentId}/${createV2Thread(v2, { title: "Deploy", provider: "claudeAgent", text: "#approval" })}`,
    ];
    await pair(service, pairing);
    await until(service, () => keys.every((key) => agentOf(service, key)?.status === "needs-approval"), "both blocked");
    for (const key of keys) {
      const result = (await service.request("agent.snooze", { key, until: inAnHour() })) as Snoozed;
      expect(result).toMatchObject({ key, onServer: "local", note: expect.stringMatching(/^T3 refused it: .*pending approval or user-input request/) });
      expect(agentOf(service, key)!.snoozedUntil).toBeNull();
    }
  });

  it("new activity on a snoozed thread wakes it in T3, and the facts say so", async () => {
    const { sims, service, upstream, v2, pairing } = await start();
    const upstreamThread = sims.createThread(upstream, { title: "Flaky", text: "build #fail" });
    const v2Thread = createV2Thread(v2, { title: "Flaky", provider: "codex", text: "build #fail" });
    const keys = [`${upstream.environmentId}/${upstreamThread}`, `${v2.environmentId}/${v2Thread}`];
    await pair(service, pairing);
    await until(service, () => keys.every((key) => agentOf(service, key)?.status === "failed"), "both failed");
    for (const key of keys) await service.request("agent.snooze", { key, until: inAnHour() });
    await until(service, () => keys.every((key) => agentOf(service, key)?.snoozedUntil != null), "both snoozed");
    sims.sendMessage(upstream, upstreamThread, "try again");
    sendV2Message(v2, v2Thread, "try again");
    await until(service, () => keys.every((key) => agentOf(service, key)?.snoozedUntil === null), "both awake");
  });

  it("refuses a wake time in the past and an agent it does not know", async () => {
    const { sims, service, upstream, pairing } = await start();
    const key = `${upstream.environmentId}/${sims.createThread(upstream, { title: "Flaky", text: "build #fail" })}`;
    await pair(service, pairing);
    await until(service, () => agentOf(service, key)?.status === "failed", "failed");
    await expect(service.request("agent.snooze", { key, until: new Date(Date.now() - 1_000).toISOString() })).rejects.toThrow(/in the future/);
    await expect(service.request("agent.snooze", { key: `${upstream.environmentId}/nope`, until: inAnHour() })).rejects.toThrow(/no longer on its environment/);
    await expect(service.request("agent.snooze", { key, until: "tomorrow" })).rejects.toThrow(/Invalid agent.snooze request/);
  });
});

describe("snoozes T3 does not hold, kept by T3 Fleet", () => {
  const trayAgents = (service: FleetService) =>
    trayModel(service.model.environments(), service.model.agents(), false).items.flatMap((item) => (item.kind === "agent" ? [item.agentKey] : []));

  it("counts a snooze until it changes apart in the model and the tray, keeps it through a restart, and wakes it when the need changes", async () => {
    const { sims, service, secrets, dataDir } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Flaky", text: "build #fail" });
    const key = `${sim.environmentId}/${threadId}`;
    await pair(service, [sim]);
    await until(service, () => agentOf(service, key)?.status === "failed", "failed");
    expect(trayAgents(service)).toEqual([key]);

    expect(await service.request("agent.snooze", { key, until: null })).toEqual({ key, onServer: "local", until: null, note: null });
    expect(agentOf(service, key)!.fleetSnooze).toMatchObject({ until: null });
    expect(agentOf(service, key)!.snoozedUntil).toBeNull(); // nothing went to T3
    expect(service.model.counts()).toMatchObject({ needsYou: 0, snoozed: 1 });
    expect(trayAgents(service)).toEqual([]);
    expect(service.snapshot().agents.find((agent) => agent.key === key)!.fleetSnooze).toMatchObject({ until: null });

    await service.stop();
    const reopened = await FleetService.start({ dataDir, secrets, ...FAST });
    cleanups.push(() => reopened.stop());
    await until(
      reopened,
      () => reopened.model.agent(key)?.status === "failed" && reopened.model.environment(sim.environmentId)?.connection.phase === "online",
      "failed again after restart",
    );
    expect(reopened.model.agent(key)!.fleetSnooze).toMatchObject({ until: null });
    expect(reopened.model.counts()).toMatchObject({ needsYou: 0, snoozed: 1 });
    expect(trayAgents(reopened)).toEqual([]);

    sims.sendMessage(sim, threadId, "deploy #approval");
    await until(reopened, () => reopened.model.agent(key)?.status === "needs-approval", "it now needs a decision");
    expect(reopened.model.agent(key)!.fleetSnooze).toBeUndefined();
    expect(reopened.model.counts()).toMatchObject({ needsYou: 1, snoozed: 0 });
    expect(trayAgents(reopened)).toEqual([key]);
  });

  it("keeps a timed snooze T3 refused, with why, until unsnoozed", async () => {
    const { sims, service } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const key = `${sim.environmentId}/${sims.createThread(sim, { title: "Deploy", text: "deploy #approval" })}`;
    await pair(service, [sim]);
    // Snoozed as the user would, with the approval in view: what it needs includes the request itself.
    await until(service, () => agentOf(service, key)?.status === "needs-approval" && agentOf(service, key)!.pending.length === 1, "blocked on its approval");

    const wake = inAnHour();
    const result = (await service.request("agent.snooze", { key, until: wake })) as Snoozed;
    expect(result).toMatchObject({ onServer: "local", note: expect.stringMatching(/^T3 refused it: /) });
    expect(agentOf(service, key)!.fleetSnooze).toEqual({ until: Date.parse(wake), fingerprint: expect.any(String), note: result.note });
    expect(service.model.counts()).toMatchObject({ needsYou: 0, snoozed: 1 });
    expect(trayAgents(service)).toEqual([]);

    expect(await service.request("agent.unsnooze", { key })).toEqual({ key, onServer: "local", note: null });
    expect(agentOf(service, key)!.fleetSnooze).toBeUndefined();
    expect(service.model.counts()).toMatchObject({ needsYou: 1, snoozed: 0 });
    expect(trayAgents(service)).toEqual([key]);
  });
});
