// The fleet service against simulators started here: three environments of mixed auth generations,
// faults (kill, restart, blackhole, revoke, a dispatch cut mid-flight), status roll-ups, delivery.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { BridgeEvent } from "../../shared/bridge/contract";
import type { Delivery } from "../../shared/fleet/delivery";
import type { NotificationIntent } from "../../shared/fleet/notifications";
import type { AgentView, EnvironmentView } from "../../shared/fleet/types";
import type { Generation } from "../../sim/engine";
import { SimFleet } from "../../sim/fleet";
import type { SimServer } from "../../sim/server";
import { MemorySecretStore } from "./secrets";
import { FleetService, type FleetServiceOptions } from "./service";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Liveness tuned so a vanished host is noticed in well under a second in tests. */
const FAST = { socket: { pingIntervalMs: 100, openTimeoutMs: 1_000 }, timing: { baseBackoffMs: 50, maxBackoffMs: 300, stableAfterMs: 1_000, probeTimeoutMs: 300 } };

async function setup(generations: Generation[] = ["upstream", "fork", "upstream"], tuning: Partial<FleetServiceOptions> = {}) {
  const sims = await SimFleet.start({ envs: generations.length, generations, tickMs: 5 });
  cleanups.push(() => sims.stop());
  const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-"));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const secrets = new MemorySecretStore();
  const service = await FleetService.start({ dataDir, secrets, ...FAST, ...tuning });
  cleanups.push(() => service.stop());
  const events: BridgeEvent[] = [];
  service.on("event", (event) => events.push(event));
  return { sims, service, secrets, dataDir, events };
}

/** Resolves when `check` holds after a service event (or already holds). Never polls. */
function until(service: FleetService, check: () => boolean, what: string): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      service.off("event", listener);
      reject(new Error(`timed out waiting for: ${what}`));
    }, 15_000);
    const listener = () => {
      if (!check()) return;
      clearTimeout(timer);
      service.off("event", listener);
      resolve();
    };
    service.on("event", listener);
  });
}

const env = (service: FleetService, sim: SimServer): EnvironmentView | undefined => service.model.environment(sim.environmentId);
const agent = (service: FleetService, sim: SimServer, threadId: string): AgentView | undefined => service.model.agent(`${sim.environmentId}/${threadId}`);

async function pairAll(service: FleetService, sims: SimFleet) {
  for (const sim of sims.servers) await service.request("pair.confirm", { input: sim.pairingUrl() });
  await until(service, () => sims.servers.every((sim) => env(service, sim)?.connection.phase === "online"), "all online");
}

