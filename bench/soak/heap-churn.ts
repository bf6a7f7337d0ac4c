// `npx tsx bench/soak/heap-churn.ts [--minutes N] [--snapshots DIR] [--seed S]`: the soak's churn
// (bench/soak.ts) without its faults to the service, faster, to show in minutes what the service's
// live heap keeps per hour of churn (issue 43 point 1). The fleet service as `./fleet serve` runs
// it and the page in Chromium, four simulated machines of both protocols; every second a machine's
// threads are created and deleted, messages are sent every ~100 ms, what waits for the user is
// answered, the page is reloaded and a machine restarted or blackholed now and then. Prints the
// service's live heap (after a full collection) every 30 s, with and without its compiled code as
// the soak reads it (bench/soak/bounds.ts), and the fleet's own objects by V8's object stats, and
// the least-squares line's MB per minute of the heap without code over the second half. With `--snapshots DIR` the service writes a V8 heap snapshot there at
// a third, two thirds and the end (compare them with bench/soak/heap-compare.ts).
import { cpSync, rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildRenderer } from "../renderer-build";
import { SimulatedMachine } from "./machines";
import { askHeapSnapshot, ROOT, snapshotsInto } from "./processes";
import { between, pick, seededRng } from "./schedule";
import { SoakService } from "./service";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "15" },
    snapshots: { type: "string" },
    seed: { type: "string", default: "43" },
    "renderer-dir": { type: "string" },
  },
});
const durationMs = Number(values.minutes) * 60_000;
const rng = seededRng(Number(values.seed));
const snapshotDir = values.snapshots ? snapshotsInto(values.snapshots) : undefined;

const work = await mkdtemp(join(tmpdir(), "t3-fleet-heap-churn-"));
process.on("exit", () => rmSync(work, { recursive: true, force: true }));
// A copy of the build (or `--renderer-dir`): the page is reloaded throughout, and other runs may rebuild out/renderer meanwhile.
let rendererDir = values["renderer-dir"];
if (!rendererDir) {
  rendererDir = join(work, "renderer");
  buildRenderer();
  cpSync(join(ROOT, "out/renderer"), rendererDir, { recursive: true });
}
const reportPath = join(work, "resource-report.json");
const service = new SoakService({ dataDir: join(work, "data"), reportPath, rendererDir, stdoutPath: join(work, "service-stdout") });
const specs = [
  ["churn-fork", "fork"],
  ["churn-upstream", "upstream"],
  ["churn-v2", "v2"],
  ["churn-upstream-2", "upstream"],
] as const;
const [machines] = await Promise.all([
  Promise.all(specs.map(([label, generation]) => SimulatedMachine.start(label, generation, 40, 150))),
  service.start().then(() => service.openPage()),
]);
for (const machine of machines) await service.bridge.request("pair.confirm", { input: await machine.pairingUrl() });
const startedAt = Date.now();
const elapsed = () => Date.now() - startedAt;
const log = (line: string) => console.log(`[${(elapsed() / 1000).toFixed(0).padStart(5)} s] ${line}`);
const counters = { created: 0, deleted: 0, sent: 0, reloads: 0, faults: 0 };
const busy = new Set<string>();
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const running = () => elapsed() < durationMs;

async function churn(): Promise<void> {
  while (running()) {
    const machine = pick(rng, machines);
    if (!busy.has(machine.label)) {
      busy.add(machine.label);
      try {
        for (let i = between(rng, 6, 20); i > 0; i--) {
          machine.created.push(await machine.createThread(`Churn ${++counters.created}`));
        }
        while (machine.created.length > 6) {
          const threadId = machine.created.splice(Math.floor(rng() * machine.created.length), 1)[0]!;
          if (rng() < 0.2) await machine.changeThread(threadId, "archive").catch(() => undefined);
          await machine.changeThread(threadId, "delete").then(
            () => counters.deleted++,
            () => machine.created.push(threadId),
          );
          if (machine.created.length > 30) break;
        }
      } catch {
        // the machine was restarting: the next round churns it
      } finally {
        busy.delete(machine.label);
      }
    }
    await sleep(between(rng, 500, 1_500));
  }
}

async function send(): Promise<void> {
  while (running()) {
    const agents = [...service.bridge.state.agents.values()].filter((agent) => agent.lifecycle === "active");
    if (agents.length && service.bridge.open) {
      const agent = pick(rng, agents);
      const words = [rng() < 0.35 ? "#slow" : "", rng() < 0.12 ? "#approval" : "", rng() < 0.08 ? "#input" : "", rng() < 0.06 ? "#fail" : ""];
      const mode = agent.status === "running" ? pick(rng, ["steer", "queue"] as const) : "new-turn";
      counters.sent++;
      service.bridge
        .request("agent.send", { key: agent.key, text: `churn ${counters.sent} ${words.join(" ")}`.trim(), expectedIntent: mode })
        .catch(() => undefined);
    }
    await sleep(between(rng, 50, 200));
  }
}

