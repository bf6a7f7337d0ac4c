// What a user walking the window keyboard first at 1400×900 and 390×844 found hidden or in the way
// (issue 40 points 2, 7, 8 and 10): the agent's tokens, context fill and last turn's changes shown
// without expanding anything; the hint bar listing the keys the view answers (c, r); a question's
// choices a Tab or two from the agent's heading; at phone width a title and its metadata both
// shown; the confirmation of an action never over the composer's Send row; axe-core clean on the
// fleet, inbox, agent, diff and usage views; and with many needs the open agent's transcript keeps
// its room, each need said once on screen.
import type { Locator, Page } from "@playwright/test";
import { createV2Thread } from "../sim/protocol2/fleet-hooks";
import { violations } from "./axe-check";
import { agentRow, envRow, expect, type Fleet, test } from "./fixtures";

test.use({ bypassCSP: true, generations: ["upstream", "fork", "v2"] });

const WIDE = { width: 1400, height: 900 };
const PHONE = { width: 390, height: 844 };

async function online(page: Page, fleet: Fleet): Promise<void> {
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  for (const sim of [...fleet.sims.servers, ...fleet.sims.v2Servers]) await expect(envRow(page, sim.environmentId)).toHaveAttribute("data-phase", "online");
}

/** The element's box, which must be on screen. */
async function box(locator: Locator): Promise<{ x: number; y: number; width: number; height: number }> {
  const found = await locator.boundingBox();
  expect(found, "on screen").not.toBeNull();
  return found!;
}

function overlap(a: { x: number; y: number; width: number; height: number }, b: { x: number; y: number; width: number; height: number }): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

/** The keys the hint bar lists, by registry id. */
async function hintedCommands(page: Page): Promise<string[]> {
  return page.getByTestId("key-hint").evaluateAll((hints) => hints.map((hint) => hint.getAttribute("data-command") ?? ""));
}