describe("fleet service", () => {
  it("pairs three environments of mixed generations and merges their threads into one fleet", async () => {
    const { sims, service } = await setup();
    const threads = sims.servers.map((sim, i) => sims.createThread(sim, { title: `Task on ${sim.label}`, provider: (["codex", "claudeAgent", "grok"] as const)[i] }));
    await pairAll(service, sims);
    await until(service, () => sims.servers.every((sim, i) => agent(service, sim, threads[i]!) !== undefined), "agents merged");
    const agents = [...service.model.agents()];
    expect(agents).toHaveLength(3);
    expect(new Set(agents.map((a) => a.environmentId)).size).toBe(3);
    expect(service.model.environments().map((e) => e.generation).sort()).toEqual(["fork", "upstream", "upstream"]);
    expect(service.model.counts()).toMatchObject({ hostsDown: 0, agents: 3, byStatus: { idle: 3 } });
  });

  it("a child that fails flips its status, its parent's roll-up and the counts; an approval blocks and unblocks", async () => {
    const { sims, service } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const parent = sims.createThread(sim, { title: "Planner" });
    await pairAll(service, sims);
    const failing = sims.spawnChild(sim, parent, "worker1", "build it #fail");
    const blocked = sims.spawnChild(sim, parent, "worker2", "deploy #approval");
    await until(service, () => agent(service, sim, failing)?.status === "failed", "child failed");
    expect(agent(service, sim, failing)).toMatchObject({ parentThreadId: parent, orphaned: false, reason: expect.stringContaining("turn failed") });
    await until(service, () => agent(service, sim, blocked)?.status === "needs-approval" && agent(service, sim, blocked)!.pending.length === 1, "child blocked");
    expect(service.model.rollup(sim.environmentId, parent)).toBe("needs-approval");
    expect(service.model.counts().needsYou).toBe(2);

    const requestId = agent(service, sim, blocked)!.pending[0]!.requestId;
    const delivery = (await service.request("agent.respondApproval", { key: `${sim.environmentId}/${blocked}`, requestId, decision: "accept" })) as Delivery;
    expect(delivery.state).not.toBe("refused");
    await until(service, () => agent(service, sim, blocked)?.status === "idle", "approval answered, turn completed");
    await until(service, () => service.delivery(delivery.commandId)?.state === "delivered", "approval delivery confirmed");
    expect(service.model.rollup(sim.environmentId, parent)).toBe("failed");
  });

  it.each(["kill", "blackhole", "restart"] as const)("%s: the environment goes offline within the bound, then online with the same identity and no duplicates", async (fault) => {
    const { sims, service } = await setup(["upstream", "fork"]);
    const sim = sims.servers[1]!;
    const threadId = sims.createThread(sim, { title: "Long job", text: "#hang" });
    await pairAll(service, sims);
    await until(service, () => agent(service, sim, threadId)?.status === "running", "running");

    const started = Date.now();
    if (fault === "kill") await sim.kill();
    if (fault === "blackhole") sim.setBlackhole(true);
    const restarting = fault === "restart" ? sim.restart() : undefined;
    if (fault !== "restart") {
      await until(service, () => env(service, sim)?.connection.phase === "offline", "offline");
      // Two missed pings at most (100 ms each here; 10 s in production: design §7).
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(agent(service, sim, threadId)).toMatchObject({ status: "unknown", lastKnownStatus: "running" });
      expect(agent(service, sim, threadId)!.asOf).not.toBeNull();
      if (fault === "kill") await sim.start();
      else sim.setBlackhole(false);
    } else {
      await restarting;
    }
    await until(service, () => env(service, sim)?.connection.phase === "online", "online again");
    expect(env(service, sim)!.environmentId).toBe(sim.environmentId);
    const keys = [...service.model.agents()].map((a) => a.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.filter((key) => key.startsWith(sim.environmentId))).toHaveLength(1);
  });

  it("after system wake every connection is re-checked: a silent host goes offline, a live one stays online", async () => {
    // Pings so rare that only the wake re-check can notice the silent host.
    const { sims, service, events } = await setup(["upstream", "fork"], { socket: { pingIntervalMs: 60_000, openTimeoutMs: 1_000 } });
    await pairAll(service, sims);
    const [silent, live] = sims.servers as [SimServer, SimServer];
    silent.setBlackhole(true);
    service.recheckAll();
    await until(service, () => env(service, silent)?.connection.phase === "offline", "silent host offline");
    await until(service, () => env(service, live)?.connection.phase === "online", "live host confirmed");
    const livePhases = events.flatMap((e) => (e.type === "fleet.delta" ? e.environments.filter((v) => v.environmentId === live.environmentId).map((v) => v.connection.phase) : []));
    expect(livePhases).toContain("connecting"); // not trusted until it answered
    silent.setBlackhole(false);
    await until(service, () => env(service, silent)?.connection.phase === "online", "back online");
  });

  it("a revoked token gives unauthorized and no retry storm", async () => {
    const { sims, service } = await setup(["upstream", "fork"]);
    await pairAll(service, sims);
    for (const sim of sims.servers) {
      sim.auth.revoke();
      await until(service, () => env(service, sim)?.connection.phase === "unauthorized", `${sim.generation} unauthorized`);
    }
    const runtimesWaiting = sims.servers.map((sim) => (service as unknown as { runtimes: Map<string, { supervisor: { hasScheduledAttempt: boolean } }> }).runtimes.get(sim.environmentId)!.supervisor.hasScheduledAttempt);
    expect(runtimesWaiting).toEqual([false, false]);
    // Re-pairing brings it back.
    const sim = sims.servers[0]!;
    await service.request("pair.confirm", { input: sim.pairingUrl() });
    await until(service, () => env(service, sim)?.connection.phase === "online", "online after re-pair");
    expect(service.model.environments()).toHaveLength(2);
  });

  it.each(["after-apply", "before-apply"] as const)("a connection cut during a dispatch (%s) is uncertain, then exactly one message after reconciliation", async (when) => {
    const { sims, service, events } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Worker" });
    await pairAll(service, sims);
    const key = `${sim.environmentId}/${threadId}`;
    await until(service, () => agent(service, sim, threadId)?.status === "idle", "idle");
    sim.dropNextDispatch = when;
    const delivery = (await service.request("agent.send", { key, text: "only once please", expectedIntent: "new-turn" })) as Delivery;
    expect(delivery.state).toBe("uncertain");
    await until(service, () => ["delivered", "answered"].includes(service.delivery(delivery.commandId)!.state), "reconciled");
    await until(service, () => service.delivery(delivery.commandId)!.state === "answered", "answered");
    const userMessages = sim.engine.threads.get(threadId)!.messages.filter((m) => m.role === "user" && m.text === "only once please");
    expect(userMessages).toHaveLength(1);
    const states = events.flatMap((e) => (e.type === "delivery" && e.delivery.commandId === delivery.commandId ? [e.delivery.state] : []));
    expect(states).toContain("uncertain");
    expect(states.indexOf("uncertain")).toBeLessThan(states.indexOf("answered"));
  });

  it("states the intent before sending: steer where T3 steers, a new turn after the running one where it does not, a new turn when idle", async () => {
    const { sims, service } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const running = sims.createThread(sim, { title: "Busy", text: "#hang", provider: "claudeAgent" });
    const codex = sims.createThread(sim, { title: "Busy Codex", text: "#hang" });
    const idle = sims.createThread(sim, { title: "Free" });
    await pairAll(service, sims);
    await until(service, () => agent(service, sim, running)?.status === "running" && agent(service, sim, codex)?.status === "running", "running");
    expect(service.intent(`${sim.environmentId}/${running}`)).toMatchObject({ kind: "steer" });
    expect(service.intent(`${sim.environmentId}/${codex}`)).toMatchObject({ kind: "queue", note: expect.stringContaining("new turn after this one") });
    expect(service.intent(`${sim.environmentId}/${idle}`)).toMatchObject({ kind: "new-turn" });
    const steerToCodex = (await service.request("agent.send", { key: `${sim.environmentId}/${codex}`, text: "fold this", expectedIntent: "steer" })) as Delivery;
    expect(steerToCodex).toMatchObject({ state: "refused", reason: expect.stringContaining("start a new turn after the running one") });

    const steer = (await service.request("agent.send", { key: `${sim.environmentId}/${running}`, text: "also do X", expectedIntent: "steer" })) as Delivery;
    expect(["accepted", "delivered"]).toContain(steer.state);
    const mismatch = (await service.request("agent.send", { key: `${sim.environmentId}/${idle}`, text: "hi", expectedIntent: "steer" })) as Delivery;
    expect(mismatch).toMatchObject({ state: "refused", reason: expect.stringContaining("changed state") });

    await sim.kill();
    await until(service, () => env(service, sim)?.connection.phase === "offline", "offline");
    const offline = (await service.request("agent.send", { key: `${sim.environmentId}/${idle}`, text: "hi", expectedIntent: "new-turn" })) as Delivery;
    expect(offline).toMatchObject({ state: "refused", reason: expect.stringContaining("offline") });
  });

  it("user-input answers, interrupts and session stops go through the same delivery states", async () => {
    const { sims, service } = await setup(["fork"]);
    const sim = sims.servers[0]!;
    const asking = sims.createThread(sim, { title: "Asker", text: "#input" });
    const busy = sims.createThread(sim, { title: "Busy", text: "#hang" });
    await pairAll(service, sims);
    await until(service, () => agent(service, sim, asking)?.pending.length === 1, "question pending");
    const request = agent(service, sim, asking)!.pending[0]!;
    expect(request).toMatchObject({ kind: "input", questions: [{ id: "q1", options: [{ label: "Yes" }, { label: "No" }] }] });
    const answer = (await service.request("agent.respondInput", { key: `${sim.environmentId}/${asking}`, requestId: request.requestId, answers: { q1: "Yes" } })) as Delivery;
    await until(service, () => service.delivery(answer.commandId)?.state === "delivered", "answer delivered");
    await until(service, () => agent(service, sim, asking)?.status === "idle", "asker done");

    await until(service, () => agent(service, sim, busy)?.status === "running", "busy running");
    const interrupt = (await service.request("agent.interrupt", { key: `${sim.environmentId}/${busy}` })) as Delivery;
    await until(service, () => service.delivery(interrupt.commandId)?.state === "delivered", "interrupt delivered");
    await until(service, () => agent(service, sim, busy)?.status === "idle", "busy interrupted");
    const stop = (await service.request("agent.stop", { key: `${sim.environmentId}/${busy}` })) as Delivery;
    await until(service, () => service.delivery(stop.commandId)?.state === "delivered", "stop delivered");
    await until(service, () => agent(service, sim, busy)?.status === "ended", "session ended");
  });

  it("a command the server refuses is shown refused with the server's reason, never delivered", async () => {
    const { sims, service, events } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Asker", text: "#input" });
    await pairAll(service, sims);
    await until(service, () => agent(service, sim, threadId)?.status === "needs-input", "blocked");
    // Deleted behind the fleet's back: the next command hits T3's invariant.
    sim.engine.dispatch({ type: "thread.delete", commandId: "gone", threadId });
    const delivery = (await service.request("agent.interrupt", { key: `${sim.environmentId}/${threadId}` })) as Delivery;
    expect(delivery).toMatchObject({ state: "refused", reason: expect.stringContaining(`Thread '${threadId}' does not exist`) });
    const states = events.flatMap((e) => (e.type === "delivery" && e.delivery.commandId === delivery.commandId ? [e.delivery.state] : []));
    expect(states).not.toContain("delivered");
  });

  it("a message to a running Codex agent on a 0.0.24 server says it starts a new turn after the running one, and reports that turn", async () => {
    const { sims, service } = await setup(["fork"]);
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Long", text: "long job #slow" });
    await pairAll(service, sims);
    await until(service, () => agent(service, sim, threadId)?.status === "running", "running");
    const intent = service.intent(`${sim.environmentId}/${threadId}`);
    expect(intent).toMatchObject({ kind: "queue", note: expect.stringContaining("new turn after this one") });
    const delivery = (await service.request("agent.send", { key: `${sim.environmentId}/${threadId}`, text: "and this", expectedIntent: "queue" })) as Delivery;
    await until(service, () => service.delivery(delivery.commandId)?.state === "answered", "answered");
    expect(service.delivery(delivery.commandId)!.observed).toMatchObject({ outcome: "new-turn" });
  });

  it("a message to an idle agent starts a new turn and reports what was observed", async () => {
    const { sims, service } = await setup(["fork"]);
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Free" });
    await pairAll(service, sims);
    const delivery = (await service.request("agent.send", { key: `${sim.environmentId}/${threadId}`, text: "hello", expectedIntent: "new-turn" })) as Delivery;
    await until(service, () => service.delivery(delivery.commandId)?.state === "answered", "answered").catch((e) => {
      console.log(JSON.stringify(service.delivery(delivery.commandId)), JSON.stringify(service.detail(`${sim.environmentId}/${threadId}`).items));
      throw e;
    });
    expect(service.delivery(delivery.commandId)!.observed).toMatchObject({ outcome: "new-turn" });
  });

  it("notifies once per transition, not for what was already there at start-up", async () => {
    const { sims, service, events } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    sims.createThread(sim, { title: "Already broken", text: "#fail" });
    const later = sims.createThread(sim, { title: "Breaks later" });
    await new Promise<void>((resolve) => {
      const check = () => sim.engine.threads.get([...sim.engine.threads.keys()][0]!)!.session?.status === "error" && (sim.engine.off("event", check), resolve());
      sim.engine.on("event", check);
    });
    await pairAll(service, sims);
    const notifications = () => events.flatMap((e) => (e.type === "notification" ? [e.notification] : [])) as NotificationIntent[];
    await until(service, () => notifications().some((n) => n.reason === "summary"), "summary");
    expect(notifications().filter((n) => n.reason === "failed")).toHaveLength(0);
    sims.sendMessage(sim, later, "#fail");
    await until(service, () => notifications().some((n) => n.reason === "failed"), "failure notified");
    expect(notifications().filter((n) => n.reason === "failed")).toEqual([expect.objectContaining({ agentKey: `${sim.environmentId}/${later}` })]);
  });

  it("a thread stream that falls behind the shell is subscribed again and catches up", async () => {
    const { sims, service } = await setup(["upstream"], { streamLagMs: 150 });
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Quiet stream" });
    await pairAll(service, sims);
    const key = `${sim.environmentId}/${threadId}`;
    await service.request("agent.open", { key });
    await until(service, () => service.detail(key).loaded, "transcript loaded");
    sim.muteThreadStreams = true; // live events stop, the shell keeps moving
    sims.sendMessage(sim, threadId, "are you there");
    await until(service, () => service.detail(key).items.some((m) => m.type === "message" && m.role === "assistant" && m.text.includes("are you there")), "caught up by resubscribing");
    expect(sim.muteThreadStreams).toBe(true);
  });

  it("opens an agent's live transcript and closes it", async () => {
    const { sims, service, events } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Chatty" });
    await pairAll(service, sims);
    const key = `${sim.environmentId}/${threadId}`;
    await service.request("agent.open", { key });
    await service.request("agent.send", { key, text: "talk to me", expectedIntent: "new-turn" });
    await until(service, () => events.some((e) => e.type === "agent.detail" && e.detail.items.some((m) => m.type === "message" && m.role === "assistant" && m.text.includes("talk to me"))), "reply in detail");
    await service.request("agent.close", { key });
  });

  it("renames, mutes and removes an environment; a muted machine stays watched but quiet", async () => {
    const { sims, service, events, dataDir } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    const threadId = sims.createThread(sim, { title: "Worker" });
    await pairAll(service, sims);
    await service.request("environment.rename", { environmentId: sim.environmentId, label: "Build farm" });
    expect(env(service, sim)!.label).toBe("Build farm");
    await service.request("environment.mute", { environmentId: sim.environmentId, muted: true });
    sims.sendMessage(sim, threadId, "#fail");
    await until(service, () => agent(service, sim, threadId)?.status === "failed", "failed while muted");
    expect(events.filter((e) => e.type === "notification" && e.notification.reason === "failed")).toEqual([]);
    const reopened = await FleetService.start({ dataDir, secrets: new MemorySecretStore() });
    cleanups.push(() => reopened.stop());
    expect(reopened.model.environment(sim.environmentId)).toMatchObject({ label: "Build farm", muted: true });
    await service.request("environment.remove", { environmentId: sim.environmentId });
    expect(service.model.environments()).toEqual([]);
    expect([...service.model.agents()]).toEqual([]);
  });

  it("rejects malformed bridge requests with a clear error", async () => {
    const { service } = await setup(["upstream"]);
    await expect(service.request("agent.send", { key: "x" })).rejects.toThrow(/Invalid agent.send request/);
    await expect(service.request("no.such", {})).rejects.toThrow(/Unknown request/);
    await expect(service.request("link.open", { url: "javascript:alert(1)" })).rejects.toThrow(/Only http and https/);
    await expect(service.request("pair.confirm", { input: "http://127.0.0.1:1/pair#token=ABCDEFGHJKLM" })).rejects.toThrow(/No server answered/);
  });
});
