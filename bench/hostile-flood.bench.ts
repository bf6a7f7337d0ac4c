// One hostile T3 server against the fleet (README.md, "Security"): it floods its shell stream with
// 200,000 threads whose titles are 2.8 KB of text and escape sequences, next to two ordinary
// machines. Figures: the service's memory, how soon a UI that opens then shows the other machines,
// and what the bridge sends it (largest message, bytes). Run alone: `npm run bench -- hostile`
// (FLOOD_THREADS=30000 for a shorter run).
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { WebSocket } from "ws";
import { BRIDGE_SESSION_PROTOCOL_PREFIX, BRIDGE_SUBPROTOCOL, type BridgeServerMessage } from "../shared/bridge/contract";
import { MemorySecretStore } from "../electron/fleet/secrets";
import { FleetService } from "../electron/fleet/service";
import { startHeadlessShell } from "../electron/serve/server";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..");
const MB = 2 ** 20;
const FLOOD_THREADS = Number(process.env.FLOOD_THREADS ?? 200_000);

/** One machine process: prints its pairing URLs, then "ready"; `said` waits for a word on its output. */
function machines(role: "ordinary" | "hostile") {
  const child = spawn(process.execPath, ["--import", "tsx", join(here, "hostile-flood-sim.ts"), role], { stdio: ["pipe", "pipe", "inherit"], cwd: root });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const said = (word: string) =>
    new Promise<void>((resolveSaid) => {
      const check = () => output.includes(word) && (child.stdout.off("data", check), resolveSaid());
      child.stdout.on("data", check);
      check();
    });
  return { child, said, urls: () => [...output.matchAll(/Pairing URL: (\S+)/g)].map((match) => match[1]!) };
}
const ordinaryMachines = machines("ordinary");
const hostileMachine = machines("hostile");

const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-flood-"));
let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
try {
  await Promise.all([ordinaryMachines.said("ready"), hostileMachine.said("ready")]);
  const pairingUrls = [...ordinaryMachines.urls(), ...hostileMachine.urls()];
  const service = await FleetService.start({ dataDir, secrets: new MemorySecretStore() });
  const events = new Set<() => void>();
  service.on("event", () => events.forEach((listener) => listener()));
  const until = (check: () => boolean) =>
    new Promise<void>((done) => {
      if (check()) return done();
      const listener = () => check() && (events.delete(listener), done());
      events.add(listener);
    });
  const labels: string[] = [];
  for (const url of pairingUrls) labels.push(((await service.request("pair.confirm", { input: url })) as { label: string }).label);
  const envIds = service.model.environments().map((env) => env.environmentId);
  const hostileId = service.model.environments().find((env) => env.label === "hostile")!.environmentId;
  const ordinaryIds = envIds.filter((id) => id !== hostileId);
  const agentsOf = (id: string) => [...service.model.agents()].filter((agent) => agent.environmentId === id).length;
  await until(() => service.model.environments().every((env) => env.connection.phase === "online") && ordinaryIds.every((id) => agentsOf(id) >= 200));
  const ordinaryAgents = ordinaryIds.reduce((sum, id) => sum + agentsOf(id), 0);

  // The flood.
  const noticed = new Promise<void>((done) =>
    service.on("event", (event) => event.type === "notification" && event.notification.id.startsWith(`${hostileId}//budget/`) && done()),
  );
  const floodStart = performance.now();
  hostileMachine.child.stdin.write("flood\n");
  await hostileMachine.said("flooded");
  await noticed;
  const noticeMs = performance.now() - floodStart;
  // Let the stream's remaining chunks arrive: the budget keeps the count where it is.
  await new Promise((settle) => setTimeout(settle, 2_000));
  globalThis.gc?.();
  const rssAfter = process.memoryUsage().rss;
  const hostileKept = agentsOf(hostileId);
  const stillOnline = ordinaryIds.every((id) => service.model.environment(id)?.connection.phase === "online");

  // A UI opens now: the first snapshot in pieces.
  const rendererDir = join(dataDir, "renderer");
  await import("node:fs/promises").then((fs) => fs.mkdir(rendererDir));
  await writeFile(join(rendererDir, "index.html"), "<!doctype html><title>T3 Fleet</title>");
  const shell = await startHeadlessShell({ service, rendererDir, log: () => {} });
  const code = new URLSearchParams(new URL(shell.url).hash.slice(1)).get("code");
  const { session } = (await (
    await fetch(`${shell.origin}/session`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: shell.origin },
      body: JSON.stringify({ code }),
    })
  ).json()) as { session: string };
  const opened = performance.now();
  const ws = new WebSocket(`${shell.origin.replace("http", "ws")}/bridge`, [BRIDGE_SUBPROTOCOL, `${BRIDGE_SESSION_PROTOCOL_PREFIX}${session}`], {
    headers: { origin: shell.origin },
    maxPayload: 1024 * MB,
  });
  const seen = new Map<string, number>();
  let bytes = 0;
  let largest = 0;
  let messages = 0;
  let firstPaintMs = NaN;
  const total = ordinaryAgents + hostileKept;
  const allMs = await new Promise<number>((done) => {
    ws.on("message", (data: Buffer) => {
      bytes += data.length;
      largest = Math.max(largest, data.length);
      messages++;
      const message = JSON.parse(data.toString()) as BridgeServerMessage;
      // As the page: a paced batch is acknowledged once read (shared/bridge/paced-feed.ts).
      if (message.type === "events") ws.send(JSON.stringify({ type: "ack", seq: message.seq }));
      const events = message.type === "event" ? [message.event] : message.type === "events" ? message.events : [];
      for (const event of events) {
        const agents = event.type === "fleet.snapshot" ? event.snapshot.agents : event.type === "fleet.delta" ? event.agents : [];
        for (const agent of agents) seen.set(agent.key, 1);
      }
      const ordinarySeen = [...seen.keys()].filter((key) => ordinaryIds.some((id) => key.startsWith(`${id}/`))).length;
      if (Number.isNaN(firstPaintMs) && ordinarySeen >= ordinaryAgents) firstPaintMs = performance.now() - opened;
      if (seen.size >= total) done(performance.now() - opened);
    });
  });
  ws.close();
  await shell.close();

  console.log(
    `hostile server: ${FLOOD_THREADS.toLocaleString("en-US")} threads with 2.8 KB titles pushed; the fleet kept ${hostileKept.toLocaleString("en-US")} (budget) and said so after ${(noticeMs / 1000).toFixed(1)} s`,
  );
  console.log(`ordinary machines online throughout: ${stillOnline ? "yes" : "NO"}   (target yes)`);
  console.log(`service RSS after the flood: ${(rssAfter / MB).toFixed(0)} MB, peak ${(peakRss / MB).toFixed(0)} MB   (target < 1,000 MB; before: 1.9 GB)`);
  console.log(
    `UI opened after the flood: the other machines' ${ordinaryAgents} agents complete after ${firstPaintMs.toFixed(0)} ms   (target < 1,000 ms; before: ~40 s frozen page)`,
  );
  console.log(
    `first snapshot: ${messages} messages, ${(bytes / MB).toFixed(1)} MB in all, largest ${(largest / 1024).toFixed(0)} KiB, all ${total.toLocaleString("en-US")} agents after ${allMs.toFixed(0)} ms   (target largest ≤ 512 KiB; before: one 394 MB message)`,
  );
  await service.stop();
} finally {
  clearInterval(sampler);
  ordinaryMachines.child.kill("SIGTERM");
  hostileMachine.child.kill("SIGTERM");
  await rm(dataDir, { recursive: true, force: true });
}
