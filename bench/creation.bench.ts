// Starting agents from the fleet (issue 42): how long after T3 confirms a new thread (the answer to
// its create reaches the fleet service) the agent is in the fleet tree's data, the first bridge
// event that carries its row to the window (`fleet.delta` or a snapshot). One simulated machine per
// protocol (T3 upstream protocol 1, which coalesces its shell stream over 50 ms as T3 does, and
// protocol 2), in this process. Prints figures; asserts nothing.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { BridgeEvent } from "../shared/bridge/contract";
import type { CreateChoices, Creation } from "../shared/fleet/creation";
import { MemorySecretStore } from "../electron/fleet/secrets";
import { FleetService } from "../electron/fleet/service";
import { SimFleet } from "../sim/fleet";
import { createV2Thread } from "../sim/protocol2/fleet-hooks";

const CREATIONS = Number(process.env.BENCH_CREATIONS ?? 40);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function carriesAgent(event: BridgeEvent, key: string): boolean {
  if (event.type === "fleet.delta") return event.agents.some((agent) => agent.key === key);
  if (event.type === "fleet.snapshot") return event.snapshot.agents.some((agent) => agent.key === key);
  return false;
}

const sims = await SimFleet.start({ envs: 2, generations: ["upstream", "v2"], tickMs: 20 });
const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-bench-"));
const service = await FleetService.start({ dataDir, secrets: new MemorySecretStore() });
sims.createThread(sims.servers[0]!, { title: "Existing work" });
createV2Thread(sims.v2Servers[0]!, { title: "Other work" });
const machines = [
  { name: "protocol 1 (T3 upstream)", sim: sims.servers[0]! },
  { name: "protocol 2", sim: sims.v2Servers[0]! },
];
for (const { sim } of machines) await service.request("pair.confirm", { input: sim.pairingUrl() });

/** Resolves when `check` holds after a service event (or already holds). */
function until(check: () => boolean): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve) => {
    const listener = () => {
      if (!check()) return;
      service.off("event", listener);
      resolve();
    };
    service.on("event", listener);
  });
}
await until(() => machines.every(({ sim }) => service.model.environment(sim.environmentId)?.connection.phase === "online"));

const figure = (values: number[]) =>
  `p50 ${percentile(values, 50).toFixed(1)} ms, p95 ${percentile(values, 95).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms`;

console.log(`New agent: from T3 confirming the create to the agent's row on its way to the tree, ${CREATIONS} creations per machine`);
for (const { name, sim } of machines) {
  const choices = (await service.request("agent.createChoices", { environmentId: sim.environmentId })) as CreateChoices;
  const provider = choices.options!.providers.find((entry) => entry.unavailable === null)!;
  const confirmToTree: number[] = [];
  const requestToConfirm: number[] = [];
  for (let i = 0; i < CREATIONS; i++) {
    const creationId = `bench-${sim.environmentId}-${i}`;
    let confirmedAt: number | undefined;
    let listedAt: number | undefined;
    // The receipt names the agent's key before anything is sent (creations.ts publishes "creating" first).
    let agentKey: string | undefined;
    const listener = (event: BridgeEvent) => {
      const now = performance.now();
      if (event.type === "creation" && event.creation.creationId === creationId) {
        agentKey = event.creation.agentKey;
        if (event.creation.state === "created") confirmedAt ??= now;
      }
      if (agentKey && listedAt === undefined && carriesAgent(event, agentKey)) listedAt = now;
    };
    service.on("event", listener);
    const sentAt = performance.now();
    const creation = (await service.request("agent.create", {
      creationId,
      environmentId: sim.environmentId,
      projectId: choices.options!.projects[0]!.id,
      instanceId: provider.instanceId,
      model: provider.models[0]!.slug,
      runtimeMode: "full-access",
      parentThreadId: null,
      title: "",
      text: `Bench creation ${i}`,
    })) as Creation;
    await until(() => confirmedAt !== undefined && listedAt !== undefined);
    service.off("event", listener);
    if (creation.creationId !== creationId) throw new Error("the service answered another creation");
    requestToConfirm.push(confirmedAt! - sentAt);
    // A row sent before T3's answer arrived was in the tree before the confirmation: 0.
    confirmToTree.push(Math.max(0, listedAt! - confirmedAt!));
  }
  console.log(`  ${name}: request → T3 confirmed: ${figure(requestToConfirm)}`);
  console.log(`  ${name}: T3 confirmed → in the tree: ${figure(confirmToTree)} (target: under 1,000 ms)`);
}

await service.stop();
await sims.stop();
await rm(dataDir, { recursive: true, force: true });
process.exit(0);