for (const size of [WIDE, PHONE]) {
  test(`at ${size.width}×${size.height}: the agent view shows its tokens, context fill and last turn's changes without expanding anything`, async ({
    page,
    fleet,
  }) => {
    await page.setViewportSize(size);
    await online(page, fleet);
    const sim = fleet.sims.servers[0]!;
    const threadId = fleet.sims.createThread(sim, { title: "Summarise the build logs", provider: "claudeAgent", text: "Summarise the logs #edit:1 #nearfull" });
    const row = agentRow(page, sim.environmentId, threadId);
    await expect(row.getByTestId("changes-tag")).toHaveText(/^1 file /);
    await row.locator(".agent-title").click();
    const panel = page.getByTestId("agent-panel");
    await expect(panel.locator("h2")).toHaveText("Summarise the build logs");
    for (const [testId, words] of [
      ["context-fill", "95 % of 258k; will not compact"],
      ["thread-tokens", /^[\d.]+k tokens/],
      ["last-turn-tokens", /^[\d.]+k tokens$/],
      ["latest-changes", /^1 file \+\d+ −\d+$/],
    ] as const) {
      await expect(panel.getByTestId(testId), testId).toBeVisible();
      await expect(panel.getByTestId(testId), testId).toHaveText(words);
    }
    // Its breakdown is on hover, so the line stays one line.
    await expect(panel.getByTestId("last-turn-tokens")).toHaveAttribute("title", /tokens \(input/);
    // Nothing was opened to see them; the figures take a line each, not the transcript's room.
    await expect(panel.locator("details[open]")).toHaveCount(0);
    for (const line of ["usage-line", "changes-line"])
      expect((await box(panel.getByTestId(line))).height, line).toBeLessThanOrEqual(size.width > 600 ? 28 : 72);
    // The diff is one click away from there.
    await panel.getByTestId("show-diff").click();
    await expect(page.getByTestId("diff-view").getByTestId("diff-lines")).toBeVisible();
  });
}

test("the hint bar lists every key the view answers: c where there is a diff, r where a question waits, the decisions where an approval does", async ({
  page,
  fleet,
}) => {
  await page.setViewportSize(WIDE);
  await online(page, fleet);
  const sim = fleet.sims.servers[0]!;
  const edited = fleet.sims.createThread(sim, { title: "Refactor the store", provider: "codex", text: "Refactor #edit:2" });
  const asking = fleet.sims.createThread(sim, { title: "Draft the changelog", text: "Draft it #input" });
  const plain = fleet.sims.createThread(sim, { title: "Resting", text: "hello" });
  await expect(agentRow(page, sim.environmentId, edited).getByTestId("changes-tag")).toHaveText(/^2 files/);
  await expect(agentRow(page, sim.environmentId, asking)).toHaveAttribute("data-status", "needs-input");
  await expect(agentRow(page, sim.environmentId, plain)).toHaveAttribute("data-status", "idle");
  const hints = page.getByTestId("key-hints");
  await expect(hints).toBeVisible();

  await agentRow(page, sim.environmentId, edited).locator(".agent-title").click();
  await expect(page.getByTestId("agent-panel").locator("h2")).toHaveText("Refactor the store");
  await expect(hints.locator('[data-command="agent.diff"]')).toHaveText("c diff");
  expect(await hintedCommands(page)).not.toContain("agent.answer");

  await agentRow(page, sim.environmentId, asking).locator(".agent-title").click();
  await expect(page.getByTestId("agent-panel").locator("h2")).toHaveText("Draft the changelog");
  await expect(hints.locator('[data-command="agent.answer"]')).toHaveText("r answer");
  expect(await hintedCommands(page)).not.toContain("agent.diff");

  await agentRow(page, sim.environmentId, plain).locator(".agent-title").click();
  await expect(page.getByTestId("agent-panel").locator("h2")).toHaveText("Resting");
  await expect(hints.locator('[data-command="agent.message"]')).toHaveText("m message");
  const shown = await hintedCommands(page);
  expect(shown).not.toContain("agent.diff");
  expect(shown).not.toContain("agent.answer");
  // Every key the registry would answer here is listed, and Esc goes back.
  for (const id of ["fleet.down", "fleet.next-needs-you", "view.toggle", "fleet.search", "agent.open-in-t3", "palette.open", "escape"])
    expect(shown).toContain(id);
});

/** The hints the bar lists, as a user reads them ("e reviewed"). */
async function hintTexts(page: Page): Promise<string[]> {
  return page.getByTestId("key-hint").evaluateAll((hints) => hints.map((hint) => (hint.textContent ?? "").trim()));
}

/** The hint for this command is in the bar and, scrolled to, inside what the bar shows. */
async function expectHintReachable(page: Page, command: string, words: string): Promise<void> {
  const hint = page.getByTestId("key-hints").locator(`[data-command="${command}"]`);
  await expect(hint, command).toHaveText(words);
  await hint.scrollIntoViewIfNeeded();
  const bar = await box(page.getByTestId("key-hints"));
  const shown = await box(hint);
  expect(shown.x, `${words}: inside the bar`).toBeGreaterThanOrEqual(bar.x - 1);
  expect(shown.x + shown.width, `${words}: inside the bar`).toBeLessThanOrEqual(bar.x + bar.width + 1);
}

for (const size of [WIDE, PHONE]) {
  test(`at ${size.width}×${size.height}: the hint bar lists every key the view answers — n, e, c, r, the decisions and Esc where they apply`, async ({
    page,
    fleet,
  }) => {
    await page.setViewportSize(size);
    const sim = fleet.sims.servers[0]!;
    const deploy = fleet.sims.createThread(sim, { title: "Deploy the release", text: "Deploy #approval" });
    const asking = fleet.sims.createThread(sim, { title: "Draft the changelog", text: "Draft it #input" });
    await expect.poll(() => sim.engine.threads.get(deploy)?.pendingApprovals.size).toBe(1);
    await fleet.pairAll();
    await fleet.service.request("settings.update", { finishedWithChangesInInbox: true });
    await page.goto(fleet.shell.url);
    await page.getByTestId("view-inbox").click();
    await expect(agentRow(page, sim.environmentId, asking)).toHaveCount(0); // the inbox, not the tree
    await expect(page.getByTestId("inbox-row")).toHaveCount(2);
    // Started while the fleet watches, so its turn's changes are read as it ends: a review item.
    fleet.sims.createThread(sim, { title: "Refactor the store", provider: "codex", text: "Refactor #edit:3" });
    await expect(page.getByTestId("inbox-row")).toHaveCount(3);
    const bar = page.getByTestId("key-hints");
    await expect(bar).toBeVisible();
    // One line at every width: the bar never takes the transcript's room.
    expect((await box(bar)).height, "the hint bar is one line").toBeLessThanOrEqual(size.width > 1000 ? 24 : 32);
    expect((await box(bar)).width).toBeLessThanOrEqual(size.width);

    // The inbox: the list's keys, n first among them.
    await expectHintReachable(page, "fleet.next-needs-you", "n next");
    await expectHintReachable(page, "fleet.search", "/ search");
    await expectHintReachable(page, "view.toggle", "v inbox/fleet");
    expect(await hintTexts(page)).not.toContain("Esc back");

    const panel = page.getByTestId("agent-panel");
    const open = async (title: string) => {
      if (await panel.count()) await page.keyboard.press("Escape");
      await expect(panel).toHaveCount(0);
      await page.getByTestId("inbox-row").filter({ hasText: title }).click();
      await expect(panel.locator("h2")).toHaveText(title);
    };

    // An approval: its decisions, and Esc back.
    await open("Deploy the release");
    for (const [command, words] of [
      ["agent.accept", "a allow"],
      ["agent.decline", "d deny"],
      ["fleet.next-needs-you", "n next"],
      ["escape", "Esc back"],
    ] as const)
      await expectHintReachable(page, command, words);
    expect(await hintTexts(page)).not.toContain("r answer");

    // A question: r answers it.
    await open("Draft the changelog");
    for (const [command, words] of [
      ["agent.answer", "r answer"],
      ["fleet.next-needs-you", "n next"],
      ["escape", "Esc back"],
    ] as const)
      await expectHintReachable(page, command, words);
    expect(await hintTexts(page)).not.toContain("a allow");

    // Finished with changes: e marks them reviewed, c shows the diff.
    await open("Refactor the store");
    for (const [command, words] of [
      ["agent.mark-reviewed", "e reviewed"],
      ["agent.diff", "c diff"],
      ["fleet.next-needs-you", "n next"],
      ["escape", "Esc back"],
    ] as const)
      await expectHintReachable(page, command, words);
    expect(await hintTexts(page)).not.toContain("r answer");
    // The agent's own keys come first, so a narrow window shows them before any scrolling.
    await bar.evaluate((element) => element.scrollTo({ left: 0 }));
    const start = await box(bar);
    for (const command of ["agent.mark-reviewed", "agent.diff"]) {
      const hint = await box(bar.locator(`[data-command="${command}"]`));
      expect(hint.x + hint.width, `${command} shown without scrolling`).toBeLessThanOrEqual(start.x + start.width);
    }
    // A bar wider than the window takes focus, so a keyboard reaches its end.
    const scrolls = await bar.evaluate((element) => element.scrollWidth > element.clientWidth + 1);
    if (scrolls) await expect(bar).toHaveAttribute("tabindex", "0");
    else await expect(bar).not.toHaveAttribute("tabindex");
  });
}

for (const size of [WIDE, PHONE]) {
  test(`at ${size.width}×${size.height}: a question's choices are at most two Tabs from the agent's heading, an approval's decisions one`, async ({
    page,
    fleet,
  }) => {
    await page.setViewportSize(size);
    const sim = fleet.sims.servers[0]!;
    const asking = fleet.sims.createThread(sim, { title: "Draft the changelog", text: "Draft it #input" });
    await online(page, fleet);
    await expect(agentRow(page, sim.environmentId, asking)).toHaveAttribute("data-status", "needs-input");
    await page.keyboard.press("n");
    const heading = page.getByTestId("agent-panel").locator("h2");
    await expect(heading).toHaveText("Draft the changelog");
    await expect(heading).toBeFocused();
    const choices = page.getByTestId("input-card").getByRole("radio");
    await expect(choices.first()).toBeVisible();
    let tabs = 0;
    while (tabs < 2 && !(await choices.first().evaluate((choice) => choice === document.activeElement))) {
      await page.keyboard.press("Tab");
      tabs++;
    }
    await expect(choices.first()).toBeFocused();
    // r also goes straight to the answer.
    await heading.focus();
    await page.keyboard.press("r");
    await expect(page.getByTestId("input-card").locator(":focus")).toHaveCount(1);
  });
}

test("at 390×844 a row's title and its metadata are both shown: the changes and the time never cut the title", async ({ page, fleet }) => {
  await page.setViewportSize(PHONE);
  await online(page, fleet);
  const sim = fleet.sims.servers[0]!;
  const v2 = fleet.sims.v2Servers[0]!;
  const edited = fleet.sims.createThread(sim, { title: "Coordinate the sweep", provider: "codex", text: "Sweep #edit:3" });
  const parent = fleet.sims.createThread(sim, { title: "Plan the auth refactor", text: "Plan it" });
  const child = fleet.sims.spawnChild(sim, parent, "docs", "Update the docs #edit:1");
  const tidy = createV2Thread(v2, { title: "Tidy the config loader", provider: "codex", text: "Tidy the config loader #edit:3" });
  for (const [env, thread] of [
    [sim.environmentId, edited],
    [sim.environmentId, child],
    [v2.environmentId, tidy],
  ] as const) {
    const row = agentRow(page, env, thread);
    await row.scrollIntoViewIfNeeded();
    const title = row.locator(".agent-title");
    const tag = row.getByTestId("changes-tag");
    await expect(tag).toBeVisible();
    const fits = await title.evaluate((element) => element.scrollWidth <= element.clientWidth);
    const titleBox = await box(title);
    const tagBox = await box(tag);
    const rowBox = await box(row);
    const name = await title.getAttribute("title");
    // The title is shown whole (or, longer than the line, takes the whole line: cut by its length, not by its metadata).
    if (!fits) expect(titleBox.width, `${name}: cut though it has room`).toBeGreaterThanOrEqual(rowBox.width * 0.45);
    if ((name ?? "").length <= 24) expect(fits, `${name}: shown whole`).toBe(true);
    expect(overlap(titleBox, tagBox), `${name}: title and changes apart`).toBe(false);
    expect(tagBox.x + tagBox.width, `${name}: its changes within the window`).toBeLessThanOrEqual(PHONE.width);
    expect(tagBox.y + tagBox.height, `${name}: its changes within its row`).toBeLessThanOrEqual(rowBox.y + rowBox.height);
  }
});

for (const size of [WIDE, PHONE]) {
  test(`at ${size.width}×${size.height}: the confirmation of an action never covers the composer's Send row`, async ({ page, fleet }) => {
    await page.setViewportSize(size);
    const sim = fleet.sims.servers[0]!;
    for (const title of ["Deploy", "Cleanup"]) {
      const thread = fleet.sims.createThread(sim, { title, text: "#approval" });
      await expect.poll(() => sim.engine.threads.get(thread)?.pendingApprovals.size).toBe(1);
    }
    await online(page, fleet);
    await page.keyboard.press("n");
    const panel = page.getByTestId("agent-panel");
    await expect(panel.locator("h2")).toHaveText("Deploy");
    await page.keyboard.press("a");
    await expect(page.getByTestId("action-confirmation-text")).toHaveText(/^Approved .* for Deploy/);
    const confirmation = page.getByTestId("action-confirmation");
    const send = page.getByTestId("composer").getByTestId("send");
    const sendRow = await send.evaluate((button) => {
      const row = button.parentElement!.getBoundingClientRect();
      return { x: row.x, y: row.y, width: row.width, height: row.height };
    });
    expect(overlap(await box(confirmation), sendRow), "the confirmation over the Send row").toBe(false);
    // What is under the Send button's middle is the Send button.
    const sendBox = await box(send);
    const hit = await page.evaluate(
      ([x, y]) => document.elementFromPoint(x!, y!)?.closest("[data-testid]")?.getAttribute("data-testid"),
      [sendBox.x + sendBox.width / 2, sendBox.y + sendBox.height / 2],
    );
    expect(hit).toBe("send");
  });
}

for (const size of [WIDE, PHONE]) {
  test(`at ${size.width}×${size.height}: axe-core finds no violation on the fleet, the inbox, an agent, the diff and the usage views`, async ({
    page,
    fleet,
  }) => {
    test.setTimeout(120_000);
    await page.setViewportSize(size);
    await online(page, fleet);
    const sim = fleet.sims.servers[0]!;
    const full = fleet.sims.createThread(sim, { title: "Summarise the build logs", provider: "claudeAgent", text: "Summarise the logs #edit:1 #nearfull" });
    const planner = fleet.sims.createThread(sim, { title: "Plan the auth refactor", text: "Plan it" });
    fleet.sims.spawnChild(sim, planner, "docs", "Update the docs #fail");
    fleet.sims.createThread(sim, { title: "Deploy", text: "#approval" });
    const fullRow = agentRow(page, sim.environmentId, full);
    await expect(fullRow.getByTestId("context-near-limit")).toHaveText("context 95 %");

    // The fleet, with the near-full agent selected.
    await fullRow.click();
    await expect(fullRow).toHaveAttribute("aria-selected", "true");
    expect(await violations(page), "the fleet with a near-full agent selected").toEqual([]);
    // A search: the parent kept for context is dimmed.
    await page.getByRole("searchbox").fill("docs");
    await expect(agentRow(page, sim.environmentId, planner)).toHaveAttribute("data-match", "false");
    expect(await violations(page), "the fleet searched, a parent dimmed").toEqual([]);
    await page.getByRole("searchbox").fill("");
    await page.getByRole("searchbox").press("Escape");

    // The usage view: the fleet's token totals opened.
    await page.getByTestId("usage-totals").locator("summary").click();
    await expect(page.getByTestId("usage-total").first()).toBeVisible();
    expect(await violations(page), "the usage view").toEqual([]);
    await page.getByTestId("usage-totals").locator("summary").click();

    // An agent, then its diff.
    await fullRow.locator(".agent-title").click();
    await expect(page.getByTestId("agent-panel").getByTestId("context-fill")).toBeVisible();
    expect(await violations(page), "the agent view").toEqual([]);
    await page.keyboard.press("c");
    await expect(page.getByTestId("diff-view").getByTestId("diff-lines")).toBeVisible();
    expect(await violations(page), "the diff view").toEqual([]);
    await page.keyboard.press("Escape");
    await expect(page.getByTestId("diff-view")).toHaveCount(0);

    // The inbox.
    await page.getByTestId("view-inbox").click();
    await expect(page.getByTestId("inbox-row")).toHaveCount(2);
    expect(await violations(page), "the inbox").toEqual([]);
  });
}

test("at 1400×900 with seven needs arrived and one open, each need is said once and the transcript keeps 350 px and more", async ({ page, fleet }) => {
  await page.setViewportSize(WIDE);
  await online(page, fleet);
  const [upstream, fork] = fleet.sims.servers as [(typeof fleet.sims.servers)[0], (typeof fleet.sims.servers)[0]];
  const v2 = fleet.sims.v2Servers[0]!;
  // As in the demo: approvals, questions and failures arriving while the window is open, each news.
  const planner = fleet.sims.createThread(upstream, { title: "Plan the auth refactor", provider: "claudeAgent", text: "Plan it" });
  const migration = fleet.sims.spawnChild(upstream, planner, "migration", "Run the migration #approval");
  fleet.sims.spawnChild(upstream, planner, "docs", "Update the docs #fail");
  const dispatcher = fleet.sims.createThread(fork, { title: "Dispatch release chores", provider: "codex", text: "Split the work" });
  fleet.sims.spawnChild(fork, dispatcher, "changelog", "Draft the changelog #input");
  createV2Thread(v2, { title: "Run the integration suite", provider: "claudeAgent", text: "Run the suite #approval" });
  createV2Thread(v2, { title: "Plan the release", provider: "claudeAgent", text: "Plan the release #question" });
  createV2Thread(v2, { title: "Fetch the vendored crates", provider: "codex", text: "Fetch them #fail:transport_error" });
  fleet.sims.createThread(fork, { title: "Ship it", text: "#approval" });
  await expect(page.getByTestId("needs-you-count")).toHaveText("7 need you");
  // One line says what arrived, not a banner per need: the tree and the inbox already list each.
  await expect(page.getByTestId("notice").filter({ has: page.getByTestId("notice-more") })).toHaveCount(1);
  await expect(page.getByTestId("notice-more")).toHaveText("and 6 more in the Inbox");
  expect((await box(page.getByTestId("notices"))).height).toBeLessThan(50);

  const panel = page.getByTestId("agent-panel");
  /** The open agent's transcript height, once its figures and the hint bar are in. */
  const transcriptHeight = async (what: string): Promise<number> => {
    await expect(panel.getByTestId("context-fill")).toBeVisible();
    await expect(page.getByTestId("key-hints")).toBeVisible();
    const height = (await box(panel.getByTestId("transcript"))).height;
    console.log(`1400×900, seven needs, ${what} open: the transcript is ${Math.round(height)} px tall`);
    return height;
  };
  // 350 px is the promise. With an approval open, two lines more is the margin, so one new line above it does not break it.
  const ROOM = 350 + 40;

  await agentRow(page, upstream.environmentId, migration).locator(".agent-title").click();
  await expect(panel.getByTestId("approval-card")).toBeVisible();
  await expect(page.getByTestId("key-hints").locator('[data-command="agent.accept"]')).toBeVisible();
  // The approval is shown whole, its decisions on screen.
  await expect(panel.getByRole("button", { name: /^Allow once/ })).toBeInViewport({ ratio: 1 });
  expect(await transcriptHeight("an approval")).toBeGreaterThanOrEqual(ROOM);

  // A question of two parts is taller: the card shows whole, its Answer on screen, and the transcript still keeps its floor
  // (styles/panes.css: a taller card scrolls in the room left rather than squeeze it).
  await page.getByTestId("agent-row").filter({ hasText: "Plan the release" }).locator(".agent-title").click();
  await expect(panel.locator("h2")).toHaveText("Plan the release");
  await expect(panel.getByTestId("question")).toHaveCount(2);
  expect(await transcriptHeight("a question of two parts")).toBeGreaterThanOrEqual(350 + 10);
  await expect(panel.getByTestId("input-card").getByRole("button", { name: /^Answer/ })).toBeInViewport({ ratio: 1 });
});
