// The rig of the page benchmarks (ui.bench.ts, transcript.bench.ts): a fleet service with its own
// data folder, the headless shell serving the built renderer, and Debian's Chromium to open it.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium } from "playwright-core";
import { MemorySecretStore } from "../electron/fleet/secrets";
import { FleetService, type FleetServiceOptions } from "../electron/fleet/service";
import { type HeadlessShell, startHeadlessShell } from "../electron/serve/server";
import type { SimFleet } from "../sim/fleet";
import { ensureRendererBuilt } from "./renderer-build";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export interface PageRig {
  service: FleetService;
  shell: HeadlessShell;
  browser: Browser;
  /** Closes the browser, the shell, the service and `sims`, then removes the data folder. */
  close(): Promise<void>;
}

/** Starts the rig for a benchmark against `sims` (stopped by `close`); `name` marks its data folder; `options` go to the service (e.g. a frame probe). */
export async function startPageRig(sims: SimFleet, name: string, options: Partial<FleetServiceOptions> = {}): Promise<PageRig> {
  ensureRendererBuilt();
  const dataDir = await mkdtemp(join(tmpdir(), `t3-fleet-${name}-bench-`));
  const service = await FleetService.start({ ...options, dataDir, secrets: new MemorySecretStore() });
  // BENCH_RENDERER_DIR: a copy of a build, for a run beside another that rebuilds out/renderer.
  const shell = await startHeadlessShell({ service, rendererDir: process.env.BENCH_RENDERER_DIR ?? join(root, "out/renderer") });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  return {
    service,
    shell,
    browser,
    async close() {
      await browser.close();
      await shell.close();
      await service.stop();
      await sims.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
