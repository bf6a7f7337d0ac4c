// `npm run soak -- [--minutes N] [--seed S] [--short] [--snapshots DIR] [--heap-types FILE]`: a day at the desk, compressed (issue 23).
// The fleet service (as `./fleet serve` runs it) and the page in Debian's Chromium against simulated machines of both
// protocols, each in its own process, and with `--real` (which `npm run soak` passes, inside scripts/realt3.sh's
// namespace; `npm run soak:simulated` does not) also the real T3 0.0.42 running the real Codex
// (bench/soak/real-machines.ts), under a seeded schedule of faults it prints first. It counts at the servers (every
// message delivered once, or shown refused or uncertain; none duplicated, none lost), notifications beyond one per
// condition, agents lost or invented, and samples the service's memory, descriptors, sockets, handles and
// event-to-pixel p99. Prints its figures and exits non-zero when a bound fails. `--short` (the 3-minute run of
// `npm run test:soak`) keeps the count bounds and loosens the growth bounds: see bench/soak/bounds.ts.
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pLimit from "p-limit";
import { type Delivery, messageIntent } from "../shared/fleet/delivery";
import type { AgentView } from "../shared/fleet/types";
import { ensureRendererBuilt } from "./renderer-build";
import { BridgeRequestError } from "./soak/bridge-client";
import { boundsFor, checkBounds } from "./soak/bounds";
import { countAgents, countMessages } from "./soak/at-the-servers";
import { SimulatedMachine, type SoakMachine } from "./soak/machines";
import { type SendMode, type SentMessage, tally } from "./soak/messages";
import { SoakClock } from "./soak/clock";
import { askHeapSnapshot, childEnvironment, childrenOf, openConnections, procSample, rssOf, snapshotsInto, unexpectedExits } from "./soak/processes";
import { type RealFleet, refuseOutsideNamespace, startRealMachines } from "./soak/real-machines";
import { fitPlan } from "./soak/real-schedule";
import { between, describeAction, pick, planSoak, type Rng, type SoakAction, seededRng } from "./soak/schedule";
import { SoakService } from "./soak/service";
import { soakTruth, truthLines } from "./soak/truth";
import { liveAgentCount, measureEventToPixel, percentile, reportFigures, type ResourceSample, sampleLines } from "./soak/samples";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "30" },
    seed: { type: "string" },
    short: { type: "boolean", default: false },
    real: { type: "boolean", default: false },
    snapshots: { type: "string" },
    "heap-types": { type: "string" },
  },
});
const minutes = Number(values.minutes);
if (!(minutes >= 1)) throw new Error(`--minutes must be 1 or more, not ${values.minutes}`);
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
const durationMs = Math.round(minutes * 60_000);
const bounds = boundsFor(values.short);
const rng: Rng = seededRng(seed ^ 0x5eed);
const log = (line: string) => console.log(`[${((Date.now() - (startedAt || Date.now())) / 1000).toFixed(1).padStart(6)} s] ${line}`);
let startedAt = 0;

console.log(`soak: ${minutes} min, seed ${seed} (replay with --seed ${seed}), ${values.short ? "short-run bounds" : "full bounds"}`);
if (values.real) {
  await refuseOutsideNamespace();
  console.log("soak: simulated machines of both protocols, and the real T3 0.0.42 running the real Codex (--real).");
} else console.log("soak: simulated machines of both protocols only (the real T3 servers need `--real` inside scripts/realt3.sh's namespace).");
/** The share of messages that go to a real machine's agents when there are any (each is a real Codex turn). */
const REAL_SHARE = 0.2;

ensureRendererBuilt();
const work = await mkdtemp(join(tmpdir(), "t3-fleet-soak-"));
// Also when the soak is interrupted or fails (its children are killed then too: bench/soak/processes.ts).
process.on("exit", () => rmSync(work, { recursive: true, force: true }));
const dataDir = join(work, "data");
const clock = new SoakClock(join(work, "clock-offset"));
Object.assign(childEnvironment, clock.env());
// --snapshots DIR: V8 heap snapshots of the service at the first steady sample, halfway and the last, without an
// inspector (one attached stays in the heap: stop 39), for bench/soak/heap-compare.ts. Each spoils the RSS and moves
// the heap (25.3 → 27.1 MB at once in stop 41's two-hour run; later ones hold Node's module lists): figures come from an untouched run.
const snapshotDir = values.snapshots ? snapshotsInto(values.snapshots) : undefined;
if (!clock.available)
  console.log("soak: libfaketime is missing (Debian package libfaketime): the laptop's sleep will be a stall without the clock jumping an hour");
