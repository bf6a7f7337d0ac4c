// What an agent changed and what it uses (issue 24), on both protocols: the latest turn's files on
// its row, the diff one key away (c, the registry's "agent.diff"), virtualized for a large change,
// each turn's files and the context fill in the agent view, and the token totals.
import { join } from "node:path";
import type { Locator, Page } from "@playwright/test";
import { createV2Thread } from "../sim/protocol2/fleet-hooks";
import { SCREENSHOTS, agentRow, envRow, expect, test, type Fleet } from "./fixtures";

test.use({ generations: ["upstream", "v2"] });

async function online(page: Page, fleet: Fleet): Promise<void> {
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  for (const sim of [...fleet.sims.servers, ...fleet.sims.v2Servers]) await expect(envRow(page, sim.environmentId)).toHaveAttribute("data-phase", "online");
}

test("protocol 1: the row shows the turn's files, c opens its diff, Esc closes it", async ({ page, fleet }) => {
  await online(page, fleet);
  const sim = fleet.sims.servers[0]!;
  const threadId = fleet.sims.createThread(sim, { title: "Refactor the store", provider: "codex", text: "Refactor #edit:3" });
  const row = agentRow(page, sim.environmentId, threadId);
  await expect(row.getByTestId("changes-tag")).toHaveText(/^3 files \+\d+ −\d+$/);
  await expect(page.getByTestId("usage-totals").locator("summary")).toHaveText(/^Tokens: [\d.]+k tokens T3 reported over 1 of 1 agent · reported /);
  await row.click();
  await page.keyboard.press("c");
  const diff = page.getByTestId("diff-view");
  await expect(diff).toBeVisible();
  await expect(diff.getByTestId("diff-lines")).toContainText("README.md");
  await expect(diff.locator(".diff-add").first()).toBeVisible();
  await page.screenshot({ path: join(SCREENSHOTS, "diff-view.png") });
  await page.keyboard.press("Escape");
  await expect(diff).toBeHidden();
});

test("protocol 2: the agent view lists each turn's files and the context fill; the whole thread's diff opens", async ({ page, fleet }) => {
  await online(page, fleet);
  const v2 = fleet.sims.v2Servers[0]!;
  const threadId = createV2Thread(v2, { title: "Tidy the loader", provider: "codex", text: "Tidy #edit:2" });
  const row = agentRow(page, v2.environmentId, threadId);
  await expect(row.getByTestId("changes-tag")).toHaveText(/^2 files /);
  await row.locator(".agent-title").click();
  const panel = page.getByTestId("agent-panel");
  // Usage and the latest turn's changes are shown unexpanded, a line each; every turn's files in their own fold (issue 40).
  await expect(panel.getByTestId("context-fill")).toHaveText(/^\d+ % of 258k; compaction not reported$/);
  await expect(panel.getByTestId("last-turn-tokens")).toHaveAttribute("title", /tokens \(input/);
  await expect(panel.getByTestId("latest-changes")).toHaveText(/^2 files /);
  const changes = panel.getByTestId("changes-usage");
  await expect(changes.locator("summary")).toHaveText("All turns (1)");
  await changes.locator("summary").click();
  await expect(changes.getByTestId("turn-changes")).toHaveCount(1);
  await expect(changes.getByTestId("changed-files").locator("li")).toHaveCount(2);
  await panel.getByTestId("thread-diff").click();
  await expect(page.getByTestId("diff-view").getByTestId("diff-lines")).toContainText("README.md");
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("diff-view")).toBeHidden();
  await expect(page.getByTestId("usage-totals")).toContainText("Tokens:");
});

