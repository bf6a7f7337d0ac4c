// "Needs you" is one count (shared/fleet/needs.ts) that the top bar, the Inbox badge, the tab's title
// and its icon all show, that holds still while a machine drops off and comes back with the same
// needs, and whose inbox puts the most urgent first (issue 25 points 1 and 4).
import type { Page } from "@playwright/test";
import { agentRow, envRow, expect, test } from "./fixtures";
import { SIZES } from "./sizes";

/** Every title the page sets, in order (the tab's title is only ever set by renderer/src/state/tab.ts). */
async function recordTitles(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const titles: string[] = [];
    (window as unknown as { __titles: string[] }).__titles = titles;
    const native = Object.getOwnPropertyDescriptor(Document.prototype, "title")!;
    Object.defineProperty(Document.prototype, "title", {
      configurable: true,
      get() {
        return native.get!.call(this);
      },
      set(value: string) {
        titles.push(value);
        native.set!.call(this, value);
      },
    });
  });
}

const titlesSet = (page: Page) => page.evaluate(() => (window as unknown as { __titles: string[] }).__titles.slice());

/** The top bar, the Inbox badge, the tab's title and its icon all say `count`. */
async function expectAgreeOn(page: Page, count: number): Promise<void> {
  await expect(page.getByTestId("needs-you-count")).toHaveText(`${count} ${count === 1 ? "needs" : "need"} you`);
  await expect(page.getByTestId("inbox-count")).toHaveText(String(count));
  await expect(page).toHaveTitle(count ? `${count} need${count === 1 ? "s" : ""} you — T3 Fleet` : "T3 Fleet — nothing needs you");
  await expect(page.locator('link[rel="icon"]')).toHaveAttribute("data-count", String(count));
}

/** The header's and the filter bar's boxes at each window size (y and height: what a wrap would change). */
async function headerBoxes(page: Page): Promise<string[]> {
  const boxes: string[] = [];
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    const header = (await page.locator("header.topbar").boundingBox())!;
    const filters = (await page.locator("nav.filters").boundingBox())!;
    boxes.push(`${size.name}: header ${header.y}+${header.height}, filters ${filters.y}+${filters.height}`);
  }
  return boxes;
}

test.describe("one count of what needs you", () => {
  test.use({ startPane: "auto" });

  test("the top bar, badge, title and icon agree, and hold still while a machine drops off and comes back with the same needs", async ({ page, fleet }) => {
    const [studio, fork, build] = fleet.sims.servers as [(typeof fleet.sims.servers)[0], (typeof fleet.sims.servers)[0], (typeof fleet.sims.servers)[0]];
    const deploy = fleet.sims.createThread(studio, { title: "Deploy the release", text: "#approval" });
    await expect.poll(() => studio.engine.threads.get(deploy)?.pendingApprovals.size).toBe(1);
    const migrate = fleet.sims.createThread(fork, { title: "Migrate the database", text: "#input" });
    await expect.poll(() => fork.engine.threads.get(migrate)?.pendingUserInputs.size).toBe(1);
    fleet.sims.createThread(build, { title: "Nightly build", text: "#fail" });
    await fleet.pairAll();
    await recordTitles(page);
    await page.goto(fleet.shell.url);

    await expect(page.getByTestId("inbox-row")).toHaveCount(3);
    await expectAgreeOn(page, 3);
    await expect(page.getByTestId("hosts-down")).toBeHidden();
    const online = await headerBoxes(page);
    const titlesBefore = await titlesSet(page);
    expect(titlesBefore.at(-1)).toBe("3 need you — T3 Fleet");

    // Open the approval, then its machine drops off: the item stays, as of then, and still counts.
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.keyboard.press("n");
    const panel = page.getByTestId("agent-panel");
    await expect(panel.locator("h2")).toHaveText("Deploy the release");
    await expect(panel.getByTestId("panel-position")).toHaveText("1 of 3");
    await studio.kill();
    await expect(page.getByTestId("hosts-down")).toBeVisible();
    await expect(page.getByTestId("hosts-down")).toHaveText("· 1 not online");
    const item = page.locator(`[data-testid="inbox-row"][data-key="${studio.environmentId}/${deploy}"]`);
    await expect(item).toHaveAttribute("data-status", "unknown");
    // Named, as of its last confirmation (issue 40 point 9).
    await expect(item).toContainText(new RegExp(`${studio.label} offline as of \\d.*approve`));
    await expect(panel.getByTestId("panel-position")).toHaveText("1 of 3");
    await expectAgreeOn(page, 3);
    // A decision cannot reach T3 now: the key says why instead of doing nothing.
    await page.keyboard.press("a");
    await expect(page.locator(`[data-testid="command-error"][data-place="agent:${studio.environmentId}/${deploy}"]`)).toContainText(
      "is not online: a decision cannot reach T3 now",
    );
    // The header keeps its place and height at every size: "1 not online" never wraps it.
    await page.keyboard.press("Escape");
    expect(await headerBoxes(page)).toEqual(online);

    // Back with the same needs: nothing changed, and the title was never set again.
    await studio.start();
    await expect(page.getByTestId("hosts-down")).toBeHidden();
    await expect(item).toHaveAttribute("data-status", "needs-approval");
    await expectAgreeOn(page, 3);
    expect(await headerBoxes(page)).toEqual(online);
    expect(await titlesSet(page)).toEqual(titlesBefore);

    // A need that really changes does change the count, everywhere at once.
    await page.setViewportSize({ width: 1400, height: 900 });
    await item.click();
    await page.getByTestId("approval-card").getByRole("button", { name: "Allow once", exact: true }).click();
    await expectAgreeOn(page, 2);
    expect((await titlesSet(page)).at(-1)).toBe("2 need you — T3 Fleet");
  });

  test("the badge does not follow the machine filter: the inbox says what the filter hides", async ({ page, fleet }) => {
    const [studio, fork] = fleet.sims.servers as [(typeof fleet.sims.servers)[0], (typeof fleet.sims.servers)[0]];
    fleet.sims.createThread(studio, { title: "Deploy the release", text: "#approval" });
    fleet.sims.createThread(fork, { title: "Migrate the database", text: "#input" });
    await fleet.pairAll();
    await page.goto(fleet.shell.url);
    await expect(page.getByTestId("inbox-row")).toHaveCount(2);
    await page.getByLabel("Machine").selectOption(fork.environmentId);
    await expect(page.getByTestId("inbox-row")).toHaveCount(1);
    await expectAgreeOn(page, 2);
    await expect(page.getByTestId("inbox-position")).toHaveText("1 of 2 shown");
    await expect(page.getByTestId("inbox-hint")).toContainText("1 hidden by the filters");
  });
});