// --heap-types FILE: keeps the service's output, with V8's live bytes by instance type at each sample, for bench/soak/heap-types.ts.
const service = new SoakService({ dataDir, reportPath: join(work, "resource-report.json"), stdoutPath: values["heap-types"] ?? join(work, "service-stdout") });

// The probe machine sorts first and takes no faults or messages: the page's event-to-pixel figure is read on it.
const machineSpecs: { label: string; generation: "fork" | "upstream" | "v2"; threads: number }[] = [
  { label: "a-probe", generation: "fork", threads: 3 },
  { label: "soak-fork", generation: "fork", threads: 40 },
  { label: "soak-upstream", generation: "upstream", threads: 40 },
  { label: "soak-v2", generation: "v2", threads: 40 },
  { label: "soak-upstream-2", generation: "upstream", threads: 40 },
];
// The real server starts beside the simulated ones and the service.
let real: RealFleet | undefined;
const [simulated] = await Promise.all([
  Promise.all(machineSpecs.map((spec) => SimulatedMachine.start(spec.label, spec.generation, spec.threads, 150))),
  values.real ? startRealMachines().then((started) => (real = started)) : undefined,
  service.start().then(() => service.openPage()),
]);
const [probe, ...simulatedTargets] = simulated as [SimulatedMachine, ...SimulatedMachine[]];
// Real machines last: the short run's one in-place upgrade goes to the first protocol-1 machine, a simulated one.
const targets: SoakMachine[] = [...simulatedTargets, ...(real?.machines ?? [])];
const machines: SoakMachine[] = [probe, ...targets];
const byLabel = new Map(machines.map((machine) => [machine.label, machine]));

const plan = fitPlan(planSoak({ seed, durationMs, machines: targets.map((machine) => ({ label: machine.label, protocol: machine.protocol })) }), targets, seed);
console.log(`soak: machines ${machines.map((machine) => `${machine.label} (${machine.generation})`).join(", ")}`);
console.log(`soak: schedule (${plan.actions.length} actions; growth measured from ${plan.steadyFromMs / 1000} s; quiet from ${plan.quietFromMs / 1000} s):`);
for (const { atMs, action } of plan.actions) console.log(`  ${(atMs / 1000).toFixed(1).padStart(7)} s  ${describeAction(action)}`);

for (const machine of machines) {
  await service.bridge.request("pair.confirm", { input: await machine.pairingUrl() });
  // A real server names itself after its host; the soak's own name reads better in its figures.
  if (machine.real) await service.bridge.request("environment.rename", { environmentId: machine.environmentId, label: machine.label });
}
await waitFor(
  () => [...service.bridge.state.environments.values()].filter((environment) => environment.connection.phase === "online").length === machines.length,
  60_000,
);
startedAt = Date.now();
log(`paired ${machines.length} machines; ${service.bridge.state.agents.size} agents in the fleet`);

const messages: SentMessage[] = [];
/** When churn created each thread (ms into the run), to tell when a lost agent was born. */
const createdAt = new Map<string, number>();
const deletedAt = new Map<string, number>();
const samples: ResourceSample[] = [];
const counters = {
  approvals: 0,
  answers: 0,
  snoozes: 0,
  acknowledgements: 0,
  created: 0,
  archived: 0,
  deleted: 0,
  faults: 0,
  serviceKills: 0,
  reloads: 0,
  stalls: 0,
};
/** Per machine: the faults it took and its churn, for the real machines' own lines in the figures. */
const perMachine = new Map(targets.map((machine) => [machine.label, { faults: [] as string[], created: 0, archived: 0, deleted: 0 }]));
let serviceDown = false;
/** How long each reload took until the page's tree was painted, ms, and when it began (ms into the run). */
const reloadPaints: { atMs: number; ms: number }[] = [];
/**
 * One thing happens to the page at a time: a sample, a reload, or the service killed or stalled under it.
 * A sample that overlapped a reload counted the probe's page context, destroyed mid-rename, as a rename
 * not painted (the hour's run with seed 1844689845, 3422 s): that measured the reload, not the event to
 * pixel; a reload's own first paint is timed by itself.
 */
