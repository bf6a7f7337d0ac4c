// A turn that changes 100,000 files (a vendored tree checked in) costs what a small one does (issue
// 43 point 2): the fleet keeps 100 of its files and its counts, the agent view renders no file until
// its fold is opened and then a bounded list with "and 99,900 more files", and the whole thread's
// diff is reachable with the same bounded list. On both protocols.
import type { Page } from "@playwright/test";
import { createV2Thread } from "../sim/protocol2/fleet-hooks";
import { agentRow, envRow, expect, test, type Fleet } from "./fixtures";

test.use({ generations: ["upstream", "v2"] });

/** 100,000 files of 1 to 3 added lines each (sim/changes.ts `#vendor:N`): 199,999 lines added. */
const VENDOR = "Vendor the dependencies #vendor:100000";
/** Far below the 2.8 M nodes a fully rendered 100,000-file turn took. */
const DOM_BOUND = 5_000;

const domNodes = (page: Page) => page.evaluate(() => document.getElementsByTagName("*").length);

async function online(page: Page, fleet: Fleet): Promise<void> {
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  for (const sim of [...fleet.sims.servers, ...fleet.sims.v2Servers]) await expect(envRow(page, sim.environmentId)).toHaveAttribute("data-phase", "online");
}

async function opensBounded(page: Page, environmentId: string, threadId: string): Promise<void> {
  const row = agentRow(page, environmentId, threadId);
  await expect(row.getByTestId("changes-tag")).toHaveText("100000 files +199999 −0", { timeout: 30_000 });
  await row.locator(".agent-title").click();
  const panel = page.getByTestId("agent-panel");
  await expect(panel.getByTestId("latest-changes")).toHaveText("100000 files +199999 −0");
  // Folded: not one file is in the page.
  await expect(panel.getByTestId("changes-usage").locator("summary")).toHaveText("All turns (1)");
  expect(await panel.locator(".changed-files li").count()).toBe(0);
  expect(await domNodes(page)).toBeLessThan(DOM_BOUND);
  // Open: the kept files and the rest counted.
  await panel.getByTestId("changes-usage").locator("summary").click();
  await expect(panel.getByTestId("more-files")).toHaveText("and 99,900 more files");
  expect(await panel.locator(".changed-files li").count()).toBe(100);
  expect(await domNodes(page)).toBeLessThan(DOM_BOUND);
  // The whole thread's diff is reachable: too large to show, its files bounded the same way.
  await panel.getByTestId("thread-diff").click();
  const diff = page.getByTestId("diff-view");
  await expect(diff.getByTestId("diff-problem")).toContainText("This diff is too large to show here", { timeout: 30_000 });
  await expect(diff.getByTestId("more-files")).toHaveText("and 99,900 more files");
  expect(await diff.locator(".changed-files li").count()).toBe(100);
  expect(await domNodes(page)).toBeLessThan(DOM_BOUND);
  await page.keyboard.press("Escape");
  await expect(diff).toBeHidden();
}

test("protocol 1: an agent whose turn changed 100,000 files opens with its files folded and bounded, and its whole-thread diff is reachable", async ({
  page,
  fleet,
}) => {
  await online(page, fleet);
  const sim = fleet.sims.servers[0]!;
  const threadId = fleet.sims.createThread(sim, { title: "Vendor the dependencies", provider: "codex", text: VENDOR });
  await opensBounded(page, sim.environmentId, threadId);
});

test("protocol 2: an agent whose turn changed 100,000 files opens with its files folded and bounded, and its whole-thread diff is reachable", async ({
  page,
  fleet,
}) => {
  await online(page, fleet);
  const v2 = fleet.sims.v2Servers[0]!;
  const threadId = createV2Thread(v2, { title: "Vendor the dependencies", provider: "codex", text: VENDOR });
  await opensBounded(page, v2.environmentId, threadId);
});
