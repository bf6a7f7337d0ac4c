// `npm run demo [-- --web]`: four simulated T3 machines, one of them on protocol 2 (T3 since
// 2026-10-03), with a fleet that does things (children that fail and block, native subagents, a
// queue and a steerable run, one machine that drops off and comes back) and T3 Fleet on them:
// in Electron when its binary is installed, otherwise (or with --web) the headless shell in a browser.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { describeError } from "../shared/bridge/redact";
import { MemorySecretStore } from "../electron/fleet/secrets";
import { FleetService } from "../electron/fleet/service";
import { startHeadlessShell } from "../electron/serve/server";
import { SimFleet } from "../sim/fleet";
import { createV2Thread, sendV2Message } from "../sim/protocol2/fleet-hooks";

const { values } = parseArgs({ options: { web: { type: "boolean", default: false }, port: { type: "string", default: "0" } } });
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** A turn step every 600 ms: slow enough to watch, fast enough to see things happen. */
const DEMO_TICK_MS = 600;
/** The flaky machine is unreachable this long, every cycle. */
const OUTAGE_MS = 15_000;
const OUTAGE_EVERY_MS = 60_000;

const sims = await SimFleet.start({ envs: 4, generations: ["upstream", "fork", "upstream", "v2"], tickMs: DEMO_TICK_MS, seedThreads: 6 });
const [studio, workstation, buildBox] = sims.servers as [(typeof sims.servers)[number], (typeof sims.servers)[number], (typeof sims.servers)[number]];
const nightlyBox = sims.v2Servers[0]!;

/** One repository checked out on two machines: "By project" shows their agents as one project. */
const SHARED_PROJECT = { title: "t3-fleet", workspaceRoot: "/home/dev/src/t3-fleet" };

function scenario() {
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
}
scenario();

let outage: NodeJS.Timeout | undefined;
const cycle = setInterval(() => {
  void buildBox.kill().then(() => {
    outage = setTimeout(() => void buildBox.start(), OUTAGE_MS);
  });
}, OUTAGE_EVERY_MS);

const pairingUrls = [...sims.servers, ...sims.v2Servers].map((server) => server.pairingUrl());

function electronBinary(): string | undefined {
  try {
    const path = createRequire(import.meta.url)("electron") as unknown as string;
    if (existsSync(path)) return path;
    // Installs skip Electron's download; fetch it now (fails quietly where there is no internet).
    spawnSync(process.execPath, [join(repoRoot, "node_modules/electron/install.js")], { stdio: "ignore", timeout: 120_000 });
    return existsSync(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

const electron = values.web ? undefined : electronBinary();
if (electron) {
  const child = spawn(electron, [repoRoot], { stdio: "inherit", env: { ...process.env, T3_FLEET_DEMO_PAIRING: JSON.stringify(pairingUrls) } });
  child.on("exit", () => process.exit(0));
} else {
  if (!values.web) console.log("Electron's binary is not installed here: showing T3 Fleet in a browser instead.");
  const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-demo-"));
  const service = await FleetService.start({
    dataDir,
    secrets: new MemorySecretStore(),
    notices: [`Demo fleet: four simulated machines (${nightlyBox.label} speaks T3's protocol 2); ${buildBox.label} drops off the network every minute.`],
  });
  for (const url of pairingUrls) await service.request("pair.confirm", { input: url });
  const shell = await startHeadlessShell({ service, rendererDir: join(repoRoot, "out/renderer"), port: Number(values.port) });
  console.log(`\nT3 Fleet demo is running. Open this link once, in one browser tab:\n${shell.url}\n`);
  // Last resort: a bug in one handler is logged (without secrets) and the demo keeps serving.
  process.on("uncaughtException", (error) => console.error(`demo: unexpected error: ${describeError(error)}`));
  process.on("unhandledRejection", (error) => console.error(`demo: unexpected error: ${describeError(error)}`));
  const stop = () => {
    clearInterval(cycle);
    clearTimeout(outage);
    void shell
      .close()
      .then(() => service.stop())
      .then(() => sims.stop())
      .then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