const pageTurnFor = pLimit(1);
/**
 * Per machine, churn and its faults take turns: churn checks that its machine is up only when it
 * starts, and a restart that began during a real server's churn failed the soak's own requests to it
 * (seed 547680406, 2569.9 s), which measured the soak, not the fleet.
 */
const machineTurns = new Map(targets.map((machine) => [machine.label, pLimit(1)]));
let stopping = false;
let messageNumber = 0;
const failures: string[] = [];
/** A problem during the run: logged when it happens, and listed again with the figures. */
function problem(text: string): void {
  failures.push(text);
  log(`problem: ${text}`);
}

function machineOf(key: string): SoakMachine | undefined {
  const environmentId = key.slice(0, key.indexOf("/"));
  return targets.find((machine) => machine.environmentId === environmentId);
}

/**
 * Sends one message to a random live agent, in the mode its status suggests (and sometimes another);
 * REAL_SHARE of them to a real machine's agents, in the mode the fleet's composer offers there.
 */
function sendOne(inFlightAtKill = false): void {
  const agents = [...service.bridge.state.agents.values()].filter(
    (agent) => agent.lifecycle === "active" && machineOf(agent.key)?.takesMessages(agent.threadId) === true,
  );
  if (!agents.length || !service.bridge.open) return;
  const realAgents = agents.filter((agent) => machineOf(agent.key)!.real);
  const toReal = realAgents.length > 0 && rng() < REAL_SHARE;
  const agent = pick(rng, realAgents.length ? agents.filter((candidate) => machineOf(candidate.key)!.real === toReal) : agents);
  const machine = machineOf(agent.key)!;
  const busy = agent.status === "running" || agent.status === "queued" || agent.status === "starting";
  const mode: SendMode = machine.real
    ? composerMode(agent)
    : rng() < 0.1
      ? pick(rng, ["new-turn", "steer", "queue"] as const)
      : busy
        ? pick(rng, ["steer", "queue"] as const)
        : "new-turn";
  const n = ++messageNumber;
  const tag = `[soak-${seed}-${n}]`;
  const message: SentMessage = {
    n,
    tag,
    text: machine.messageText(tag, rng),
    key: agent.key,
    machine: machine.label,
    threadId: agent.threadId,
    mode,
    sentAt: Date.now() - startedAt,
    answer: { kind: "pending" },
    inFlightAtKill,
  };
  messages.push(message);
  service.bridge.request("agent.send", { key: agent.key, text: message.text, expectedIntent: mode }).then(
    (answer) => {
      const delivery = answer as Delivery;
      message.answer = { kind: "delivery", commandId: delivery.commandId, state: delivery.state, reason: delivery.reason };
    },
    (error: unknown) =>
      (message.answer =
        error instanceof BridgeRequestError && error.kind === "disconnected"
          ? { kind: "unanswered" }
          : { kind: "refused", message: String((error as Error).message) }),
  );
}

/** What the fleet's composer offers for this agent now (shared/fleet/delivery.ts); steer or queue where it offers both. */
function composerMode(agent: AgentView): SendMode {
  const intent = messageIntent(agent, service.bridge.state.environments.get(agent.environmentId));
  return intent.kind === "steer" || intent.kind === "queue" ? pick(rng, intent.choices) : "new-turn";
}

/** Answers what waits for the user, snoozes some and acknowledges failures, as a user at the desk would. */
async function attend(): Promise<void> {
  const agents = [...service.bridge.state.agents.values()].filter((agent) => agent.lifecycle === "active");
  for (const agent of agents) {
    for (const request of agent.pending) {
      if (rng() > 0.5) continue;
      if (request.kind === "approval") {
        counters.approvals++;
        await ignoreRefusal(service.bridge.request("agent.respondApproval", { key: agent.key, requestId: request.requestId, decision: "accept" }));
      } else if (request.kind === "input") {
        counters.answers++;
        const answers = Object.fromEntries(request.questions.map((question) => [question.id, question.options[0]?.value ?? "the first one"]));
        await ignoreRefusal(service.bridge.request("agent.respondInput", { key: agent.key, requestId: request.requestId, answers }));
      }
    }
    if (agent.status === "failed" && !agent.acknowledged && rng() < 0.3) {
      counters.acknowledgements++;
      await ignoreRefusal(service.bridge.request("agent.acknowledge", { key: agent.key }));
    }
  }
  const snoozable = agents.filter((agent) => agent.status === "failed" || agent.status === "needs-approval");
  if (snoozable.length && rng() < 0.3) {
    counters.snoozes++;
    const until = rng() < 0.5 ? new Date(Date.now() + between(rng, 5_000, 60_000)).toISOString() : null;
    await ignoreRefusal(service.bridge.request("agent.snooze", { key: pick(rng, snoozable).key, until }));
  }
}

