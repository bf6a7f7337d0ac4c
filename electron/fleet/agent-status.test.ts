// Agent statuses the real T3 servers taught (issue 7), end to end: simulator → protocol-1 adapter →
// fleet model → what the service publishes.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Delivery } from "../../shared/fleet/delivery";
import type { AgentView, DisplayStatus } from "../../shared/fleet/types";
import type { Generation } from "../../sim/engine";
import { SimFleet } from "../../sim/fleet";
import type { SimServer } from "../../sim/server";
import { MemorySecretStore } from "./secrets";
import { FleetService } from "./service";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const FAST = { socket: { pingIntervalMs: 200, openTimeoutMs: 2_000 }, timing: { baseBackoffMs: 50, maxBackoffMs: 300, stableAfterMs: 1_000, probeTimeoutMs: 500 } };

async function setup(generation: Generation = "upstream") {
  const sims = await SimFleet.start({ envs: 1, generations: [generation], tickMs: 5 });
  cleanups.push(() => sims.stop());
  const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-"));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const service = await FleetService.start({ dataDir, secrets: new MemorySecretStore(), ...FAST });
  cleanups.push(() => service.stop());
  return { sims, sim: sims.servers[0]!, service };
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

async function pair(service: FleetService, sim: SimServer): Promise<void> {
  await service.request("pair.confirm", { input: sim.pairingUrl() });
  await until(service, () => service.model.environment(sim.environmentId)?.connection.phase === "online", "online");
}

const agentOf = (service: FleetService, sim: SimServer, threadId: string): AgentView | undefined => service.model.agent(`${sim.environmentId}/${threadId}`);

describe("agent statuses from what real servers do", () => {
  it("a turn asked for stays starting until it runs (no idle in between, no second turn offered), then settles", async () => {
    // The 0.0.24 generation does not coalesce its shell, so every step between request and run is seen.
    const { sims, sim, service } = await setup("fork");
    const threadId = sims.createThread(sim, { title: "Fresh" });
    await pair(service, sim);
    const key = `${sim.environmentId}/${threadId}`;
    await until(service, () => agentOf(service, sim, threadId)?.status === "idle", "idle");
    const seen: DisplayStatus[] = ["idle"];
    const intents: string[] = ["new-turn"];
    service.on("event", (event) => {
      if (event.type !== "fleet.delta") return;
      const view = event.agents.find((agent) => agent.key === key);
      if (!view || seen.at(-1) === view.status) return;
      seen.push(view.status);
      intents.push(service.intent(key).kind);
    });
    const delivery = (await service.request("agent.send", { key, text: "take your time #slow", expectedIntent: "new-turn" })) as Delivery;
    await until(service, () => service.delivery(delivery.commandId)?.state === "answered", "answered");
    await until(service, () => agentOf(service, sim, threadId)?.status === "idle", "settled");
    const firstRunning = seen.indexOf("running");
    expect(firstRunning).toBeGreaterThan(1);
    expect(seen.slice(1, firstRunning).every((status) => status === "starting")).toBe(true);
    expect(intents.slice(1, firstRunning).every((kind) => kind === "refused")).toBe(true);
  });

  it("an interrupted turn is interrupted, a deleted thread deleted, an archived one ended · Archived", async () => {
    const { sims, sim, service } = await setup();
    const busy = sims.createThread(sim, { title: "Busy", text: "#hang" });
    const doomed = sims.createThread(sim, { title: "Doomed" });
    const shelved = sims.createThread(sim, { title: "Shelved" });
    await pair(service, sim);
    await until(service, () => agentOf(service, sim, busy)?.status === "running", "running");
    const interrupt = (await service.request("agent.interrupt", { key: `${sim.environmentId}/${busy}` })) as Delivery;
    await until(service, () => service.delivery(interrupt.commandId)?.state === "delivered", "interrupt delivered");
    await until(service, () => agentOf(service, sim, busy)?.status === "interrupted", "interrupted");
    expect(service.intent(`${sim.environmentId}/${busy}`)).toMatchObject({ kind: "new-turn" });

    sim.engine.dispatch({ type: "thread.delete", commandId: "delete-doomed", threadId: doomed });
    sim.engine.dispatch({ type: "thread.archive", commandId: "archive-shelved", threadId: shelved });
    await until(service, () => agentOf(service, sim, doomed)?.status === "deleted", "deleted");
    await until(service, () => agentOf(service, sim, shelved)?.reason === "Archived", "archived");
    expect(agentOf(service, sim, shelved)).toMatchObject({ status: "ended", lifecycle: "archived" });
    expect(service.intent(`${sim.environmentId}/${doomed}`)).toMatchObject({ kind: "refused", reason: "This thread was deleted." });
  });
});
