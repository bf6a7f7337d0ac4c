// The fleet side of the fleet scenarios (fleet-scenarios.testkit.ts): a real FleetService on its own
// data folder, paired by link with the server under test, and what it showed, recorded from its own
// events. Waits resolve on service events (service.testkit.ts), never on sleeps.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BridgeEvent } from "../../../shared/bridge/contract";
import type { DeliveryState } from "../../../shared/fleet/delivery";
import type { AgentView, DisplayStatus, EnvironmentView } from "../../../shared/fleet/types";
import { MemorySecretStore } from "../secrets";
import { FleetService, type FleetServiceOptions } from "../service";
import { FAST, cleanups, until as untilEvent } from "../service.testkit";
import type { ServerUnderTest } from "./server-under-test.testkit";

export { cleanups };

/**
 * FAST (service.testkit.ts) with a ping every 500 ms, not 100: the server runs in a process of its own,
 * which a busy two-core machine can leave unscheduled longer than one 100 ms ping (the fleet then saw
 * a live server as gone mid-scenario). A frozen one is still offline within a second.
 */
export const SCENARIO_TIMING = { ...FAST, socket: { ...FAST.socket, pingIntervalMs: 500 } };

export interface Fleet {
  service: FleetService;
  events: BridgeEvent[];
  environmentId: string;
}

/**
 * Starts a fleet service on a fresh data folder and pairs it with `server` by a fresh link; stopped
 * with `stops` (the test file's, for a fleet that outlives one scenario; each scenario's by default).
 */
export async function startFleet(
  server: ServerUnderTest,
  options: Partial<FleetServiceOptions> = SCENARIO_TIMING,
  stops: (() => unknown)[] = cleanups,
): Promise<Fleet> {
  const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-scenario-"));
  const service = await FleetService.start({ dataDir, secrets: new MemorySecretStore(), ...options });
  stops.push(
    () => rm(dataDir, { recursive: true, force: true }),
    () => service.stop(),
  );
  const events: BridgeEvent[] = [];
  service.on("event", (event) => events.push(event));
  const paired = (await service.request("pair.confirm", { input: await server.pairingUrl() })) as { environmentId: string };
  const fleet = { service, events, environmentId: paired.environmentId };
  await until(fleet, () => env(fleet)?.connection.phase === "online", "online after pairing");
  return fleet;
}

/** Resolves when `check` holds after a fleet event (or already holds); `shown` says what the fleet showed instead, on a timeout. */
export async function until(fleet: Fleet, check: () => boolean, what: string, shown?: () => unknown): Promise<void> {
  try {
    await untilEvent(fleet.service, check, what);
  } catch (error) {
    if (!shown) throw error;
    throw new Error(`${(error as Error).message}; shown instead: ${JSON.stringify(shown())}`, { cause: error });
  }
}

export const env = (fleet: Fleet): EnvironmentView | undefined => fleet.service.model.environment(fleet.environmentId);
export const keyOf = (fleet: Fleet, threadId: string) => `${fleet.environmentId}/${threadId}`;
export const agent = (fleet: Fleet, threadId: string): AgentView | undefined => fleet.service.model.agent(keyOf(fleet, threadId));
/** The fleet's rows of the server under test. */
export const rows = (fleet: Fleet): AgentView[] => [...fleet.service.model.agents()].filter((view) => view.environmentId === fleet.environmentId);

/** The states a delivery was shown in, in order, without repeats (a state is re-published as it gains detail). */
export const deliveryStates = (fleet: Fleet, commandId: string): DeliveryState[] =>
  fleet.events
    .flatMap((event) => (event.type === "delivery" && event.delivery.commandId === commandId ? [event.delivery.state] : []))
    .filter((state, index, states) => state !== states[index - 1]);

/** Records from now on what `fleet` emits, as `read` picks it from each event; stops after the scenario. */
function recorder<T>(fleet: Fleet, read: (event: BridgeEvent) => T[]): () => T[] {
  const seen: T[] = [];
  const record = (event: BridgeEvent) => seen.push(...read(event));
  fleet.service.on("event", record);
  cleanups.push(() => fleet.service.off("event", record));
  return () => [...seen];
}

/** The statuses an agent is shown with from now on, in order, without repeats. */
export function statusHistory(fleet: Fleet, threadId: string): () => DisplayStatus[] {
  const key = keyOf(fleet, threadId);
  const all = recorder(fleet, (event) => (event.type === "fleet.delta" ? event.agents.filter((view) => view.key === key).map((view) => view.status) : []));
  return () => all().filter((status, index, statuses) => status !== statuses[index - 1]);
}

/** The keys of the server's rows the fleet removes from now on. */
export function removals(fleet: Fleet): () => string[] {
  return recorder(fleet, (event) => (event.type === "fleet.delta" ? event.removed.filter((key) => key.startsWith(`${fleet.environmentId}/`)) : []));
}

/** The connection phases the fleet shows for the server from now on, without repeats. */
export function phases(fleet: Fleet): () => string[] {
  const first = env(fleet)!.connection.phase;
  const all = recorder(fleet, (event) =>
    event.type === "fleet.delta" ? event.environments.filter((view) => view.environmentId === fleet.environmentId).map((view) => view.connection.phase) : [],
  );
  return () => [first, ...all()].filter((phase, index, list) => phase !== list[index - 1]);
}