async function ignoreRefusal(request: Promise<unknown>): Promise<void> {
  await request.catch(() => undefined);
}

async function churn(machine: SoakMachine, create: number, archive: number, remove: number): Promise<void> {
  for (let i = 0; i < create; i++) {
    const threadId = await machine.createThread(`Churn ${counters.created + 1}`);
    machine.created.push(threadId);
    createdAt.set(`${machine.label}/${threadId}`, Date.now() - startedAt);
    counters.created++;
    perMachine.get(machine.label)!.created++;
  }
  for (let i = 0; i < archive && machine.created.length; i++) {
    const threadId = machine.created[Math.floor(rng() * machine.created.length)]!;
    // A refused archive (the simulated protocol-2 machine refuses one with a run going, where T3's V2
    // engine archives it and cancels its queued runs) leaves the thread to the deletes: churn goes on.
    if (await changed(machine, threadId, "archive")) {
      counters.archived++;
      perMachine.get(machine.label)!.archived++;
    }
  }
  for (let i = 0; i < remove && machine.created.length; i++) {
    const threadId = machine.created.splice(Math.floor(rng() * machine.created.length), 1)[0]!;
    if (await changed(machine, threadId, "delete")) {
      counters.deleted++;
      perMachine.get(machine.label)!.deleted++;
      deletedAt.set(`${machine.label}/${threadId}`, Date.now() - startedAt);
    } else {
      // Refused (a run going, the machine away): a later churn deletes it, so the fleet keeps its size.
      machine.created.push(threadId);
    }
  }
}

async function changed(machine: SoakMachine, threadId: string, action: "archive" | "delete"): Promise<boolean> {
  return machine.changeThread(threadId, action).then(
    () => true,
    () => false,
  );
}

async function restartService(): Promise<void> {
  const began = Date.now();
  try {
    await service.restart();
    log(`service back in ${((Date.now() - began) / 1000).toFixed(1)} s, page and bridge reconnected`);
  } finally {
    serviceDown = false;
  }
}

async function run(action: SoakAction): Promise<void> {
  switch (action.kind) {
    case "churn": {
      const machine = byLabel.get(action.machine)!;
      // A machine that is away takes no churn (it would fail at its server, not in the fleet).
      if (machine.fault) return;
      return machineTurns.get(machine.label)!(async () => {
        const began = Date.now();
        await churn(machine, action.create, action.archive, action.remove);
        if (machine.real) log(`churn on ${machine.label} took ${((Date.now() - began) / 1000).toFixed(1)} s`);
      });
    }
    case "reload":
      return pageTurnFor(async () => {
        // A page is reloaded by a user who sees it; never while the service is stopped (that holds the page's turn).
        counters.reloads++;
        const atMs = Date.now() - startedAt;
        const ms = await service.reloadPage(probeTitle());
        reloadPaints.push({ atMs, ms });
        log(`page reloaded; its tree painted in ${ms} ms`);
      });
    case "service-kill":
      return pageTurnFor(() => killService());
    case "service-stall":
      return pageTurnFor(() => stallService(action.forMs, action.clockJumpS));
    default:
      return machineTurns.get(action.machine)!(() => machineFault(byLabel.get(action.machine)!, action.kind, action.forMs));
  }
}

/** The probe's row as the service holds it: the text a reloaded page shows first. */
function probeTitle(): string {
  const title = service.bridge.state.agents.get(`${probe.environmentId}/thread-0`)?.title;
  if (!title) throw new Error("the probe's thread is not in the fleet: a reload's paint cannot be timed");
  return title;
}

async function killService(): Promise<void> {
  counters.serviceKills++;
  // Messages in flight: a burst sent, and the service killed within milliseconds of it.
  for (let i = 0; i < 4; i++) sendOne(true);
  serviceDown = true;
  await sleep(between(rng, 0, 12));
  await service.kill();
  log(`service killed with ${messages.filter((message) => message.inFlightAtKill && message.answer.kind === "unanswered").length} messages unanswered so far`);
  return restartService();
}

