// Issue 40, points 3 and 4, as a keyboard user meets them. Review items ("List agents that finished
// with changes I have not looked at") are needs like any other: the badge, the top bar, the tab's
// title and the inbox count them alike, `n` reaches them, and `e` marks one reviewed with a receipt
// and Undo. And one focus rule (renderer/src/state/focus.ts): after each action focus is on the next
// item or on the list, never on the page's body, so ↑/↓ and Esc go on working.
import type { Locator, Page } from "@playwright/test";
import { createV2Thread, sendV2Message } from "../sim/protocol2/fleet-hooks";
import { type Fleet, agentRow, expect, test } from "./fixtures";

const WIDTHS = [
  { name: "1400x900", width: 1400, height: 900 },
  { name: "390x844", width: 390, height: 844 },
] as const;

/** Focus is on this element (and so not on the page's body). */
async function expectFocusOn(page: Page, target: Locator, after: string): Promise<void> {
  await expect(target, `focus after ${after}`).toBeFocused();
  expect(await page.evaluate(() => document.activeElement === document.body), `focus is not on the body after ${after}`).toBe(false);
}

/** The one "needs you" number, as every surface of the window says it. */
async function expectCount(page: Page, count: number): Promise<void> {
  await expect(page.getByTestId("needs-you-count")).toHaveText(`${count} ${count === 1 ? "needs" : "need"} you`);
  await expect(page.getByTestId("inbox-count")).toHaveText(String(count));
  await expect(page).toHaveTitle(count ? `${count} need${count === 1 ? "s" : ""} you — T3 Fleet` : "T3 Fleet — nothing needs you");
}

/** One machine with an approval waiting and an agent that finished with 3 files changed; review items listed. */
async function reviewFleet(page: Page, fleet: Fleet): Promise<{ approval: string; review: string }> {
  const sim = fleet.sims.servers[0]!;
  const approval = fleet.sims.createThread(sim, { title: "Deploy the release", text: "Deploy #approval" });
  await expect.poll(() => sim.engine.threads.get(approval)?.pendingApprovals.size).toBe(1);
  await fleet.pairAll();
  await fleet.service.request("settings.update", { finishedWithChangesInInbox: true });
  await page.goto(fleet.shell.url);
  await page.getByTestId("view-inbox").click();
  await expect(page.getByTestId("inbox-row")).toHaveCount(1);
  // Started while the fleet watches, so its turn's changes are read as it ends.
  const review = fleet.sims.createThread(sim, { title: "Refactor the store", provider: "codex", text: "Refactor #edit:3" });
  await expect(page.getByTestId("inbox-row")).toHaveCount(2);
  return { approval: `${sim.environmentId}/${approval}`, review: `${sim.environmentId}/${review}` };
}

test.use({ generations: ["upstream"] });
// Each walks many steps against a live fleet; on a loaded machine one took longer than the default minute.
test.describe.configure({ timeout: 120_000 });

for (const size of WIDTHS) {
  test(`a review item is a need like any other: counted alike, reached by n, marked reviewed with e, a receipt and Undo at ${size.name}`, async ({
    page,
    fleet,
  }) => {
    await page.setViewportSize({ width: size.width, height: size.height });
    const { review } = await reviewFleet(page, fleet);
    const rows = page.getByTestId("inbox-row");
    // Shown and counted alike: never "4 of 0 shown · -4 hidden by the filters".
    await expect(page.getByTestId("inbox-position")).toHaveText(/^(2 need you|[12] of 2)$/);
    await expect(page.getByTestId("inbox-hint")).toHaveText("most urgent first");
    await expectCount(page, 2);
    // Decisions first; the review item last, saying what it is and how to clear it.
    await expect(rows.nth(1)).toHaveAttribute("data-key", review);
    await expect(rows.nth(1)).toContainText("finished: 3 files changed · e marks them reviewed");
    const machine = (await rows.nth(1).locator(".inbox-where").innerText()).split(" · ")[0]!;

    // n reaches it, as it reaches any need.
    await page.getByRole("listbox", { name: "Agents that need you, most urgent first" }).focus();
    await page.keyboard.press("Enter");
    const panel = page.getByTestId("agent-panel");
    await expect(panel.locator("h2")).toHaveText("Deploy the release");
    await page.keyboard.press("n");
    await expect(panel.locator("h2")).toHaveText("Refactor the store");
    await expect(page.getByTestId("inbox-position")).toHaveText("2 of 2");

    // Reading the diff reviews nothing by itself: the item stays until the user says so.
    await page.keyboard.press("c");
    await expect(page.getByTestId("diff-view")).toBeVisible();
    await page.keyboard.press("Escape");
    await expect(page.getByTestId("diff-view")).toBeHidden();
    await expectFocusOn(page, panel.locator("h2"), "closing the diff");
    await expectCount(page, 2);

    // e: one key, a receipt naming the agent and its machine, and the next item opens.
    await page.keyboard.press("e");
    const receipt = page.getByTestId("action-confirmation-text");
    await expect(receipt).toHaveText(`Marked the changes of Refactor the store on ${machine} reviewed`);
    await expectCount(page, 1);
    await expect(rows).toHaveCount(1);
    await expect(panel.locator("h2")).toHaveText("Deploy the release");
    await expectFocusOn(page, panel.locator("h2"), "marking the changes reviewed");

    // z takes it back: the item needs the user again, counted everywhere.
    await page.keyboard.press("z");
    await expect(receipt).toHaveText(`Brought back Refactor the store on ${machine}: changes not reviewed`);
    await expectCount(page, 2);
    await expect(rows).toHaveCount(2);
    await expect(panel.locator("h2")).toHaveText("Refactor the store");

    // Marked again, it is in Handled today.
    await page.keyboard.press("e");
    await expectCount(page, 1);
    await page.keyboard.press("Escape");
    await page.keyboard.press("h");
    await expect(page.getByTestId("handled-today")).toContainText(`Marked the changes of Refactor the store on ${machine} reviewed`);
  });
}

