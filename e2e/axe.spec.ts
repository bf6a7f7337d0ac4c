// Accessibility: axe-core (injected from node_modules) finds no violation, at any impact, on every
// view: the inbox, the fleet, the agent view, an offline machine (tree and agent), the pairing
// dialog, the command palette, settings and find machines, at a wide and a phone-width window.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "@playwright/test";
import { agentRow, envRow, expect, test } from "./fixtures";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** Every violation on the page as it is now, whatever its impact, in words a failing test can show. */
async function violations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ content: AXE_SOURCE });
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run(document, { resultTypes: ["violations"] })).violations;
  });
  return found.flatMap((violation) =>
    violation.nodes.map((node) => `${violation.impact ?? "?"} ${violation.id} (${violation.help}): ${node.target.join(" ")} — ${node.failureSummary ?? ""}`),
  );
}

/** Clicks one of the window's actions, through the menu that holds them in a small window. */
async function windowAction(page: Page, testId: string): Promise<void> {
  const menu = page.getByTestId("topbar-menu-toggle");
  if (await menu.isVisible()) {
    await menu.click();
    // The open menu passes axe too.
    expect(await violations(page), "the window's menu").toEqual([]);
  }
  await page.getByTestId(testId).click();
}

test.describe("axe", () => {
  // The page's CSP allows only its own scripts; the test injects axe-core's source beside them.
  test.use({ startPane: "auto", bypassCSP: true });

  for (const size of [
    { name: "1400x900", width: 1400, height: 900 },
    { name: "390x844", width: 390, height: 844 },
  ]) {
    test(`no violation on any view at ${size.name}: inbox, fleet, agent, offline machine, pairing, palette, settings, find machines`, async ({
      page,
      fleet,
    }) => {
      await page.setViewportSize({ width: size.width, height: size.height });
      const sim = fleet.sims.servers[0]!;
      const deployer = fleet.sims.createThread(sim, {
        title: "Deployer",
        text: "Ship it with `npm run release`\n\n```ts\nconst x = 1; // a comment\n```\n#approval",
      });
      fleet.sims.createThread(fleet.sims.servers[1]!, { title: "Builder", text: "#fail" });
      fleet.sims.createThread(fleet.sims.servers[2]!, { title: "Runner", text: "#hang" });
      fleet.sims.createThread(fleet.sims.servers[2]!, { title: "Resting" });
      await fleet.pairAll();
      await page.goto(fleet.shell.url);
      await expect(page.getByTestId("inbox-row")).toHaveCount(2);
      expect(await violations(page), "the inbox").toEqual([]);

      await page.getByTestId("view-fleet").click();
      await expect(agentRow(page, sim.environmentId, deployer)).toHaveAttribute("data-status", "needs-approval");
      expect(await violations(page), "the fleet").toEqual([]);
      const filters = page.getByTestId("filters-menu-toggle");
      if (await filters.isVisible()) {
        await filters.click();
        expect(await violations(page), "the filters menu").toEqual([]);
        await filters.click();
      }

      await agentRow(page, sim.environmentId, deployer).getByRole("button", { name: "Deployer" }).click();
      await expect(page.getByTestId("transcript").getByTestId("message-user")).toBeVisible();
      await expect(page.getByTestId("approval-card")).toBeVisible();
      expect(await violations(page), "the agent view").toEqual([]);

      await sim.kill();
      await expect(page.getByTestId("offline-banner")).toBeVisible();
      expect(await violations(page), "an offline machine's agent").toEqual([]);

      await page.keyboard.press("Escape");
      await expect(page.getByTestId("agent-panel")).toHaveCount(0);
      await expect(envRow(page, sim.environmentId)).not.toHaveAttribute("data-phase", "online");
      expect(await violations(page), "the fleet with an offline machine").toEqual([]);

      await page.getByTestId("view-inbox").click();
      await expect(page.getByTestId("inbox-row").first()).toBeVisible();
      expect(await violations(page), "the inbox with an offline machine").toEqual([]);

      await page.keyboard.press("Control+k");
      await page.getByTestId("command-palette").getByLabel("Command").fill("de");
      await expect(page.getByTestId("command-palette").getByRole("option").first()).toBeVisible();
      expect(await violations(page), "the command palette").toEqual([]);
      await page.keyboard.press("Escape");
      await expect(page.getByTestId("command-palette")).toHaveCount(0);

      await windowAction(page, "open-settings");
      await expect(page.getByTestId("settings-dialog")).toBeVisible();
      expect(await violations(page), "settings").toEqual([]);
      await page.keyboard.press("Escape");
      await expect(page.getByTestId("settings-dialog")).toHaveCount(0);

      await windowAction(page, "open-pairing");
      await page.getByTestId("pair-input").fill(fleet.sims.servers[1]!.pairingUrl());
      await page.getByTestId("pair-submit").click();
      await expect(page.getByTestId("pair-preview")).toBeVisible();
      expect(await violations(page), "the pairing dialog").toEqual([]);
      await page.keyboard.press("Escape");
      await expect(page.getByTestId("pairing-dialog")).toHaveCount(0);

      await windowAction(page, "open-find-machines");
      await expect(page.getByTestId("find-machines")).toBeVisible();
      expect(await violations(page), "find machines").toEqual([]);
    });
  }
});