async function stallService(forMs: number, clockJumpS: number): Promise<void> {
  counters.stalls++;
  serviceDown = true;
  process.kill(service.pid, "SIGSTOP");
  await sleep(forMs);
  // The laptop slept an hour: it wakes to every wall clock an hour on (the machines ran on meanwhile).
  const offsetS = clock.jump(clockJumpS);
  if (offsetS !== null) log(`wall clocks of the service and the machines jumped ${clockJumpS / 60} min forward (now +${offsetS} s)`);
  process.kill(service.pid, "SIGCONT");
  serviceDown = false;
  // The page's bridge may have given up meanwhile; so may the soak's.
  if (!service.bridge.open) await service.openPage();
}

async function machineFault(machine: SoakMachine, kind: "kill" | "freeze" | "blackhole" | "restart" | "upgrade", forMs: number): Promise<void> {
  counters.faults++;
  perMachine.get(machine.label)!.faults.push(kind);
  try {
    switch (kind) {
      case "restart":
        machine.fault = "restarting";
        await timedStart(machine, () => machine.restart());
        break;
      case "upgrade":
        await machine.upgrade();
        break;
      case "kill":
        machine.fault = "killed";
        await machine.kill();
        await sleep(forMs);
        await timedStart(machine, () => machine.start());
        break;
      case "freeze":
        machine.fault = "frozen";
        machine.freeze();
        await sleep(forMs);
        machine.thaw();
        break;
      case "blackhole":
        machine.fault = "blackholed";
        await machine.blackhole(true);
        await sleep(forMs);
        await machine.blackhole(false);
        break;
    }
  } finally {
    machine.fault = null;
  }
}

/** A real server's start takes seconds (T3 0.0.42 ~5 s): the log says how long, to read the faults that follow it. */
async function timedStart(machine: SoakMachine, start: () => Promise<void>): Promise<void> {
  const began = Date.now();
  await start();
  if (machine.real) log(`${machine.label} listening again after ${((Date.now() - began) / 1000).toFixed(1)} s`);
}

async function sample(): Promise<void> {
  const proc = procSample(service.pid);
  const { report, objects } = await service.report();
  const collected = rssOf(service.pid);
  // The p99 of the growth bound is read over the last three samples: 40 renames each make it the
  // second-slowest of 120, not the one slowest frame of 45 on a busy machine.
  const latency = await measureEventToPixel(service.page!, (title) => probe.control("POST", "threads/thread-0/rename", { title }), values.short ? 15 : 40);
  const entry: ResourceSample = {
    atMs: Date.now() - startedAt,
    servicePid: service.pid,
    agents: service.bridge.state.agents.size,
    liveAgents: liveAgentCount(service.bridge.state.agents.values()),
    ...proc,
    collected,
    ...reportFigures(report),
    objects,
    latenciesMs: latency.latencies,
    p50Ms: latency.p50,
    p99Ms: latency.p99,
    timeouts: latency.timeouts,
  };
  samples.push(entry);
  for (const line of sampleLines(entry)) log(line);
}

// The schedule, the user's sends and attention, and the minute samples run side by side.
const scheduled = plan.actions.map(({ atMs, action }) =>
  sleep(atMs).then(async () => {
    log(describeAction(action));
    await run(action).catch((error: unknown) => problem(`${describeAction(action)}: ${(error as Error).message}`));
  }),
);
const sampleEveryMs = Math.min(60_000, Math.max(15_000, Math.round(durationMs / 10)));
const lastSampleAt = Math.floor(durationMs / sampleEveryMs) * sampleEveryMs;
const snapshotsAt = [plan.steadyFromMs, Math.round((plan.steadyFromMs + lastSampleAt) / 2), lastSampleAt];
const sender = (async () => {
  while (!stopping && Date.now() - startedAt < durationMs - 25_000) {
    if (!serviceDown) sendOne();
    await sleep(between(rng, 300, 1_200));
  }
})();
const attention = (async () => {
  while (!stopping && Date.now() - startedAt < durationMs - 20_000) {
    if (!serviceDown && service.bridge.open) await attend().catch(() => undefined);
    await sleep(2_000);
  }
})();
const sampler = (async () => {
  for (let at = 0; at <= durationMs; at += sampleEveryMs) {
    await sleep(Math.max(0, startedAt + at - Date.now()));
    // A sample waits out a service restart or stall rather than measuring it; slots missed meanwhile are skipped.
    while (serviceDown) await sleep(250);
    if (Date.now() - startedAt > at + sampleEveryMs && at + sampleEveryMs <= durationMs) continue;
    await pageTurnFor(sample).catch((error: unknown) => problem(`sample: ${(error as Error).message}`));
    while (snapshotDir && snapshotsAt.length > 0 && at >= snapshotsAt[0]!) {
      snapshotsAt.shift();
      askHeapSnapshot(service.pid);
      log(`heap snapshot of the service asked for (in ${snapshotDir})`);
    }
  }
})();
await Promise.all([...scheduled, sender, attention]);
await sampler;
stopping = true;

