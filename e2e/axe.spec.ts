// The held-back walk (issue 25), at the four window sizes people keep T3 Fleet at: first look,
// triage to empty by keyboard, search and message, steer and queue, interrupt and hold, an offline
// machine, pair, find machines. axe-core (injected from node_modules) finds no violation, at any
// impact, on any view on the way, the offline ones included; a machine dropping off neither wraps
// the top bar nor shifts the page; every dialog is a dialog element of its own, never a form.
import type { Page } from "@playwright/test";
import { createV2Thread } from "../sim/protocol2/fleet-hooks";
import { violations } from "./axe-check";
import { agentRow, envRow, expect, test } from "./fixtures";
import { SIZES } from "./sizes";

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

/** The top bar's height and where the page below it starts: what a machine dropping off must not move. */
async function barLayout(page: Page): Promise<{ bar: number; main: number }> {
  return page.evaluate(() => ({
    bar: document.querySelector(".topbar")!.getBoundingClientRect().height,
    main: document.querySelector("main")!.getBoundingClientRect().top - (document.querySelector("[data-testid=notices]")?.getBoundingClientRect().height ?? 0),
  }));
}

/** Opens an agent by searching for it and pressing Enter, as the keyboard would. */
async function openBySearch(page: Page, title: string): Promise<void> {
  await page.keyboard.press("/");
  const search = page.getByRole("searchbox");
  await expect(search).toBeFocused();
  await search.fill(title);
  await search.press("Enter");
  await expect(page.getByTestId("agent-panel").locator("h2")).toHaveText(title);
}

/** Back to the list from an open agent, with no search left on. */
async function closeAgent(page: Page): Promise<void> {
  await page.getByTestId("agent-panel").locator("h2").focus();
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("agent-panel")).toHaveCount(0);
  const search = page.getByRole("searchbox");
  await search.fill("");
  // Leaves the search, so the next key is a command again.
  await search.press("Escape");
  await expect(search).not.toBeFocused();
}

