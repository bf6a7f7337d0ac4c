// Shared set-up for the fleet service's tests: simulators started here, a service on a temporary
// data folder, and waits that resolve on service events (never on sleeps).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import type { BridgeEvent } from "../../shared/bridge/contract";
import type { AgentView, EnvironmentView } from "../../shared/fleet/types";
import { SimFleet, type SimFleetOptions } from "../../sim/fleet";
import type { SimServer } from "../../sim/protocol1/server";
import type { DeliveryJournal } from "./delivery-journal";
import type { Environments } from "./environments";
import { MemorySecretStore } from "./secrets";
import { FleetService, type FleetServiceOptions } from "./service";
import type { ConnectionSupervisor } from "./supervisor";
import type { ThreadFollowers } from "./threads";
import type { T3EnvironmentClient } from "./t3/client";

export const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/**
 * Liveness tuned so a vanished host is noticed within about two seconds in tests, and retries come
 * quickly. A ping every second: a pong is due before the next ping, and with pings every 100 ms a
 * test process (which runs its simulators too) stalled that long on a loaded machine read as a
 * vanished host, reconnected, and left a wait to time out (CI, stop 36: service.test.ts).
 */
export const FAST = {
  socket: { pingIntervalMs: 1_000, openTimeoutMs: 2_000 },
  timing: { baseBackoffMs: 50, maxBackoffMs: 300, stableAfterMs: 1_000, probeTimeoutMs: 1_000 },
};

export async function setup(
  generations: NonNullable<SimFleetOptions["generations"]> = ["upstream", "fork", "upstream"],
  tuning: Partial<FleetServiceOptions> = {},
) {
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

/** One upstream simulator with one idle thread, paired: where most delivery scenarios start. */
export async function idleUpstreamThread(tuning: Partial<FleetServiceOptions> = {}) {
  const fleet = await setup(["upstream"], tuning);
  const sim = fleet.sims.servers[0]!;
  const threadId = fleet.sims.createThread(sim, { title: "Worker" });
  const key = `${sim.environmentId}/${threadId}`;
  await fleet.service.request("pair.confirm", { input: sim.pairingUrl() });
  await until(fleet.service, () => fleet.service.model.agent(key)?.status === "idle", "idle");
  return { ...fleet, sim, threadId, key };
}

/** Resolves when `check` holds after a service event (or already holds). Never polls. */
export function until(service: FleetService, check: () => boolean, what: string): Promise<void> {
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

export const env = (service: FleetService, sim: SimServer): EnvironmentView | undefined => service.model.environment(sim.environmentId);
export const agent = (service: FleetService, sim: SimServer, threadId: string): AgentView | undefined =>
  service.model.agent(`${sim.environmentId}/${threadId}`);

export async function pairAll(service: FleetService, sims: SimFleet) {
  for (const sim of sims.servers) await service.request("pair.confirm", { input: sim.pairingUrl() });
  await until(service, () => sims.servers.every((sim) => env(service, sim)?.connection.phase === "online"), "all online");
}

/** The client an environment's runtime talks to its server with (what in-flight work still holds). */
export function clientOf(service: FleetService, environmentId: string): T3EnvironmentClient {
  const environments = (service as unknown as { environments: Environments }).environments;
  return environments.require(environmentId).client;
}

/** The connection supervisor behind an environment (for assertions on what it has scheduled). */
export function supervisorOf(service: FleetService, environmentId: string): ConnectionSupervisor {
  const environments = (service as unknown as { environments: Environments }).environments;
  return environments.require(environmentId).supervisor;
}

/** The service's write-ahead journal of messages (delivery-journal.ts). */
export function journalOf(service: FleetService): DeliveryJournal {
  return (service as unknown as { journal: DeliveryJournal }).journal;
}

/**
 * The service as a kill would leave it: nothing more reaches its data folder, and its connections
 * are gone (a killed process writes nothing on its way out).
 */
export async function kill(service: FleetService): Promise<void> {
  journalOf(service).halt();
  await service.stop();
}

/** The thread streams an environment follows (electron/fleet/threads.ts). */
export function followersOf(service: FleetService, environmentId: string): ThreadFollowers {
  const environments = (service as unknown as { environments: Environments }).environments;
  return environments.require(environmentId).followers;
}