// Settle: every machine answers again and no delivery is still on its way.
await waitFor(() => [...service.bridge.state.environments.values()].every((environment) => environment.connection.phase === "online"), 60_000).catch(() => {
  const away = [...service.bridge.state.environments.values()].filter((environment) => environment.connection.phase !== "online");
  const faults = (label: string) =>
    plan.actions
      .filter(({ action }) => "machine" in action && action.machine === label)
      .map(({ atMs, action }) => `${(atMs / 1000).toFixed(0)} s ${action.kind}`);
  for (const environment of away) {
    const machine = machines.find((candidate) => candidate.environmentId === environment.environmentId);
    failures.push(
      `${machine?.label ?? environment.environmentId} not back online at the end: ${JSON.stringify(environment.connection)}; its faults: ${faults(machine?.label ?? "").join(", ")}`,
    );
  }
});
await waitFor(
  () =>
    messages.every((message) => message.answer.kind !== "pending") &&
    [...service.bridge.state.deliveries.values()].every((delivery) => delivery.state !== "sending"),
  30_000,
).catch(() => undefined);

// The truth oracle (issue 39): what each machine it can read stored against what the fleet says, once both have settled.
const truth = await soakTruth(service.bridge.state, machines);

// Counted at the servers.
const { counts, atServer, misdirected, duplicateStories } = await countMessages(targets, messages, service.bridge.state);
const agentsAtServers = await countAgents(machines, service.bridge.state, createdAt, deletedAt);

const serviceSockets = procSample(service.pid).sockets;
const notifications = service.bridge.state.notifications;
const pageErrors = service.pageErrors;
const exitCode = await service.stop();
await Promise.all(simulated.map((machine) => machine.stop()));
await real?.stop();
// tsx's own esbuild service is the soak's, not something the fleet left behind; nor may anything a real server started outlive it.
const orphanChildren = [
  ...childrenOf(process.pid)
    .filter((child) => !/esbuild --service/.test(child.command))
    .map((child) => child.command),
  ...(real?.leftBehind() ?? []).map((pid) => `a real server's process ${pid}`),
];
const orphanSockets = openConnections([service.port, ...machines.flatMap((machine) => machine.ports)]);
await rm(work, { recursive: true, force: true });