test("tokens T3 reported and the context fill are shown and summed apart, saying for how many agents (issue 39)", async ({ page, fleet }) => {
  await online(page, fleet);
  const sim = fleet.sims.servers[0]!;
  fleet.sims.createThread(sim, { title: "Refactor the store", provider: "codex", text: "Refactor #edit:1" });
  const full = fleet.sims.createThread(sim, { title: "Summarise the build logs", provider: "claudeAgent", text: "Summarise the logs #nearfull" });
  const summary = page.getByTestId("usage-totals").locator("summary");
  await expect(summary).toHaveText(/^Tokens: [\d.]+k tokens T3 reported over 2 of 2 agents · report(s from|ed) .* · context now [\d.]+k over 2 of 2 agents$/);
  await agentRow(page, sim.environmentId, full).locator(".agent-title").click();
  const panel = page.getByTestId("agent-panel");
  const figures = panel.getByTestId("usage-line");
  await expect(figures).toContainText("Context fill");
  await expect(panel.getByTestId("context-fill")).toHaveText("95 % of 258k; will not compact");
  // T3 0.0.42's input and output figures are its last model request's: said so, and never shown as the thread's.
  await expect(figures).toContainText("Last model request");
  await expect(panel.getByTestId("last-turn-tokens")).toHaveAttribute("title", /tokens \(input/);
  await expect(figures).toContainText(/Thread [\d.]+k tokens T3 reported/);
  await expect(panel.getByTestId("thread-tokens")).toHaveText(/^[\d.]+k tokens$/);
});

/** Scrolls the diff by each step (px), a frame apart, then says which added lines are in the page and where the first of them sits in the content. */
async function scrollDiff(lines: Locator, steps: number[]) {
  return lines.evaluate(async (element, deltas) => {
    for (const delta of deltas) {
      element.scrollTop += delta;
      await new Promise((frame) => requestAnimationFrame(frame));
    }
    const rows = [...element.querySelectorAll<HTMLElement>(".diff-add")];
    const firstTop = rows[0] ? rows[0].getBoundingClientRect().top - element.getBoundingClientRect().top - element.clientTop + element.scrollTop : -1;
    return {
      numbers: rows.map((row) => Number(row.querySelectorAll(".diff-number")[1]!.textContent)),
      firstTop,
      scrollTop: element.scrollTop,
      viewHeight: element.clientHeight,
    };
  }, steps);
}

test("a diff of 10,000 lines mounts only the lines in view, each in its place wherever it is scrolled, coloured once the scroll rests", async ({
  page,
  fleet,
}) => {
  await online(page, fleet);
  const sim = fleet.sims.servers[0]!;
  const threadId = fleet.sims.createThread(sim, { title: "Generate the table", provider: "codex", text: "Generate #bigdiff" });
  const row = agentRow(page, sim.environmentId, threadId);
  await expect(row.getByTestId("changes-tag")).toHaveText("1 file +10000 −0");
  await row.click();
  await page.keyboard.press("c");
  const lines = page.getByTestId("diff-lines");
  await expect(lines).toContainText("table-1.ts");
  await expect(lines.locator(".diff-add .hljs-keyword").first()).toHaveText("export");
  expect(await lines.locator(".diff-line").count()).toBeLessThan(200);
  // Down and back up a few lines at a time, then a page at a time, then a jump: the added lines in the page are consecutive,
  // cover the view, and each sits at its own line's height (the file's header, four meta lines and the hunk come first).
  const LINE_PX = 18;
  for (const steps of [[5, 40, 90, 18, 300], [-7, -100, -18], [700, 700, -700, 700], [90_000], [-3, 4_000, -80_000]]) {
    const shown = await scrollDiff(lines, steps);
    expect(shown.numbers.length).toBeGreaterThan(0);
    expect(shown.numbers).toEqual(shown.numbers.map((_, index) => shown.numbers[0]! + index));
    expect(shown.firstTop).toBe((shown.numbers[0]! + 5) * LINE_PX);
    expect(shown.numbers[0]!).toBeLessThanOrEqual(Math.max(1, Math.floor(shown.scrollTop / LINE_PX) - 5));
    expect(shown.numbers.at(-1)!).toBeGreaterThanOrEqual(Math.min(10_000, Math.ceil((shown.scrollTop + shown.viewHeight) / LINE_PX) - 6));
    expect(shown.numbers.length).toBeLessThan(shown.viewHeight / LINE_PX + 2 * 8 + 2);
  }
  // Lines that came into view while scrolling are coloured once it rests.
  const middle = lines.locator(".diff-add").filter({ hasText: /step 5000$/ });
  await lines.evaluate((element) => (element.scrollTop = 5004 * 18 - 100));
  await expect(middle.locator(".hljs-keyword")).toHaveText(["export", "const"]);
  await lines.evaluate((element) => (element.scrollTop = element.scrollHeight));
  await expect(lines).toContainText("step 10000");
  await lines.evaluate((element) => (element.scrollTop = 0));
  await expect(lines.locator(".diff-file")).toHaveText("src/generated/table-1.ts");
});

test("a diff line holding bidi or control characters shows each as a marker and is flagged, so the code reads in the order it runs (issue 43)", async ({
  page,
  fleet,
}) => {
  await online(page, fleet);
  const sim = fleet.sims.servers[0]!;
  const threadId = fleet.sims.createThread(sim, { title: "Guard the admin page", provider: "codex", text: "Guard it #trojan" });
  const row = agentRow(page, sim.environmentId, threadId);
  await expect(row.getByTestId("changes-tag")).toHaveText("1 file +2 −1");
  await row.click();
  await page.keyboard.press("c");
  const diff = page.getByTestId("diff-view");
  await expect(diff.getByTestId("diff-hidden-warning")).toContainText("2 lines hold bidi or control characters");
  const flagged = diff.getByTestId("diff-flagged-line");
  await expect(flagged).toHaveCount(2);
  await expect(flagged.first().getByTestId("diff-hidden-char")).toHaveText(["<U+202E>", "<U+2066>", "<U+2069>", "<U+2066>"]);
  await expect(flagged.first()).toContainText("if (isAdmin)");
  await expect(flagged.first()).toHaveAttribute("title", /U\+202E RIGHT-TO-LEFT OVERRIDE/);
  await expect(flagged.nth(1).getByTestId("diff-hidden-char")).toHaveText(["<U+001B>"]);
  // The lines around them are not flagged, and nothing the page shows can reorder or control what is read.
  await expect(diff.locator(".diff-line:not(.diff-flagged)").filter({ hasText: "let isAdmin = false;" })).toHaveCount(1);
  expect(await diff.getByTestId("diff-lines").innerText()).not.toMatch(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\x00-\x08\x0b-\x1f\x7f-\x9f]/); // eslint-disable-line no-control-regex -- finding them is the point
  await page.screenshot({ path: join(SCREENSHOTS, "diff-hidden-characters.png") });
});

