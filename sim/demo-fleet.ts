// The demo fleet (`npm run demo`): four simulated machines, one on protocol 2, with agents that do
// things (children that fail and block, native subagents, a queue and a steerable run) and one
// machine that drops off the network every minute and comes back. Shared by the demo and by what
// measures it (bench/flapping.bench.ts, e2e/flapping.spec.ts), so they measure the fleet people see.
import { EventEmitter } from "node:events";
import { SimFleet } from "./fleet";
import type { SimServer } from "./protocol1/server";
import { createV2Thread, sendV2Message } from "./protocol2/fleet-hooks";

export interface DemoFleetOptions {
  /** A turn step this often (the demo: 600 ms, slow enough to watch, fast enough to see things happen). */
  tickMs?: number;
  /** The flaky machine is unreachable this long, every cycle. */
  outageMs?: number;
  /** A cycle starts (the flaky machine drops off) this often. */
  outageEveryMs?: number;
}

/** One end of an outage of the flaky machine: "down" once its port stopped answering, "up" once it listens again. */
export interface Flap {
  edge: "down" | "up";
  at: number;
}

export interface DemoFleet {
  sims: SimFleet;
  /** The machine that drops off every cycle. */
  flaky: SimServer;
  pairingUrls: string[];
  /** Emits "flap" with a `Flap` at each end of each outage. */
  flaps: EventEmitter<{ flap: [Flap] }>;
  /** Ends the outage cycle (the flaky machine listens again), then stops every machine. */
  stop(): Promise<void>;
}

/** One repository checked out on two machines: "By project" shows their agents as one project. */
const SHARED_PROJECT = { title: "t3-fleet", workspaceRoot: "/home/dev/src/t3-fleet" };

export async function startDemoFleet(options: DemoFleetOptions = {}): Promise<DemoFleet> {
  const { tickMs = 600, outageMs = 15_000, outageEveryMs = 60_000 } = options;
  const sims = await SimFleet.start({ envs: 4, generations: ["upstream", "fork", "upstream", "v2"], tickMs, seedThreads: 6 });
  const [studio, workstation, buildBox] = sims.servers as [SimServer, SimServer, SimServer];
  const nightlyBox = sims.v2Servers[0]!;

  const planner = sims.createThread(studio, { title: "Plan the auth refactor", provider: "claudeAgent", text: "Plan it #subagents", project: SHARED_PROJECT });
  sims.spawnChild(studio, planner, "tests", "Write the missing tests #slow");
  sims.spawnChild(studio, planner, "migration", "Run the migration #approval");
  sims.spawnChild(studio, planner, "docs", "Update the docs #fail");
  const dispatcher = sims.createThread(workstation, { title: "Dispatch release chores", provider: "codex", text: "Split the work", project: SHARED_PROJECT });
  sims.spawnChild(workstation, dispatcher, "changelog", "Draft the changelog #input");
  sims.spawnChild(workstation, dispatcher, "bump", "Bump versions #hang");
  sims.createThread(buildBox, { title: "Nightly build watcher", provider: "grok", text: "Watch the build #hang" });
  sims.createThread(buildBox, { title: "Flaky test hunt", provider: "opencode", text: "Find the flaky test #capacity" });
  // Changes and usage (issue 24): finished turns with files and a diff on both protocols, a diff of
  // 10,000 lines, and a context nearly full that will not compact.
  sims.createThread(studio, { title: "Refactor the session store", provider: "codex", text: "Refactor the session store #edit:4", project: SHARED_PROJECT });
  sims.createThread(workstation, { title: "Generate the lookup table", provider: "codex", text: "Generate the table #bigdiff" });
  sims.createThread(buildBox, { title: "Summarise the build logs", provider: "claudeAgent", text: "Summarise the logs #edit:1 #nearfull" });
  // Protocol 2: a run to steer or queue behind (one message already waits), an approval that can be
  // accepted for the session, several questions, background work after a final answer, a failure
  // with its class, and app-owned and provider-native subagents.
  const porting = createV2Thread(nightlyBox, { title: "Port the parser", provider: "claudeAgent", text: "Port the parser #hold" });
  sendV2Message(nightlyBox, porting, "Then update the docs");
  createV2Thread(nightlyBox, { title: "Run the integration suite", provider: "claudeAgent", text: "Run the suite #approval" });
  createV2Thread(nightlyBox, { title: "Plan the release", provider: "claudeAgent", text: "Plan the release #question" });
  createV2Thread(nightlyBox, { title: "Watch the test suite", provider: "codex", text: "Watch the tests #background" });
  createV2Thread(nightlyBox, { title: "Fetch the vendored crates", provider: "codex", text: "Fetch them #fail:transport_error" });
  createV2Thread(nightlyBox, { title: "Coordinate the sweep", provider: "claudeAgent", text: "Sweep the repo #subagent #delegate" });
  createV2Thread(nightlyBox, { title: "Tidy the config loader", provider: "codex", text: "Tidy the config loader #edit:3" });
  createV2Thread(nightlyBox, { title: "Condense the design notes", provider: "claudeAgent", text: "Condense the notes #edit:2 #nearfull" });

  const flaps = new EventEmitter<{ flap: [Flap] }>();
  let stopped = false;
  let outage: NodeJS.Timeout | undefined;
  /** The kill or restart under way, so stopping waits for it and never races it. */
  let pending: Promise<void> = Promise.resolve();
  const cycle = setInterval(() => {
    pending = pending.then(async () => {
      if (stopped) return;
      await buildBox.kill();
      flaps.emit("flap", { edge: "down", at: Date.now() });
      outage = setTimeout(() => {
        pending = pending.then(async () => {
          if (stopped) return;
          await buildBox.start();
          flaps.emit("flap", { edge: "up", at: Date.now() });
        });
      }, outageMs);
    });
  }, outageEveryMs);

  return {
    sims,
    flaky: buildBox,
    pairingUrls: [...sims.servers, ...sims.v2Servers].map((server) => server.pairingUrl()),
    flaps,
    async stop() {
      stopped = true;
      clearInterval(cycle);
      clearTimeout(outage);
      await pending;
      await sims.stop();
    },
  };
}
