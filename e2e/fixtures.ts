// One fleet per test: simulated T3 machines, the fleet service and the headless shell, all on
// 127.0.0.1, with liveness tuned so faults show within a second.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { test as base, expect, type Page } from "@playwright/test";
import { MemorySecretStore } from "../electron/fleet/secrets";
import { FleetService } from "../electron/fleet/service";
import { type HeadlessShell, startHeadlessShell } from "../electron/serve/server";
import { SimFleet, type SimFleetOptions } from "../sim/fleet";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const SCREENSHOTS = join(root, "test-results/screenshots");

export interface Fleet {
  sims: SimFleet;
  service: FleetService;
  shell: HeadlessShell;
  /** Pairs every simulated machine through the service (tests that are not about pairing). */
  pairAll(): Promise<void>;
}

export const test = base.extend<{ fleet: Fleet; generations: NonNullable<SimFleetOptions["generations"]>; startPane: "fleet" | "auto" }>({
  /**
   * The window opens on the inbox when anything needs the user; specs about the fleet tree start
   * on the tree, as a user who chose it in this window would (`test.use({ startPane: "auto" })` for the default).
   */
  startPane: ["fleet", { option: true }],
  /** One simulated machine per entry; `test.use({ generations: ["fork", "upstream", "v2"] })` for a mixed fleet. */
  generations: [["upstream", "fork", "upstream"], { option: true }],
  fleet: async ({ page, generations, startPane }, use) => {
    if (startPane === "fleet") await page.addInitScript(() => sessionStorage.setItem("t3fleet.pane", "fleet"));
    const sims = await SimFleet.start({ envs: generations.length, generations, tickMs: 40 });
    const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-e2e-"));
    const service = await FleetService.start({
      dataDir,
      secrets: new MemorySecretStore(),
      // Pings every second: a test process stalled for a few hundred ms on a busy machine (a
      // screenshot, a GC) must not read as a vanished host; a killed one still shows offline at once.
      socket: { pingIntervalMs: 1_000, openTimeoutMs: 2_000 },
      timing: { baseBackoffMs: 100, maxBackoffMs: 500, stableAfterMs: 2_000, probeTimeoutMs: 500 },
    });
    const started = await startHeadlessShell({ service, rendererDir: join(root, "out/renderer") });
    // Launch links open once: every `page.goto(fleet.shell.url)` gets a fresh one.
    const shell: HeadlessShell = {
      ...started,
      get url() {
        return started.newLaunchUrl();
      },
    };
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await use({
      sims,
      service,
      shell,
      pairAll: async () => {
        for (const sim of [...sims.servers, ...sims.v2Servers]) await service.request("pair.confirm", { input: sim.pairingUrl() });
      },
    });
    // Deterministic shutdown: every bridge request the page made is answered before anything stops,
    // and the page is gone before its bridge is (no request left to reject at shutdown).
    if (!page.isClosed() && (await page.getByTestId("busy").count()) > 0) await expect(page.getByTestId("busy")).toHaveAttribute("data-pending", "0");
    await page.close();
    await shell.close();
    await service.stop();
    await sims.stop();
    await rm(dataDir, { recursive: true, force: true });
    expect(pageErrors, "uncaught errors in the page").toEqual([]);
  },
});

export { expect };

export function agentRow(page: Page, environmentId: string, threadId: string) {
  return page.locator(`[data-testid="agent-row"][data-key="${environmentId}/${threadId}"]`);
}

export function envRow(page: Page, environmentId: string) {
  return page.locator(`[data-testid="env-row"][data-environment="${environmentId}"]`);
}