test.describe("the held-back walk", () => {
  // The page's CSP allows only its own scripts; the test injects axe-core's source beside them.
  test.use({ startPane: "auto", bypassCSP: true, generations: ["upstream", "fork", "v2"] });

  for (const size of SIZES) {
    test(`at ${size.name}: first look, triage by keyboard, search and message, steer and queue, interrupt and hold, offline, pair, find machines — no axe violation`, async ({
      page,
      fleet,
    }) => {
      test.setTimeout(120_000);
      await page.setViewportSize({ width: size.width, height: size.height });
      const [upstream, fork] = fleet.sims.servers as [(typeof fleet.sims.servers)[0], (typeof fleet.sims.servers)[0]];
      const v2 = fleet.sims.v2Servers[0]!;
      const deployer = fleet.sims.createThread(upstream, {
        title: "Deployer",
        text: "Ship it with `npm run release`\n\n```ts\nconst x = 1; // a comment\n```\n#approval",
      });
      await expect.poll(() => upstream.engine.threads.get(deployer)?.pendingApprovals.size).toBe(1);
      fleet.sims.createThread(fork, { title: "Builder", text: "#fail" });
      fleet.sims.createThread(fork, { title: "Resting" });
      const runner = fleet.sims.createThread(upstream, { title: "Runner", text: "#hang" });
      createV2Thread(v2, { title: "Long job", provider: "claudeAgent", text: "migrate #hold" });
      await fleet.pairAll();

      // First look: the inbox, with what needs you.
      await page.goto(fleet.shell.url);
      const items = page.getByTestId("inbox-row");
      await expect(items).toHaveCount(2);
      expect(await violations(page), "first look: the inbox").toEqual([]);

      // Triage to empty by keyboard: n opens the first, a approves it, the next opens, x acknowledges it.
      await page.keyboard.press("n");
      const heading = page.getByTestId("agent-panel").locator("h2");
      await expect(heading).toHaveText("Deployer");
      await expect(page.getByTestId("approval-card")).toBeVisible();
      await expect(page.getByTestId("transcript").getByTestId("message-user")).toBeVisible();
      expect(await violations(page), "the agent view with an approval").toEqual([]);
      await page.keyboard.press("a");
      await expect(heading).toHaveText("Builder");
      expect(await violations(page), "the agent view with a failure").toEqual([]);
      await page.keyboard.press("x");
      await expect(page.getByTestId("inbox-empty")).toBeVisible();
      expect(await violations(page), "the inbox, all caught up").toEqual([]);

      // Search and message: the fleet, / to search, Enter opens the match, m writes to it.
      await page.keyboard.press("v");
      await expect(agentRow(page, upstream.environmentId, runner)).toHaveAttribute("data-status", "running");
      expect(await violations(page), "the fleet").toEqual([]);
      const filters = page.getByTestId("filters-menu-toggle");
      if (await filters.isVisible()) {
        await filters.click();
        expect(await violations(page), "the filters menu").toEqual([]);
        await filters.click();
      }
      await openBySearch(page, "Resting");
      await page.keyboard.press("m");
      const message = page.getByTestId("composer").getByRole("textbox");
      await expect(message).toBeFocused();
      await message.pressSequentially("summarise the logs", { delay: 0 });
      await message.press("Enter");
      await expect(page.locator('[data-testid="delivery"]').filter({ hasText: "summarise the logs" })).toHaveAttribute("data-state", /delivered|answered/);
      expect(await violations(page), "an agent with a message sent").toEqual([]);
      await closeAgent(page);

      // Steer and queue (protocol 2), then interrupt and hold what was queued.
      await openBySearch(page, "Long job");
      await expect(page.getByTestId("intent")).toHaveAttribute("data-intent", "steer");
      await message.fill("use the new API");
      await message.press("Enter");
      await expect(page.locator('[data-testid="delivery"]').filter({ hasText: "use the new API" })).toHaveAttribute("data-outcome", "steered");
      await page.getByTestId("choose-queue").click();
      await expect(page.getByTestId("intent")).toHaveAttribute("data-intent", "queue");
      await message.fill("then write the docs");
      await message.press("Enter");
      await expect(page.locator('[data-testid="delivery"]').filter({ hasText: "then write the docs" })).toHaveAttribute("data-outcome", "queued");
      await expect(page.getByTestId("transcript").locator('[data-testid="message-user"][data-queue="queued"]')).toHaveCount(1);
      expect(await violations(page), "steer and queue").toEqual([]);
      await page.getByTestId("interrupt").click();
      await expect(page.getByTestId("interrupt-keep-running")).toBeFocused();
      expect(await violations(page), "the interrupt question").toEqual([]);
      await page.getByTestId("interrupt-hold").click();
      await expect(page.locator('[data-testid="delivery"][data-state="held"]')).toHaveCount(1);
      expect(await violations(page), "a held message").toEqual([]);
      await closeAgent(page);

      // An offline machine: a new approval on it first, so the inbox shows one "as of".
      fleet.sims.createThread(upstream, { title: "Reviewer", text: "#approval" });
      await expect(agentRow(page, upstream.environmentId, runner)).toBeVisible();
      await expect(page.getByTestId("needs-you-count")).toHaveText("1 needs you");
      const fleetBefore = await barLayout(page);
      await openBySearch(page, "Runner");
      const before = await barLayout(page);
      await upstream.kill();
      await expect(page.getByTestId("offline-banner")).toBeVisible();
      await expect(page.getByTestId("hosts-down")).toBeVisible();
      const after = await barLayout(page);
      console.log(
        `${size.name}: an agent open: top bar ${before.bar} px → ${after.bar} px with a machine offline; the page below starts at ${before.main} → ${after.main} px`,
      );
      expect(after, "a machine dropping off moves neither the top bar nor the page").toEqual(before);
      expect(await violations(page), "an offline machine's agent").toEqual([]);
      await closeAgent(page);
      await expect(envRow(page, upstream.environmentId)).not.toHaveAttribute("data-phase", "online");
      const fleetAfter = await barLayout(page);
      console.log(
        `${size.name}: the fleet: top bar ${fleetBefore.bar} px → ${fleetAfter.bar} px with a machine offline; the page below starts at ${fleetBefore.main} → ${fleetAfter.main} px`,
      );
      expect(fleetAfter, "the fleet with a machine offline").toEqual(fleetBefore);
      expect(await violations(page), "the fleet with an offline machine").toEqual([]);
      await page.keyboard.press("v");
      await expect(items.first()).toBeVisible();
      await expect(items.first()).toHaveAttribute("data-status", "unknown");
      await expect(items.first()).toContainText(/offline as of \d/);
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

      // Pair: the dialog is a dialog, with its form inside it.
      await windowAction(page, "open-pairing");
      await page.getByTestId("pair-input").fill(fork.pairingUrl());
      await page.getByTestId("pair-submit").click();
      await expect(page.getByTestId("pair-preview")).toBeVisible();
      await expect(page.getByRole("dialog")).toHaveCount(1);
      expect(await page.getByRole("dialog").evaluate((dialog) => dialog.tagName)).not.toBe("FORM");
      await expect(page.getByRole("dialog").locator("form")).toHaveCount(1);
      expect(await violations(page), "the pairing dialog").toEqual([]);
      await page.keyboard.press("Escape");
      await expect(page.getByTestId("pairing-dialog")).toHaveCount(0);

      await windowAction(page, "open-find-machines");
      await expect(page.getByTestId("find-machines")).toBeVisible();
      expect(await page.getByRole("dialog").evaluate((dialog) => dialog.tagName)).not.toBe("FORM");
      expect(await violations(page), "find machines").toEqual([]);
    });
  }
});