test("after every action focus is on the next item or on the list, never on the page's body", async ({ page, fleet }) => {
  await page.setViewportSize({ width: 1400, height: 900 });
  const { approval } = await reviewFleet(page, fleet);
  const panel = page.getByTestId("agent-panel");
  const heading = panel.locator("h2");
  const list = page.getByRole("listbox", { name: "Agents that need you, most urgent first" });

  // Opening from the list, and a diff opened and closed.
  await list.focus();
  await page.keyboard.press("Enter");
  await expectFocusOn(page, heading, "opening the first item");
  await page.keyboard.press("n");
  await expect(heading).toHaveText("Refactor the store");
  await page.keyboard.press("c");
  await expect(page.getByTestId("diff-view")).toBeVisible();
  await page.keyboard.press("Escape");
  await expectFocusOn(page, heading, "closing a diff");

  // Clearing a review item: the next item opens, focused.
  await page.keyboard.press("e");
  await expect(heading).toHaveText("Deploy the release");
  await expectFocusOn(page, heading, "clearing a review item");

  // Snooze, then Unsnooze from the Snoozed list: focus stays in the list's dialog, then back on the list.
  await page.keyboard.press("s");
  await expect(page.getByTestId("inbox-empty")).toBeVisible();
  await expectFocusOn(page, page.getByTestId("inbox-empty"), "snoozing the last inbox item");
  await page.keyboard.press("Z");
  const snoozedList = page.getByTestId("snoozed-list");
  await expect(snoozedList).toBeVisible();
  await snoozedList.getByTestId("unsnooze").click();
  await expect(snoozedList.getByTestId("snoozed-entry")).toHaveCount(0);
  await expect(page.locator(":focus")).toHaveCount(1);
  expect(await page.evaluate(() => document.activeElement?.closest('[data-testid="snoozed-list"]') !== null), "focus stays in the Snoozed list").toBe(true);
  await page.keyboard.press("Escape");
  await expect(snoozedList).toBeHidden();
  await expectFocusOn(page, list, "closing the Snoozed list after Unsnooze");
  // ↑/↓ work from there.
  await page.keyboard.press("ArrowDown");
  await expect(list).toHaveAttribute("aria-activedescendant", /.+/);

  // A palette open that runs a command: Handled today, then Esc back to the list.
  await page.keyboard.press("Control+k");
  await page.keyboard.type("Handled today");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("handled-today")).toBeVisible();
  await page.keyboard.press("Escape");
  await expectFocusOn(page, list, "closing Handled today opened from the palette");
  // A palette open that changes the view: focus on the tree.
  await page.keyboard.press("Control+k");
  await page.keyboard.type("Switch between the inbox");
  await page.keyboard.press("Enter");
  await expectFocusOn(page, page.getByTestId("fleet-tree"), "switching to the fleet from the palette");
  await page.keyboard.press("v");

  // The last inbox item handled (its approval allowed): focus on the list.
  await page.locator(`[data-testid="inbox-row"][data-key="${approval}"]`).click();
  await expect(heading).toHaveText("Deploy the release");
  await page.keyboard.press("a");
  await expect(page.getByTestId("inbox-empty")).toBeVisible();
  await expectFocusOn(page, page.getByTestId("inbox-empty"), "handling the last inbox item");
  // Esc and the keys still work: v switches to the fleet, whose tree takes focus.
  await page.keyboard.press("v");
  await expect(page.getByTestId("fleet-tree")).toBeVisible();
});

test.describe("on protocol 2", () => {
  test.use({ generations: ["v2"] });

  test("after interrupt and hold, focus is in the agent view, never on the page's body", async ({ page, fleet }) => {
    const v2 = fleet.sims.v2Servers[0]!;
    const threadId = createV2Thread(v2, { title: "Port the parser", provider: "claudeAgent", text: "Port the parser #hold" });
    sendV2Message(v2, threadId, "Then update the docs");
    await fleet.pairAll();
    await page.goto(fleet.shell.url);
    const row = agentRow(page, v2.environmentId, threadId);
    await expect(row).toHaveAttribute("data-status", "running");
    await row.locator(".agent-title").click();
    const panel = page.getByTestId("agent-panel");
    await expect(page.getByTestId("transcript").locator('[data-testid="message-user"][data-queue="queued"]')).toHaveCount(1);
    await panel.locator("h2").focus();
    await page.keyboard.press("i");
    const hold = page.getByTestId("interrupt-hold");
    await hold.focus();
    await page.keyboard.press("Enter");
    await expect(page.locator('[data-testid="delivery"][data-state="held"]')).toHaveCount(1);
    await expect(page.getByTestId("interrupt-confirm")).toHaveCount(0);
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.closest('[data-testid="agent-panel"]') !== null), { message: "focus after interrupt and hold" })
      .toBe(true);
    // Esc still works from there: back to the list, focused.
    await page.keyboard.press("Escape");
    await expectFocusOn(page, page.getByTestId("fleet-tree"), "Esc after interrupt and hold");
  });
});
