// Fleet service figures, shared by fleet-*.bench.ts (each runs in a fresh process).
// Simulated T3 servers run in a child process so the service's CPU and memory are its own.
// BENCH_MEMORY_DETAIL=1 prints where the service's memory is (kernel and V8 figures) at each step;
// BENCH_HEAP_SNAPSHOT=file writes a heap snapshot of the settled service.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { getHeapSpaceStatistics, writeHeapSnapshot } from "node:v8";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { FleetModel } from "../shared/fleet/model";
import { decodeWith } from "../shared/t3/decode";
import { Protocol1Rows } from "../shared/t3/protocol1/facts";
import { ThreadShell } from "../shared/t3/protocol1/schemas";
import { MemorySecretStore } from "../electron/fleet/secrets";
import { Registry } from "../electron/fleet/registry";
import { FleetService } from "../electron/fleet/service";
import { T3EnvironmentClient } from "../electron/fleet/t3/client";
import { parsePairingInput } from "../shared/t3/pairing";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const ENVS = 10;
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const LOAD_SECONDS = 10;
const EVENTS_PER_SECOND = 200;
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 10_000);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/**
 * Protocol 1: fork-generation simulators (upstream servers coalesce shell updates over 50 ms
 * windows, which would be measured as our latency). Protocol 2: the V2 simulator.
 */
export type BenchGeneration = "fork" | "v2";

async function startSims(threads: number, generation: BenchGeneration) {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(root, "sim/cli.ts"), "--envs", String(ENVS), "--threads", String(threads), "--tick", "20", "--generation", generation],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let output = "";
  await new Promise<void>((resolveReady) => {
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Control API:")) resolveReady();
    });
  });
  const pairingUrls = [...output.matchAll(/Pairing URL: (\S+)/g)].map((match) => match[1]!);
  const control = /Control API: (\S+)\/envs/.exec(output)![1]!;
  return { child, pairingUrls, control };
}

/** The process's resident high-water mark (VmHWM), in MB. */
function peakRssMb(): string {
  const kb = Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? NaN);
  return (kb / 1024).toFixed(0);
}

/** Where the process's memory is, from the kernel and V8 (BENCH_MEMORY_DETAIL=1). */
function memoryDetail(label: string): void {
  if (!process.env.BENCH_MEMORY_DETAIL) return;
  const kb = (text: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? NaN);
  const status = readFileSync("/proc/self/status", "utf8");
  const rollup = readFileSync("/proc/self/smaps_rollup", "utf8");
  const mb = (k: number) => (k / 1024).toFixed(0);
  const spaces = getHeapSpaceStatistics()
    .map((space) => `${space.space_name.replace("_space", "")} ${(space.space_used_size / 2 ** 20).toFixed(0)}/${(space.space_size / 2 ** 20).toFixed(0)}`)
    .join(", ");
  // Anonymous mappings by where they lie: V8 places its heap pages at random hints; glibc's
  // thread arenas and large blocks sit in the high mmap area; its main arena is [heap].
  let v8Pages = 0;
  let mmapArea = 0;
  let brk = 0;
  let current: "v8" | "mmap" | "brk" | null = null;
  for (const line of readFileSync("/proc/self/smaps", "utf8").split("\n")) {
    const mapping = /^([0-9a-f]+)-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      const name = mapping[2]!;
      current = name === "[heap]" ? "brk" : name !== "" ? null : BigInt(`0x${mapping[1]}`) >= 0x7f0000000000n ? "mmap" : "v8";
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && current) {
      const value = Number(rss[1]);
      if (current === "v8") v8Pages += value;
      else if (current === "mmap") mmapArea += value;
      else brk += value;
    }
  }
  const usage = process.memoryUsage();
  console.log(`  [${label}] anon by area: V8-like pages ${mb(v8Pages)} MB, high mmap area ${mb(mmapArea)} MB, brk heap ${mb(brk)} MB`);
  console.log(
    `  [${label}] RSS ${mb(kb(status, "VmRSS"))} MB (peak ${mb(kb(status, "VmHWM"))}; anon ${mb(kb(status, "RssAnon"))}, file ${mb(kb(status, "RssFile"))}; rollup anon ${mb(kb(rollup, "Anonymous"))}) heap ${(usage.heapUsed / 2 ** 20).toFixed(0)}/${(usage.heapTotal / 2 ** 20).toFixed(0)} ext ${(usage.external / 2 ** 20).toFixed(0)} ab ${(usage.arrayBuffers / 2 ** 20).toFixed(0)} MB; spaces ${spaces}`,
  );
}

