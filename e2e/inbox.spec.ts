// Triage at speed (the inbox, search that reaches its match, the agent view that keeps the
// transcript and composer in sight), at the four window sizes people use.
import { join } from "node:path";
import type { Locator, Page } from "@playwright/test";
import { tapBridge } from "./bridge-tap";
import { docScreenshot } from "./doc-screenshots";
import { SCREENSHOTS, agentRow, expect, test } from "./fixtures";
import { SIZES } from "./sizes";

/** The whole element lies inside the window: nothing the user needs is below the fold. */
async function expectInWindow(page: Page, locator: Locator, what: string): Promise<void> {
  const box = await locator.boundingBox();
  const viewport = page.viewportSize()!;
  expect(box, `${what} is rendered`).not.toBeNull();
  expect(box!.y, `${what} starts inside the window`).toBeGreaterThanOrEqual(0);
  expect(box!.y + box!.height, `${what} ends inside the window (${viewport.height} px)`).toBeLessThanOrEqual(viewport.height + 1);
  expect(box!.x + box!.width, `${what} fits the width`).toBeLessThanOrEqual(viewport.width + 1);
}

const LONG_REQUEST = Array.from({ length: 40 }, (_, i) => `Step ${i + 1} of the release plan: check the ${i % 2 ? "API" : "docs"} and note what changed.`).join(
  "\n\n",
);

