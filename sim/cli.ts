// `npm run sim -- --envs 3 [--threads 50] [--tick 400] [--generation fork|upstream|v2] [--control-port 4700]`
// `--envs fork,upstream,v2` starts one machine per listed generation (a mixed fleet).
// `--labels a,b` names the machines (one per environment, in order).
// Starts simulated T3 servers on 127.0.0.1 and prints each one's pairing URL and the control API.
import { parseArgs } from "node:util";
import type { Generation } from "./protocol1/model";
import { SimFleet } from "./fleet";

const { values } = parseArgs({
  options: {
    envs: { type: "string", default: "3" },
    threads: { type: "string", default: "12" },
    tick: { type: "string", default: "400" },
    generation: { type: "string" },
    "control-port": { type: "string", default: "0" },
    labels: { type: "string" },
  },
});

const GENERATIONS = ["fork", "upstream", "v2"] as const;
const isGeneration = (value: string): value is Generation | "v2" => (GENERATIONS as readonly string[]).includes(value);
const listed = values.envs.split(",").map((entry) => entry.trim());
const mixed = listed.every(isGeneration) ? (listed as (Generation | "v2")[]) : undefined;
const generations: (Generation | "v2")[] | undefined = mixed ?? (values.generation && isGeneration(values.generation) ? [values.generation] : undefined);

const fleet = await SimFleet.start({
  envs: mixed ? mixed.length : Number(values.envs),
  seedThreads: Number(values.threads),
  tickMs: Number(values.tick),
  ...(generations && { generations }),
  ...(values.labels && { overrides: values.labels.split(",").map((label) => ({ label: label.trim() })) }),
});
const controlUrl = await fleet.listenControl(Number(values["control-port"]));

console.log(`T3 simulator: ${fleet.servers.length + fleet.v2Servers.length} environment(s) on 127.0.0.1`);
for (const server of [...fleet.servers, ...fleet.v2Servers]) {
  console.log(`\n${server.label} (${server.generation}, T3 ${server.serverVersion}, ${server.environmentId})`);
  console.log(`  Connection string: ${server.baseUrl}`);
  console.log(`  Pairing URL: ${server.pairingUrl()}   (single use, expires in 5 minutes)`);
}
console.log(`\nControl API: ${controlUrl}/envs   (POST /envs/<label>/pairing for a fresh pairing URL)`);

const shutdown = () => {
  void fleet.stop().then(() => process.exit(0));
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