async function until(service: FleetService, check: () => boolean): Promise<void> {
  if (check()) return;
  await new Promise<void>((done) => {
    const listener = () => {
      if (check()) {
        service.off("event", listener);
        done();
      }
    };
    service.on("event", listener);
  });
}

async function serviceBench(threads: number, measureLoad: boolean, generation: BenchGeneration = "fork") {
  const protocol = generation === "v2" ? "protocol 2" : "protocol 1";
  console.log(`--- ${protocol} (${generation} simulators)`);
  const sims = await startSims(threads, generation);
  const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-bench-"));
  const secrets = new MemorySecretStore();
  try {
    // Pair without loading anything, so the measured process starts clean.
    const { registry } = await Registry.open(dataDir);
    for (const url of sims.pairingUrls) {
      const target = parsePairingInput(url);
      if (!target.ok || !target.target.pairingToken) throw new Error(`bad pairing URL ${url}`);
      const paired = await new T3EnvironmentClient(target.target.baseUrl).pair({ pairingToken: target.target.pairingToken });
      await secrets.set(paired.environment.environmentId, paired.token.secretFor(target.target.baseUrl)!);
      await registry.upsert({
        environmentId: paired.environment.environmentId,
        serverLabel: paired.environment.label,
        customLabel: null,
        baseUrl: target.target.baseUrl,
        generation: paired.generation,
        readOnly: paired.readOnly,
        serverVersion: paired.environment.serverVersion,
        muted: false,
        pairedAt: new Date().toISOString(),
      });
    }

    globalThis.gc?.();
    memoryDetail("before start");
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    const cpuAtStart = process.cpuUsage();
    // Frames are counted (re-serialised) only under load: during the cold start that copy of every
    // snapshot would be the bench's own memory and time, not the service's.
    let receivedBytes = 0;
    let countFrames = false;
    /** When the last frame from any server arrived: the fleet's own share of the latency starts there. */
    let lastFrameAt = 0;
    const service = await FleetService.start({
      dataDir,
      secrets,
      ...(measureLoad && {
        socket: {
          onFrame: (direction, frame) => {
            if (direction !== "recv") return;
            lastFrameAt = performance.now();
            if (countFrames) receivedBytes += JSON.stringify(frame).length;
          },
        },
      }),
    });
    const total = ENVS * threads;
    await until(service, () => service.model.counts().agents >= total && service.model.environments().every((env) => env.connection.phase === "online"));
    const coldMs = performance.now() - started;
    const coldCpu = process.cpuUsage(cpuAtStart);
    memoryDetail("full load, before gc");
    globalThis.gc?.();
    memoryDetail("full load");
    const atLoad = process.memoryUsage();
    // Steady state, as a user's task manager shows it a few seconds after start: the service has
    // asked V8 to give back the pages the cold start's transient snapshots used once the fleet was
    // quiet (electron/fleet/heap-release.ts). The peak is the process's high-water mark.
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    globalThis.gc?.();
    memoryDetail("settled");
    if (process.env.BENCH_HEAP_SNAPSHOT) console.log(`  heap snapshot: ${writeHeapSnapshot(process.env.BENCH_HEAP_SNAPSHOT)}`);
    const memory = process.memoryUsage();
    const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
    console.log(
      `cold start to full fleet model, ${ENVS} × ${threads} threads: ${coldMs.toFixed(0)} ms (service CPU ${((coldCpu.user + coldCpu.system) / 1000).toFixed(0)} ms)   (target < 1000 ms at 10 × 1,000)`,
    );
    console.log(
      `service RSS with ${total.toLocaleString("en")} agents (${protocol}, fresh process): ${mb(memory.rss)} MB (growth ${mb(memory.rss - rssBefore)} MB; JS heap ${mb(memory.heapUsed)} of ${mb(memory.heapTotal)} MB, external ${mb(memory.external)} MB; ${mb(atLoad.rss)} MB right at full load, peak ${peakRssMb()} MB)   (target < 250 MB at 10 × 5,000)`,
    );

    if (measureLoad) {
      // Event to model: each turn produces ~8 events; the shell row's updatedAt is the event time.
      // Measured where the model publishes its changes (what UIs get is filtered: see bridge figures).
      const latencies: number[] = [];
      const fleetLatencies: number[] = [];
      let lastSeen = new Map<string, string>();
      service.model.subscribe((change) => {
        const now = Date.now();
        if (countFrames && change.agents.length > 0) fleetLatencies.push(performance.now() - lastFrameAt);
        for (const agent of change.agents) {
          if (lastSeen.get(agent.key) === agent.updatedAt) continue;
          lastSeen.set(agent.key, agent.updatedAt);
          const at = Date.parse(agent.updatedAt);
          if (now - at < 10_000) latencies.push(now - at);
        }
      });
      let bridgeBytes = 0;
      let bridgeFrames = 0;
      service.on("event", (event) => {
        bridgeBytes += Buffer.byteLength(JSON.stringify(event));
        bridgeFrames++;
      });
      const envs = (await (await fetch(`${sims.control}/envs`)).json()) as { label: string }[];
      const turnsPerSecond = EVENTS_PER_SECOND / 8;
      countFrames = true;
      const bytesBefore = receivedBytes;
      const bridgeBefore = { bytes: bridgeBytes, frames: bridgeFrames };
      const deadline = Date.now() + LOAD_SECONDS * 1000;
      let sent = 0;
      while (Date.now() < deadline) {
        const env = envs[sent % envs.length]!;
        const thread = `thread-${Math.floor(sent / envs.length) % threads}`;
        await fetch(`${sims.control}/envs/${env.label}/threads/${thread}/message`, { method: "POST", body: JSON.stringify({ text: "bench" }) });
        sent++;
        await new Promise((r) => setTimeout(r, 1000 / turnsPerSecond));
      }
      const streamBytesPerSecond = (receivedBytes - bytesBefore) / LOAD_SECONDS;
      lastSeen = new Map();
      console.log(
        `bridge to UIs under load (${EVENTS_PER_SECOND} events/s): ${((bridgeBytes - bridgeBefore.bytes) / LOAD_SECONDS / 1024).toFixed(0)} KiB/s in ${((bridgeFrames - bridgeBefore.frames) / LOAD_SECONDS).toFixed(0)} frames/s, from ${(streamBytesPerSecond / 1024).toFixed(0)} KiB/s received from servers`,
      );
      // A naive client polling every environment's shell snapshot each 2 s, for comparison:
      // its download is the snapshot itself, estimated from the rows the fleet holds.
      let snapshotBytes = 0;
      for (const agent of service.model.agents()) snapshotBytes += JSON.stringify(service.model.facts(agent.environmentId, agent.threadId)).length;
      const naiveBytesPerSecond = snapshotBytes / 2;
      console.log(
        `bytes/s under load: streams ${(streamBytesPerSecond / 1024).toFixed(0)} KiB/s vs naive 2 s polling ${(naiveBytesPerSecond / 1024).toFixed(0)} KiB/s (ratio ${(naiveBytesPerSecond / streamBytesPerSecond).toFixed(1)}×)`,
      );
      console.log(
        `latency: stream p50 ${percentile(latencies, 50)} ms vs naive polling ≥ 1000 ms on average (half the 2 s period, before fetching ${(snapshotBytes / ENVS / 1024).toFixed(0)} KiB per environment)`,
      );
      // T3's V2 engine sends shell rows coalesced per thread over 50 ms (sim/protocol2/server.ts), so the
      // event-to-model figure includes that wait on the server; the fleet's own share is printed apart.
      const coalesced = generation === "v2" ? "; includes T3's 50 ms shell coalescing on the server" : "";
      console.log(
        `event to fleet model at ~${EVENTS_PER_SECOND} events/s: p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms over ${latencies.length} updates${coalesced}   (target p99 < 20 ms)`,
      );
      console.log(
        `  of which in the fleet (frame received to model): p50 ${percentile(fleetLatencies, 50).toFixed(1)} ms, p99 ${percentile(fleetLatencies, 99).toFixed(1)} ms over ${fleetLatencies.length} changes`,
      );

      // Idle CPU: no polling, only pings. Measured once the load's turns have settled.
      await until(service, () => service.model.counts().byStatus.running === undefined && service.model.counts().byStatus.starting === undefined);
      await new Promise((r) => setTimeout(r, 3_000));
      globalThis.gc?.();
      const cpuBefore = process.cpuUsage();
      const idleStart = performance.now();
      await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
      const cpu = process.cpuUsage(cpuBefore);
      const share = ((cpu.user + cpu.system) / 1000 / (performance.now() - idleStart)) * 100;
      console.log(`idle CPU over ${IDLE_SECONDS} s with ${ENVS} environments: ${share.toFixed(2)} % of one core   (target < 1 %)`);

      // A host that vanishes without a FIN, with production liveness settings.
      const victim = envs[0]!.label;
      const vanished = performance.now();
      await fetch(`${sims.control}/envs/${victim}/blackhole`, { method: "POST", body: JSON.stringify({ on: true }) });
      await until(service, () => service.model.environments().some((env) => env.label === victim && env.connection.phase !== "online"));
      console.log(`offline detected after a host vanished (no FIN): ${((performance.now() - vanished) / 1000).toFixed(1)} s   (target < 10 s)`);
    }
    await service.stop();
  } finally {
    sims.child.kill("SIGTERM");
    await rm(dataDir, { recursive: true, force: true });
  }
}