async function attend(): Promise<void> {
  while (running()) {
    for (const agent of service.bridge.state.agents.values()) {
      if (agent.lifecycle !== "active") continue;
      for (const request of agent.pending) {
        if (request.kind === "approval")
          await service.bridge.request("agent.respondApproval", { key: agent.key, requestId: request.requestId, decision: "accept" }).catch(() => undefined);
        else if (request.kind === "input") {
          const answers = Object.fromEntries(request.questions.map((question) => [question.id, question.options[0]?.value ?? "the first one"]));
          await service.bridge.request("agent.respondInput", { key: agent.key, requestId: request.requestId, answers }).catch(() => undefined);
        }
      }
      if (agent.status === "failed" && !agent.acknowledged && rng() < 0.5)
        await service.bridge.request("agent.acknowledge", { key: agent.key }).catch(() => undefined);
      if (agent.status === "failed" && rng() < 0.05)
        await service.bridge.request("agent.snooze", { key: agent.key, until: new Date(Date.now() + 10_000).toISOString() }).catch(() => undefined);
    }
    await sleep(1_000);
  }
}

async function faults(): Promise<void> {
  while (running()) {
    await sleep(between(rng, 10_000, 20_000));
    if (!running()) return;
    if (rng() < 0.5) {
      counters.reloads++;
      await service.page!.reload().catch(() => undefined);
      continue;
    }
    const machine = pick(rng, machines);
    if (busy.has(machine.label)) continue;
    busy.add(machine.label);
    counters.faults++;
    try {
      if (rng() < 0.5) await machine.restart();
      else {
        await machine.blackhole(true);
        await sleep(between(rng, 3_000, 8_000));
        await machine.blackhole(false);
      }
    } finally {
      busy.delete(machine.label);
    }
  }
}

const samples: { atMs: number; liveMB: number }[] = [];
const mb = (bytes: number | null | undefined) => (bytes ?? NaN) / 1024 / 1024;
async function sampler(): Promise<void> {
  const snapshotsAt = [durationMs / 3, (2 * durationMs) / 3, durationMs - 5_000];
  for (let at = 0; at <= durationMs; at += 30_000) {
    await sleep(Math.max(0, startedAt + at - Date.now()));
    const { report, objects } = await service.report();
    const liveMB = mb(report?.heapLiveBytes) - mb(report?.heapCodeBytes);
    samples.push({ atMs: at, liveMB });
    const reducedMB = mb(report?.heapReducedBytes) - mb(report?.heapReducedCodeBytes);
    log(
      `live heap ${mb(report?.heapLiveBytes).toFixed(2)} MB, without compiled code ${liveMB.toFixed(2)} MB (after a memory-reducing collection ${reducedMB.toFixed(2)} MB), the fleet's own objects ${mb(objects?.fleetBytes).toFixed(2)} MB by V8's object stats, rows ${service.bridge.state.agents.size}; ${JSON.stringify(counters)}`,
    );
    while (snapshotDir && snapshotsAt.length && elapsed() >= snapshotsAt[0]! - 30_000) {
      snapshotsAt.shift();
      askHeapSnapshot(service.pid);
      log("heap snapshot asked for");
    }
  }
}

await Promise.all([churn(), send(), attend(), faults(), sampler()]);
const half = samples.filter((sample) => sample.atMs >= durationMs / 2 && Number.isFinite(sample.liveMB));
const meanX = half.reduce((sum, s) => sum + s.atMs, 0) / half.length;
const meanY = half.reduce((sum, s) => sum + s.liveMB, 0) / half.length;
const slope = half.reduce((sum, s) => sum + (s.atMs - meanX) * (s.liveMB - meanY), 0) / half.reduce((sum, s) => sum + (s.atMs - meanX) ** 2, 0);
console.log(
  `heap-churn: ${JSON.stringify(counters)}; live heap without compiled code over the second half: ${(slope * 60_000).toFixed(3)} MB a minute (${half.length} samples)`,
);
// Let the last snapshot finish writing before the service is stopped.
if (snapshotDir) await sleep(20_000);
await service.stop();
await Promise.all(machines.map((machine) => machine.stop()));
process.exit(0);