test("the changes and usage settings are the service's, kept across a reload; an agent near its limit that will not compact notifies once", async ({
  page,
  fleet,
}) => {
  await online(page, fleet);
  const sim = fleet.sims.servers[0]!;
  const threadId = fleet.sims.createThread(sim, { title: "Refactor the store", provider: "codex", text: "Refactor #edit:3" });
  const row = agentRow(page, sim.environmentId, threadId);
  await expect(row.getByTestId("changes-tag")).toHaveText(/^3 files /);
  // Off by default: the finished agent is not an inbox item.
  await page.getByTestId("view-inbox").click();
  await expect(page.getByTestId("inbox-empty")).toBeVisible();
  await page.getByTestId("open-settings").click();
  await page.getByTestId("finished-with-changes").check();
  const percent = page.getByTestId("context-warning-percent");
  await percent.fill("80");
  await percent.blur();
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("inbox")).toContainText("finished: 3 files changed");
  await expect.poll(() => fleet.service.request("settings.update", {})).toMatchObject({ finishedWithChangesInInbox: true, contextWarningPercent: 80 });
  // A reload asks the service again: the settings stay.
  await page.reload();
  await page.getByTestId("view-inbox").click();
  await expect(page.getByTestId("inbox")).toContainText("finished: 3 files changed");
  await page.getByTestId("open-settings").click();
  await expect(page.getByTestId("finished-with-changes")).toBeChecked();
  await expect(page.getByTestId("context-warning-percent")).toHaveValue("80");
  await page.keyboard.press("Escape");
  // The service notifies when the agent reaches its limit, once; the window shows it as a notice.
  await page.getByTestId("view-fleet").click();
  fleet.sims.sendMessage(sim, threadId, "Keep going #nearfull");
  await expect(row.getByTestId("context-near-limit")).toBeVisible();
  await expect(page.getByTestId("notice").filter({ hasText: "Refactor the store is near its context limit" })).toHaveCount(1);
});
