// A machine that drops off and comes back is no news (issue 25): the "needs you" count in the top
// bar, the Inbox badge, the tab's title and its icon change only when a need does. Waits on the
// outages themselves (the machine's row, the demo fleet's flap events), never on time; the 10-minute
// figure is `npm run bench -- flapping` (bench/flapping.bench.ts).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { FlappingMeasurement } from "../bench/flapping/measure";
import { recordSurfaces } from "../bench/flapping/page";
import type { Surface } from "../bench/flapping/verdict";
import { MemorySecretStore } from "../electron/fleet/secrets";
import { FleetService } from "../electron/fleet/service";
import { startHeadlessShell } from "../electron/serve/server";
import { startDemoFleet } from "../sim/demo-fleet";
import { agentRow, envRow, expect, test } from "./fixtures";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

test("nothing needs you: a machine that drops off and comes back changes neither the tab's icon nor its title", async ({ page, fleet }) => {
  const flaky = fleet.sims.servers[0]!;
  const steady = fleet.sims.servers[1]!;
  const running = fleet.sims.createThread(flaky, { title: "Long runner", text: "#hang" });
  const idle = fleet.sims.createThread(steady, { title: "Done", text: "done" });
  await fleet.pairAll();
  const shown: Record<Surface, string[]> = { "top bar": [], "inbox badge": [], "tab title": [], favicon: [] };
  await recordSurfaces(page, (surface, value) => shown[surface].push(value));
  await page.goto(fleet.shell.url);
  await expect(agentRow(page, flaky.environmentId, running)).toHaveAttribute("data-status", "running");
  await expect(agentRow(page, steady.environmentId, idle)).toHaveAttribute("data-status", "idle");
  await expect(page).toHaveTitle("T3 Fleet — nothing needs you");
  for (let outage = 0; outage < 3; outage++) {
    await flaky.kill();
    await expect(envRow(page, flaky.environmentId)).toHaveAttribute("data-phase", /offline|backoff/);
    await expect(agentRow(page, flaky.environmentId, running)).toHaveAttribute("data-status", "unknown");
    await flaky.start();
    await expect(envRow(page, flaky.environmentId)).toHaveAttribute("data-phase", "online");
    await expect(agentRow(page, flaky.environmentId, running)).toHaveAttribute("data-status", "running");
  }
  // The page's own title before it loaded, then one title and one icon throughout.
  expect(shown["tab title"].filter((title) => title !== "T3 Fleet")).toEqual(["T3 Fleet — nothing needs you"]);
  expect(shown.favicon).toEqual(["all-clear 0"]);
  expect(shown["top bar"]).toEqual(["0"]);
  expect(shown["inbox badge"]).toEqual(["0"]);
});

test("the demo fleet with a faster flap: every count changes only when a need does", async ({ page }) => {
  test.setTimeout(150_000);
  const OUTAGES = 4;
  // The demo's fleet at its own pace; its build machine drops off every 8 s for 3 s (the demo: every minute for 15 s).
  const demo = await startDemoFleet({ outageEveryMs: 8_000, outageMs: 3_000 });
  const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-e2e-flapping-"));
  const service = await FleetService.start({ dataDir, secrets: new MemorySecretStore() });
  const shell = await startHeadlessShell({ service, rendererDir: join(root, "out/renderer") });
  const measurement = new FlappingMeasurement(service, demo.flaky, demo.flaps);
  try {
    for (const url of demo.pairingUrls) await service.request("pair.confirm", { input: url });
    await recordSurfaces(page, (surface, value) => measurement.reading(surface, value));
    await page.goto(shell.url);
    for (let outage = 1; outage <= OUTAGES; outage++) {
      await measurement.until(() => measurement.edges.filter((edge) => edge.edge === "down").length >= outage, 30_000, `outage ${outage}`);
      await measurement.until(() => measurement.edges.filter((edge) => edge.edge === "up").length >= outage, 30_000, `the end of outage ${outage}`);
      await measurement.until(() => measurement.flakyOnline(), 30_000, `${demo.flaky.label} online after outage ${outage}`);
    }
    await measurement.until(() => measurement.settled(), 10_000, "the page showing the service's needs");
    const verdict = measurement.verdict();
    expect(verdict.failures, measurement.report(verdict).join("\n")).toEqual([]);
    // It measured something: the demo's needs arrived, and each surface followed them.
    expect(measurement.state().count).toBeGreaterThan(0);
    for (const surface of Object.values(verdict.surfaces)) expect(surface.changes.length).toBeGreaterThan(0);
  } finally {
    measurement.stop();
    await page.close();
    await shell.close();
    await service.stop();
    await demo.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
});
