// Find machines in the window, through the headless shell: a fresh fleet finds the real T3 0.0.42
// on this machine, two Tailscale peers and an ssh host (integration/discovery/
// topology.testkit.ts) and pairs each with one click; what cannot be paired says why. Runs inside
// the discovery suite's network namespace (playwright.discovery.config.ts, scripts/discovery-netns.sh).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { test, expect } from "@playwright/test";
import { startTestTailnet } from "../integration/discovery/topology.testkit";
import { MemorySecretStore } from "../electron/fleet/secrets";
import { FleetService } from "../electron/fleet/service";
import { startHeadlessShell } from "../electron/serve/server";
import { SCREENSHOTS } from "./fixtures";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

test("finds this machine, two Tailscale peers and an ssh host, and pairs each with one click", async ({ page }) => {
  test.setTimeout(1_200_000);
  const world = await startTestTailnet();
  const dataDir = await mkdtemp(join(tmpdir(), "t3-discovery-e2e-"));
  const pageErrors: string[] = [];
  page.on("pageerror", (error) => pageErrors.push(error.message));
  try {
    const service = await FleetService.start({ dataDir, secrets: new MemorySecretStore(), discovery: world.discovery });
    const shell = await startHeadlessShell({ service, rendererDir: join(root, "out/renderer") });
    try {
      await page.goto(shell.url);
      await expect(page.getByTestId("empty-fleet")).toBeVisible();
      await page.getByTestId("open-find-machines").click();
      const dialog = page.getByTestId("find-machines");
      const row = (id: string) => dialog.locator(`[data-testid="found-server"][data-id="${id}"]`);
      await expect(row(`local:${world.local.port}`)).toContainText("T3 0.0.42 · protocol 1", { timeout: 30_000 });

      // The ssh hosts the user names, one of them with a host key that changed.
      for (const host of ["charlie", "charlie-rekeyed"]) {
        await dialog.getByTestId("find-ssh-host").fill(host);
        await dialog.getByTestId("find-add-ssh-host").click();
      }
      await dialog.getByTestId("find-again").click();
      await expect(row("ssh:charlie")).toContainText("T3 0.0.42", { timeout: 30_000 });

      await expect(row("tailscale:printer.tail7f3a.ts.net").getByTestId("found-reason")).toContainText("not as a T3 server");
      await expect(row("tailscale:slowpoke.tail7f3a.ts.net").getByTestId("found-reason")).toContainText("did not answer within");
      await expect(row("tailscale:old-desktop.tail7f3a.ts.net").getByTestId("found-reason")).toContainText("Offline in Tailscale");
      await expect(row("tailscale:printer.tail7f3a.ts.net").getByTestId("found-pair")).toHaveCount(0);
      await page.screenshot({ path: join(SCREENSHOTS, "find-machines.png") });

      await row("ssh:charlie-rekeyed").getByTestId("found-plain-http-accept").check();
      await row("ssh:charlie-rekeyed").getByTestId("found-pair").click();
      await expect(row("ssh:charlie-rekeyed").getByTestId("command-error")).toContainText("host key of charlie-rekeyed has changed", { timeout: 90_000 });

      // charlie is on a LAN address: Pair waits until the user accepts plain HTTP, having read why.
      await expect(row("ssh:charlie").getByTestId("found-plain-http")).toContainText("reached over plain HTTP on your network");
      await expect(row("ssh:charlie").getByTestId("found-pair")).toBeDisabled();
      await row("ssh:charlie").getByTestId("found-plain-http-accept").check();
      await expect(row("tailscale:alpha.tail7f3a.ts.net").getByTestId("found-plain-http")).toHaveCount(0);

      const ids = [`local:${world.local.port}`, "tailscale:alpha.tail7f3a.ts.net", "tailscale:bravo.tail7f3a.ts.net", "ssh:charlie"];
      for (const id of ids) {
        await row(id).getByTestId("found-pair").click();
        await expect(row(id).getByTestId("found-paired")).toBeVisible({ timeout: 90_000 });
        await expect(row(id).getByTestId("found-pair")).toHaveText("Pair again");
      }
      await dialog.getByTestId("find-close").click();
      await expect(page.getByTestId("fleet-summary")).toContainText("4 machines");
      await expect(page.locator('[data-testid="env-row"]')).toHaveCount(4);
      await page.screenshot({ path: join(SCREENSHOTS, "find-machines-paired.png") });
    } finally {
      await page.close();
      await shell.close();
      await service.stop();
    }
  } finally {
    await world.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  expect(pageErrors, "uncaught errors in the page").toEqual([]);
});