test.describe("the inbox", () => {
  test.use({ startPane: "auto" });

  for (const size of SIZES) {
    test(`opens first when agents need you, oldest first with its position, and advances after each answer at ${size.name}`, async ({ page, fleet }) => {
      await page.setViewportSize({ width: size.width, height: size.height });
      const [studio, fork, build] = fleet.sims.servers as [(typeof fleet.sims.servers)[0], (typeof fleet.sims.servers)[0], (typeof fleet.sims.servers)[0]];
      // Created one after the other so that each waits longer than the next.
      const deploy = fleet.sims.createThread(studio, { title: "Deploy the release", text: `${LONG_REQUEST}\n\n#approval` });
      await expect.poll(() => studio.engine.threads.get(deploy)?.pendingApprovals.size).toBe(1);
      const migrate = fleet.sims.createThread(fork, { title: "Migrate the database", text: "#input" });
      await expect.poll(() => fork.engine.threads.get(migrate)?.pendingUserInputs.size).toBe(1);
      const nightly = fleet.sims.createThread(build, { title: "Nightly build", text: "#fail" });
      fleet.sims.createThread(build, { title: "Idle helper" });
      await fleet.pairAll();
      const tap = await tapBridge(page);
      await page.goto(fleet.shell.url);

      const inbox = page.getByTestId("inbox");
      const items = inbox.getByTestId("inbox-row");
      await expect(page.getByTestId("view-inbox")).toHaveAttribute("aria-pressed", "true");
      // Only what needs the user, across machines, waiting longest first.
      await expect(items).toHaveCount(3);
      await expect(items.nth(2)).toHaveAttribute("data-status", "failed");
      expect(await items.evaluateAll((rows) => rows.map((row) => row.getAttribute("data-key")))).toEqual([
        `${studio.environmentId}/${deploy}`,
        `${fork.environmentId}/${migrate}`,
        `${build.environmentId}/${nightly}`,
      ]);
      await expect(inbox.getByTestId("inbox-position")).toHaveText("3 need you");

      // n opens the first; the agent view says where it is in the inbox and keeps the transcript,
      // the approval card (command, folder) and the composer in the window.
      await page.keyboard.press("n");
      const panel = page.getByTestId("agent-panel");
      await expect(panel.locator("h2")).toHaveText("Deploy the release");
      await expect(panel.locator("h2")).toBeFocused();
      await expect(panel.getByTestId("panel-position")).toHaveText("1 of 3");
      const card = page.getByTestId("approval-card");
      await expect(card.getByTestId("approval-command")).toHaveText("npm test");
      await expect(card.getByTestId("approval-folder")).not.toBeEmpty();
      await expect(page.getByTestId("transcript").getByTestId("message-user")).toContainText("Step 40 of the release plan");
      await expectInWindow(page, card.getByRole("button", { name: /^Allow once/ }).first(), "the Allow once button");
      await expectInWindow(page, page.getByTestId("transcript"), "the transcript");
      expect((await page.getByTestId("transcript").boundingBox())!.height, "the transcript has room to read").toBeGreaterThanOrEqual(
        size.height >= 820 ? 200 : 90,
      );
      await expectInWindow(page, page.getByTestId("composer").getByRole("textbox"), "the message box");
      await expectInWindow(page, page.getByTestId("send"), "the Send button");
      await expect(page.getByTestId("composer-target")).toContainText("Deploy the release");
      await page.screenshot({ path: join(SCREENSHOTS, `inbox-agent-${size.name}.png`) });
      if (size.name === "1400x900") await docScreenshot(page, "inbox.png");
      if (size.name === "1280x820") await docScreenshot(page, "agent-view.png");

      // a approves what is on the card; the next item opens by itself.
      await page.keyboard.press("a");
      await expect(panel.locator("h2")).toHaveText("Migrate the database");
      await expect(panel.getByTestId("panel-position")).toHaveText("1 of 2");
      expect(tap.sent.filter((r) => r.method === "agent.respondApproval").map((r) => (r.params as { key: string }).key)).toEqual([
        `${studio.environmentId}/${deploy}`,
      ]);

      // An answer: the next opens.
      await page.keyboard.press("r");
      await page.getByTestId("input-card").getByLabel("users").check();
      await page
        .getByTestId("input-card")
        .getByRole("button", { name: /^Answer/ })
        .click();
      await expect(panel.locator("h2")).toHaveText("Nightly build");
      await expect(panel.getByTestId("panel-position")).toHaveText("1 of 1");

      // Acknowledging the failure empties the inbox; the failure stays in the fleet, dimmed as seen.
      await page.keyboard.press("x");
      await expect(panel).toHaveCount(0);
      await expect(page.getByTestId("inbox-empty")).toContainText("You are all caught up");
      await expect(page.getByTestId("view-inbox")).toContainText("0");
      await page.getByTestId("view-fleet").click();
      const failed = agentRow(page, build.environmentId, nightly);
      await expect(failed).toHaveClass(/acknowledged/);
      await expect(failed.locator(".chip")).toHaveText("failed · seen");
      const machine = page.locator(`[data-testid="env-row"][data-environment="${build.environmentId}"]`);
      await expect(machine.getByTestId("count-acknowledged")).toHaveText("1 failed, seen");
      await expect(machine.getByTestId("count-failed")).toHaveCount(0);
    });
  }

  test("snoozing puts an agent aside until what it needs changes, and the next item opens", async ({ page, fleet }) => {
    const sim = fleet.sims.servers[0]!;
    const first = fleet.sims.createThread(sim, { title: "Reviewer", text: "#approval" });
    await expect.poll(() => sim.engine.threads.get(first)?.pendingApprovals.size).toBe(1);
    fleet.sims.createThread(sim, { title: "Writer", text: "#input" });
    await fleet.pairAll();
    await page.goto(fleet.shell.url);
    await expect(page.getByTestId("inbox-row")).toHaveCount(2);
    await page.keyboard.press("n");
    await expect(page.getByTestId("agent-panel").locator("h2")).toHaveText("Reviewer");
    await page.getByTestId("snooze").click();
    await expect(page.getByTestId("agent-panel").locator("h2")).toHaveText("Writer");
    await expect(page.getByTestId("inbox-row")).toHaveCount(1);
    await expect(page.getByTestId("inbox")).toContainText("1 snoozed");
    // Snoozed is counted apart (shared/fleet/needs.ts): the header, the badge and the tab count what needs you now.
    await expect(page.getByTestId("needs-you-count")).toHaveText("1 needs you");
    await expect(page.getByTestId("inbox-count")).toHaveText("1");
  });

  test("snoozing for an hour goes to T3 where the server has snooze, says where it is kept, and a snooze made in T3 hides an agent too", async ({
    page,
    fleet,
  }) => {
    const sim = fleet.sims.servers[0]!; // an upstream server: its descriptor advertises threadSnooze
    const reviewer = fleet.sims.createThread(sim, { title: "Reviewer", text: "#approval" });
    await expect.poll(() => sim.engine.threads.get(reviewer)?.pendingApprovals.size).toBe(1);
    const nightly = fleet.sims.createThread(sim, { title: "Nightly build", text: "#fail" });
    await expect.poll(() => sim.engine.threads.get(nightly)?.session?.status).toBe("error");
    const elsewhere = fleet.sims.createThread(sim, { title: "Snoozed elsewhere", text: "#fail" });
    await expect.poll(() => sim.engine.threads.get(elsewhere)?.session?.status).toBe("error");
    await fleet.pairAll();
    await page.goto(fleet.shell.url);
    const items = page.getByTestId("inbox-row");
    await expect(items).toHaveCount(3);

    // Snoozed in T3's own UI (or by another fleet window): it leaves this inbox too.
    sim.engine.dispatch({
      type: "thread.snooze",
      commandId: "snoozed-in-t3",
      threadId: elsewhere,
      snoozedUntil: new Date(Date.now() + 3_600_000).toISOString(),
    });
    await expect(items).toHaveCount(2);
    await expect(page.getByTestId("inbox")).toContainText("1 snoozed");

    // T3 refuses to snooze a thread waiting on an approval: the window keeps it and says so.
    await page.keyboard.press("n");
    const panel = page.getByTestId("agent-panel");
    await expect(panel.locator("h2")).toHaveText("Reviewer");
    await panel.getByTestId("snooze-hour").click();
    await expect(panel.locator("h2")).toHaveText("Nightly build");
    // A failure T3 can snooze: snoozed on the server, where every client sees it.
    await panel.getByTestId("snooze-hour").click();
    await expect.poll(() => sim.engine.threads.get(nightly)?.snoozedUntil ?? null).not.toBeNull();
    await expect(items).toHaveCount(0);
    await expect(page.getByTestId("inbox")).toContainText("3 snoozed");

    await page.getByTestId("view-fleet").click();
    await agentRow(page, sim.environmentId, nightly).locator(".agent-title").click();
    await expect(page.getByTestId("snoozed")).toHaveText(/^Snoozed on the server until \d\d:\d\d/);
    await agentRow(page, sim.environmentId, reviewer).locator(".agent-title").click();
    await expect(page.getByTestId("snoozed")).toHaveText(/^Snoozed by T3 Fleet until \d\d:\d\d( [AP]M)? \(T3 refused it: .*pending approval/);
    await agentRow(page, sim.environmentId, elsewhere).locator(".agent-title").click();
    await expect(page.getByTestId("snoozed")).toHaveText(/^Snoozed on the server until/);
  });
});

for (const size of SIZES) {
  test(`search, ↓, Enter, message reaches the match (not the parent kept for context) at ${size.name}`, async ({ page, fleet }) => {
    await page.setViewportSize({ width: size.width, height: size.height });
    const sim = fleet.sims.servers[0]!;
    const parent = fleet.sims.createThread(sim, { title: "Plan the release" });
    const child = fleet.sims.spawnChild(sim, parent, "changelog", "Draft the notes");
    fleet.sims.createThread(fleet.sims.servers[1]!, { title: "Unrelated work" });
    await fleet.pairAll();
    const tap = await tapBridge(page);
    await page.goto(fleet.shell.url);
    await expect(agentRow(page, sim.environmentId, child)).toHaveAttribute("data-status", "idle");

    await page.keyboard.press("/");
    await page.keyboard.type("changelog");
    // The parent stays for context, unmarked and not selectable; the match is marked and selected.
    const parentRow = agentRow(page, sim.environmentId, parent);
    const childRow = agentRow(page, sim.environmentId, child);
    await expect(parentRow).toHaveAttribute("data-match", "false");
    await expect(parentRow.getByTestId("match")).toHaveCount(0);
    await expect(childRow.getByTestId("match")).toHaveText("changelog");
    await expect(childRow).toHaveAttribute("aria-selected", "true");
    await page.keyboard.press("ArrowDown");
    await expect(page.getByTestId("fleet-tree")).toBeFocused();
    await expect(childRow).toHaveAttribute("aria-selected", "true");
    await expect(page.getByTestId("fleet-tree")).toHaveAttribute("aria-activedescendant", (await childRow.getAttribute("id"))!);
    await page.keyboard.press("Enter");
    const panel = page.getByTestId("agent-panel");
    await expect(panel.locator("h2")).toHaveText("changelog (child of Plan the release)");
    await page.keyboard.press("m");
    await expect(page.getByTestId("composer").getByRole("textbox")).toBeFocused();
    // The target is named beside Send: the agent and its machine.
    const target = page.getByTestId("composer-target");
    await expect(target).toContainText("changelog (child of Plan the release)");
    await expect(target).toContainText(sim.label);
    await expect(page.getByTestId("send")).toHaveAccessibleName(`Send to changelog (child of Plan the release) on ${sim.label}`);
    await page.keyboard.type("add the 0.2 notes");
    await page.keyboard.press("Enter");
    await expect(page.getByTestId("delivery").last()).toContainText("add the 0.2 notes");
    expect(tap.sent.filter((r) => r.method === "agent.send").map((r) => (r.params as { key: string }).key)).toEqual([`${sim.environmentId}/${child}`]);
    await expect.poll(() => sim.engine.threads.get(parent)!.messages.filter((m) => m.role === "user").length).toBe(0);

    // Enter in the search box opens the first match too.
    await page.keyboard.press("Escape");
    await page.keyboard.press("Escape");
    await page.getByLabel("Search").fill("changelog");
    await page.getByLabel("Search").press("Enter");
    await expect(panel.locator("h2")).toHaveText("changelog (child of Plan the release)");
  });
}

test("empty states: a search or filter with no result says so and clears; removing the filtered machine resets the filter", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[2]!;
  fleet.sims.createThread(sim, { title: "Worker" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  await expect(page.getByTestId("agent-row")).toHaveCount(1);
  await page.getByLabel("Search").fill("nothing like this");
  await expect(page.getByTestId("empty-filter")).toContainText("No agent matches “nothing like this”");
  await page.getByTestId("empty-filter").getByRole("button", { name: "Clear the search and filters" }).click();
  await expect(page.getByLabel("Search")).toHaveValue("");
  await expect(page.getByTestId("agent-row")).toHaveCount(1);

  await page.getByLabel("Machine").selectOption(sim.environmentId);
  await expect(page.getByTestId("env-row")).toHaveCount(1);
  await fleet.service.request("environment.remove", { environmentId: sim.environmentId });
  await expect(page.getByLabel("Machine")).toHaveValue("");
  await expect(page.getByTestId("env-row")).toHaveCount(2);
});

test("Ctrl+K finds agents and machines as well as commands", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const threadId = fleet.sims.createThread(sim, { title: "Refactor the parser" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  await expect(agentRow(page, sim.environmentId, threadId)).toBeVisible();
  await page.keyboard.press("Control+k");
  const palette = page.getByTestId("command-palette");
  await palette.getByLabel("Command").fill("parser");
  await expect(palette.locator('[data-kind="agent"]')).toContainText("Refactor the parser");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("agent-panel").locator("h2")).toHaveText("Refactor the parser");
  await page.keyboard.press("Control+k");
  await palette.getByLabel("Command").fill(sim.label);
  await palette.locator('[data-kind="machine"]').click();
  await expect(page.getByLabel("Machine")).toHaveValue(sim.environmentId);
});

test("the tree is one Tab stop: arrows move, aria-activedescendant follows, focus comes back after Esc", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  for (const title of ["Alpha", "Bravo", "Charlie"]) fleet.sims.createThread(sim, { title });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  await expect(page.getByTestId("agent-row")).toHaveCount(3);
  const tree = page.getByTestId("fleet-tree");
  const tabbable = await tree.evaluate(
    (element) =>
      [element, ...element.querySelectorAll<HTMLElement>("*")].filter(
        (node) => node instanceof HTMLElement && node.tabIndex >= 0 && !node.hasAttribute("disabled"),
      ).length,
  );
  expect(tabbable).toBe(1);
  await tree.focus();
  const active = async () => tree.getAttribute("aria-activedescendant");
  await expect.poll(active).not.toBeNull();
  const first = await active();
  await page.keyboard.press("ArrowDown");
  await expect.poll(active).not.toBe(first);
  const second = (await active())!;
  await expect(page.locator(`[id="${second}"]`)).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("agent-panel").locator("h2")).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(tree).toBeFocused();
  await expect(tree).toHaveAttribute("aria-activedescendant", second);
});