function modelBench() {
  const raw = {
    id: "t",
    projectId: "p",
    title: "T",
    modelSelection: { instanceId: "codex", model: "gpt-5.4" },
    runtimeMode: "full-access",
    interactionMode: "default",
    branch: null,
    worktreePath: null,
    latestTurn: null,
    createdAt: "2026-11-29T10:00:00.000Z",
    updatedAt: "2026-11-29T10:00:00.000Z",
    archivedAt: null,
    session: null,
    hasPendingApprovals: false,
    hasPendingUserInput: false,
  };
  const row = decodeWith(ThreadShell, raw, "row");
  if (!row.ok) throw new Error(row.error.message);
  for (const size of [5_000, 50_000]) {
    const model = new FleetModel({ stalledAfterMs: 300_000, now: Date.now });
    // The protocol-1 mapping is part of what an update costs.
    const rows = new Protocol1Rows();
    model.upsertEnvironment(
      { environmentId: "e", label: "e", baseUrl: "http://e", serverVersion: null, generation: "upstream", readOnly: false, muted: false },
      { phase: "online", since: "t" },
    );
    model.applyFleetSnapshot(
      "e",
      Array.from({ length: size }, (_, i) => rows.facts({ ...row.value, id: `t-${i}` })),
    );
    const rounds = 20_000;
    const started = performance.now();
    for (let i = 0; i < rounds; i++) {
      model.upsertAgent("e", rows.facts({ ...row.value, id: `t-${i % size}`, title: `T${i}` }));
    }
    const micros = ((performance.now() - started) / rounds) * 1000;
    console.log(`one fleet-row update applied with ${size.toLocaleString("en")} threads in the fleet: ${micros.toFixed(1)} µs`);
  }
}

export { modelBench, serviceBench };