test.describe("the right thing first", () => {
  test.use({ startPane: "auto" });

  test("an approval sorts above older stalled and held-up agents, which roll up as themselves and stay held up offline", async ({ page, fleet }) => {
    const [studio, fork] = fleet.sims.servers as [(typeof fleet.sims.servers)[0], (typeof fleet.sims.servers)[0]];
    await fleet.service.request("settings.update", { stalledAfterMs: 10_000 });
    const quiet = fleet.sims.createThread(studio, { title: "Quiet refactor", text: "Refactor the parser #hang" });
    const held = fleet.sims.createThread(studio, { title: "Capacity wait", text: "Find the flaky test #capacity" });
    await fleet.pairAll();
    await page.goto(fleet.shell.url);
    const rows = page.getByTestId("inbox-row");
    // The quiet run stalls after the stall time (10 s, the shortest the settings take).
    await expect(rows).toHaveCount(2, { timeout: 30_000 });
    await expect(page.locator(`[data-testid="inbox-row"][data-key="${studio.environmentId}/${quiet}"] .chip`)).toHaveText("stalled");
    // It says for how long nothing happened, not "for a while" (issue 40 point 4).
    await expect(page.locator(`[data-testid="inbox-row"][data-key="${studio.environmentId}/${quiet}"] .inbox-need`)).toHaveText(
      /^stalled: no activity for \d+ (s|min)$/,
    );
    // So does the notice it raised: news of a stall says how long, as the row does.
    await expect(page.getByTestId("notice").filter({ hasText: "Quiet refactor" })).toContainText(/^Quiet refactor has stalled: no activity for \d+ (s|min)/);

    const approval = fleet.sims.createThread(fork, { title: "Fresh approval", text: "#approval" });
    await expect(rows).toHaveCount(3);
    // The newest item, yet first: a decision outranks the stalls, which follow by how long they waited.
    const keys = await rows.evaluateAll((items) => items.map((row) => row.getAttribute("data-key")));
    expect(keys[0]).toBe(`${fork.environmentId}/${approval}`);
    expect(keys.slice(1).sort()).toEqual([`${studio.environmentId}/${quiet}`, `${studio.environmentId}/${held}`].sort());
    await expect(page.getByTestId("inbox-hint")).toContainText("most urgent first");

    // The machine's header counts them as stalled and held up, never as running.
    await page.getByTestId("view-fleet").click();
    const machine = envRow(page, studio.environmentId);
    await expect(machine.getByTestId("count-stalled")).toHaveText("1 stalled");
    await expect(machine.getByTestId("count-held-up")).toHaveText("1 held up");
    await expect(machine.getByTestId("count-running")).toHaveCount(0);

    // Offline, the held-up run is held up as of then, not "was running", and still needs you.
    await studio.kill();
    const heldRow = agentRow(page, studio.environmentId, held);
    await expect(heldRow).toHaveAttribute("data-status", "unknown");
    await expect(heldRow.getByTestId("as-of")).toContainText("was held up · as of");
    await expect(agentRow(page, studio.environmentId, quiet).getByTestId("as-of")).toContainText("was stalled · as of");
    await expectAgreeOn(page, 3);
  });
});
