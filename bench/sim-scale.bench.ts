// The simulator must hold 10 environments × 5,000 threads in one process (issue "Speak T3").
// Prints: seed + start time, RSS, and the time and size of one full shell snapshot over HTTP.
import { T3EnvironmentClient } from "../electron/fleet/t3/client";
import { Protocol1HttpReads } from "../electron/fleet/t3/protocol1/http-reads";
import { SimFleet } from "../sim/fleet";
import { OriginToken } from "../electron/fleet/t3/origin-token";

const ENVIRONMENTS = 10;
const THREADS = 5_000;

const rssBefore = process.memoryUsage().rss;
const started = performance.now();
const fleet = await SimFleet.start({ envs: ENVIRONMENTS, seedThreads: THREADS, generations: ["upstream"] });
const startMs = performance.now() - started;
globalThis.gc?.();
const rssMb = (process.memoryUsage().rss - rssBefore) / 2 ** 20;

const server = fleet.servers[0]!;
const session = server.auth.issueSession({ scopes: ["orchestration:read"], role: "client", label: "bench" });
const client = new T3EnvironmentClient(server.baseUrl, { clientLabel: "bench" });
const fetchStarted = performance.now();
const shell = await new Protocol1HttpReads(client.http).getShell({ token: OriginToken.issuedBy(server.baseUrl, session.token), generation: "upstream" });
const fetchMs = performance.now() - fetchStarted;

console.log(`environments                     ${ENVIRONMENTS}`);
console.log(`threads per environment          ${shell.threads.length}`);
console.log(`seed and start                   ${startMs.toFixed(0)} ms`);
console.log(`simulator RSS growth             ${rssMb.toFixed(0)} MB`);
console.log(`one shell snapshot (HTTP+decode) ${fetchMs.toFixed(0)} ms`);
await fleet.stop();