test("actions say what they do: stop asks first, keys show on buttons, Copy confirms", async ({ page, fleet, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  const sim = fleet.sims.servers[0]!; // upstream protocol 1: has a session stop
  const threadId = fleet.sims.createThread(sim, { title: "Long runner", text: "#hang" });
  await fleet.pairAll();
  const tap = await tapBridge(page);
  await page.goto(fleet.shell.url);
  await expect(agentRow(page, sim.environmentId, threadId)).toHaveAttribute("data-status", "running");
  await agentRow(page, sim.environmentId, threadId).getByRole("button", { name: "Long runner" }).click();
  await expect(page.getByTestId("interrupt")).toContainText("i");
  await expect(page.getByTestId("interrupt")).toHaveAttribute("title", /queued behind it then start/);
  await page.getByTestId("stop").click();
  await expect(page.getByTestId("stop-confirm")).toBeVisible();
  // A destructive question opens on its safe answer, and answering it safely puts focus back.
  await expect(page.getByRole("button", { name: "Keep it" })).toBeFocused();
  expect(tap.sent.some((r) => r.method === "agent.stop")).toBe(false);
  await page.getByRole("button", { name: "Keep it" }).click();
  await expect(page.getByTestId("stop-confirm")).toHaveCount(0);
  await expect(page.getByTestId("stop")).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("button", { name: "Keep it" })).toBeFocused();
  // Esc keeps the session (and the agent open).
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("stop-confirm")).toHaveCount(0);
  await expect(page.getByTestId("stop")).toBeFocused();
  await expect(page.getByTestId("agent-panel")).toBeVisible();
  expect(tap.sent.some((r) => r.method === "agent.stop")).toBe(false);
  await page.getByTestId("agent-details").locator("summary").click();
  await page.getByTestId("copy").click();
  await expect(page.getByTestId("copy")).toHaveText("Copied ✓");
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(threadId);
});