console.log("");
console.log(`soak figures (seed ${seed}, ${minutes} min):`);
console.log(
  `  messages: sent ${counts.sent}, delivered ${counts.delivered}, refused ${counts.refused}, uncertain ${counts.uncertain}, not sent (the service died before answering; the page showed the failure) ${counts.notSent}, duplicated ${counts.duplicated}, lost ${counts.lost}, delivered but shown refused ${counts.deliveredButShownRefused}, misdirected ${misdirected}`,
);
console.log(`  in flight when the service was killed: ${counts.inFlightAtKill} → ${JSON.stringify(counts.inFlightAtKillTruth)}`);
for (const [reason, count] of [...counts.refusalReasons].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`    refused ×${count}: ${reason}`);
for (const example of counts.examples) console.log(`    ${example}`);
for (const story of duplicateStories) console.log(`    ${story}`);
console.log(
  `  user actions: approvals ${counters.approvals}, answers ${counters.answers}, snoozes ${counters.snoozes}, acknowledgements ${counters.acknowledgements}; churn: created ${counters.created}, archived ${counters.archived}, deleted ${counters.deleted}`,
);
console.log(
  `  agents in the fleet at the end: ${service.bridge.state.agents.size}; user-visible rows by machine: ${machines.map((machine) => `${machine.label} ${[...service.bridge.state.agents.values()].filter((agent) => agent.environmentId === machine.environmentId && agent.lifecycle !== "deleted").length}`).join(", ")}`,
);
for (const machine of real?.machines ?? []) {
  const sent = messages.filter((message) => message.machine === machine.label);
  const own = tally(sent, atServer, service.bridge.state.deliveries);
  const modes = (["new-turn", "steer", "queue"] as const).map((mode) => `${mode} ${sent.filter((message) => message.mode === mode).length}`).join(", ");
  const done = perMachine.get(machine.label)!;
  console.log(
    `  real machine ${machine.label} (${machine.generation}, protocol ${machine.protocol}, the real Codex): messages sent ${own.sent} (${modes}), delivered ${own.delivered}, refused ${own.refused}, uncertain ${own.uncertain}, not sent ${own.notSent}, duplicated ${own.duplicated}, lost ${own.lost}; faults ${done.faults.join(", ") || "none"}; churn: created ${done.created}, archived ${done.archived}, deleted ${done.deleted}`,
  );
}
if (real) console.log(`  the scripted model answered the real Codex: ${JSON.stringify(real.modelAnswers())}`);
console.log(
  `  faults: machines ${counters.faults}, service SIGKILLs ${counters.serviceKills}, service stalls ${counters.stalls}, page reloads ${counters.reloads}`,
);
if (reloadPaints.length) {
  const slowest = reloadPaints.reduce((worst, paint) => (paint.ms > worst.ms ? paint : worst));
  console.log(
    `  a reloaded page's tree painted in: p50 ${percentile(
      reloadPaints.map((paint) => paint.ms),
      50,
    )} ms, slowest ${slowest.ms} ms (the reload at ${(slowest.atMs / 1000).toFixed(1)} s)`,
  );
}
console.log(
  `  notifications: ${notifications.total}, beyond one per condition ${notifications.beyondOne}${notifications.repeats.length ? ` (${notifications.repeats.join("; ")})` : ""}`,
);
console.log(
  `  agents lost ${agentsAtServers.lost}, invented ${agentsAtServers.invented}; deleted on the server and still shown as ended (rows stay 5 minutes) ${agentsAtServers.shownEnded}; in T3's archive and not shown (archived before the fleet saw them, or over five minutes ago) ${agentsAtServers.archivedUnseen}${agentsAtServers.examples.length ? `; ${agentsAtServers.examples.join(", ")}` : ""}`,
);
console.log(
  `  service sockets at the end ${serviceSockets}; after stop (exit ${exitCode}): child processes left ${orphanChildren.length}${orphanChildren.length ? ` (${orphanChildren.join("; ")})` : ""}, open connections left ${orphanSockets}`,
);
for (const line of truthLines(truth)) console.log(line);
for (const notice of service.bridge.state.notices) console.log(`  the service's notice: ${notice}`);
console.log(`  page errors: ${pageErrors.length}${pageErrors.length ? ` (${pageErrors.slice(0, 3).join("; ")})` : ""}`);
for (const failure of failures) console.log(`  problem during the run: ${failure}`);

const verdicts = checkBounds(bounds, {
  counts,
  misdirected,
  notificationsBeyondOne: notifications.beyondOne,
  agentsLost: agentsAtServers.lost,
  agentsInvented: agentsAtServers.invented,
  contradictions: truth.found.length,
  orphanChildren: orphanChildren.length,
  orphanSockets,
  samples,
  steadyFromMs: plan.steadyFromMs,
  pageErrors: pageErrors.length,
  reloadPaintsMs: reloadPaints.map((paint) => paint.ms),
});
verdicts.push({ ok: unexpectedExits.length === 0, text: `machines and services that exited by themselves: ${unexpectedExits.length} (must be 0)` });
for (const verdict of verdicts) console.log(`  ${verdict.info ? "info" : verdict.ok ? "ok  " : "FAIL"} ${verdict.text}`);
// The line each suite prints for .ci/run's total: the bounds as checks.
console.log(
  `soak: ${verdicts.filter((verdict) => verdict.ok && !verdict.info).length} passed, ${verdicts.filter((verdict) => !verdict.ok).length} failed, 0 skipped`,
);
process.exit(verdicts.every((verdict) => verdict.ok) ? 0 : 1);

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error("timed out");
    await sleep(200);
  }
}
