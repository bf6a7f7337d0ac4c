// `npm run demo [-- --web]`: four simulated T3 machines, one of them on protocol 2 (T3 since
// 2026-10-03), with a fleet that does things (children that fail and block, native subagents, a
// queue and a steerable run, one machine that drops off and comes back: sim/demo-fleet.ts) and T3
// Fleet on them: in Electron when its binary is installed, otherwise (or with --web) the headless
// shell in a browser.
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
import { startDemoFleet } from "../sim/demo-fleet";

const { values } = parseArgs({ options: { web: { type: "boolean", default: false }, port: { type: "string", default: "0" } } });
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

const demo = await startDemoFleet();
const { pairingUrls } = demo;
const nightlyBox = demo.sims.v2Servers[0]!;

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
    notices: [
      `Demo fleet: four simulated machines (${nightlyBox.label} speaks T3's protocol 2); ${demo.flaky.label} drops off the network every minute. Tokens are kept in memory only for this demo.`,
    ],
  });
  for (const url of pairingUrls) await service.request("pair.confirm", { input: url });
  const shell = await startHeadlessShell({ service, rendererDir: join(repoRoot, "out/renderer"), port: Number(values.port) });
  console.log(`\nT3 Fleet demo is running. Open this link once, in one browser tab:\n${shell.url}\n`);
  // Last resort: a bug in one handler is logged (without secrets) and the demo keeps serving.
  process.on("uncaughtException", (error) => console.error(`demo: unexpected error: ${describeError(error)}`));
  process.on("unhandledRejection", (error) => console.error(`demo: unexpected error: ${describeError(error)}`));
  const stop = () => {
    void shell
      .close()
      .then(() => service.stop())
      .then(() => demo.stop())
      .then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