test("an offline machine's agent keeps its transcript readable, as of when; Open in T3 says why it cannot", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const threadId = fleet.sims.createThread(sim, { title: "Writer", text: "Write the summary #approval" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  const row = agentRow(page, sim.environmentId, threadId);
  await expect(row).toHaveAttribute("data-status", "needs-approval");
  await row.getByRole("button", { name: "Writer" }).click();
  const transcript = page.getByTestId("transcript");
  await expect(transcript.getByTestId("message-user")).toContainText("Write the summary");
  await sim.kill();
  await expect(row).toHaveAttribute("data-status", "unknown");
  await expect(page.getByTestId("offline-banner")).toContainText("is not online");
  await expect(page.getByTestId("offline-banner")).toContainText("last confirmed");
  await expect(page.getByTestId("offline-banner")).toContainText("Last known: needs approval");
  await expect(
    page
      .getByTestId("approval-card")
      .getByRole("button", { name: /^Allow once/ })
      .first(),
  ).toBeDisabled();
  await expect(transcript.getByTestId("message-user")).toContainText("Write the summary");
  await expect(page.getByTestId("open-in-t3")).toBeDisabled();
  await expect(page.getByTestId("open-in-t3-reason")).toHaveText("Open in T3 needs the machine online.");
  // Its last known need still counts, as of then.
  await expect(page.getByTestId("needs-you-count")).toHaveText("1 needs you");
  await page.screenshot({ path: join(SCREENSHOTS, "offline-agent.png") });
  await docScreenshot(page, "offline-machine.png");
});

test("a run the provider holds up for capacity is held up, not failed: in the fleet, the inbox and the agent view", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const threadId = fleet.sims.createThread(sim, { title: "Flaky test hunt", text: "Find the flaky test #capacity" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  const row = agentRow(page, sim.environmentId, threadId);
  await expect(row.locator(".chip")).toHaveText("held up");
  await expect(row).toHaveAttribute("data-status", "running");
  const machine = page.locator(`[data-testid="env-row"][data-environment="${sim.environmentId}"]`);
  await expect(machine.getByTestId("count-failed")).toHaveCount(0);
  await page.getByTestId("view-inbox").click();
  const item = page.getByTestId("inbox").getByTestId("inbox-row");
  await expect(item).toHaveCount(1);
  await expect(item).toHaveAttribute("data-status", "running");
  await expect(item.locator(".chip")).toHaveText("held up");
  await expect(item).toContainText("held up: Free-tier capacity limit reached");
  await item.click();
  await expect(page.getByTestId("agent-reason")).toContainText("Held up: still running, the provider is waiting. Free-tier capacity limit reached");
});

test("`m` while sending is refused focuses the composer once it can take a message", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const threadId = fleet.sims.createThread(sim, { title: "Writer" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  const row = agentRow(page, sim.environmentId, threadId);
  await expect(row).toHaveAttribute("data-status", "idle");
  await row.locator(".agent-title").click();
  const textbox = page.getByTestId("composer").getByRole("textbox");
  await sim.kill();
  await expect(textbox).toBeDisabled();
  await page.keyboard.press("m");
  await expect(textbox).not.toBeFocused();
  // The machine comes back: the request is honoured, since focus stayed where it was.
  await sim.start();
  await expect(textbox).toBeEnabled();
  await expect(textbox).toBeFocused();
});
