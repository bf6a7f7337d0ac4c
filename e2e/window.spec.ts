// The fleet window as a person keeps it open all day: triage, notices, transcripts,
// controls that fit, the command registry, readable reconnection and errors that are never silent.
import { join } from "node:path";
import type { Page } from "@playwright/test";
import { V2SimServer } from "../sim/protocol2/server";
import { createV2Thread } from "../sim/protocol2/fleet-hooks";
import { tapBridge } from "./bridge-tap";
import { SCREENSHOTS, agentRow, envRow, expect, test } from "./fixtures";
import { SIZES } from "./sizes";

const rows = (page: Page) => page.locator('[data-testid="agent-row"]');

/** Every visible button lies inside the window and inside its row: nothing clipped or pushed out. */
async function expectNoClippedControl(page: Page, where: string): Promise<void> {
  const clipped = await page.evaluate(() => {
    const problems: string[] = [];
    const width = document.documentElement.clientWidth;
    for (const button of document.querySelectorAll<HTMLElement>("button, select, input, textarea")) {
      const box = button.getBoundingClientRect();
      if (box.width === 0 || box.height === 0 || button.closest("[aria-hidden='true']")) continue;
      const row = button.closest<HTMLElement>(
        ".env-row, .agent-row, .project-row, .panel-actions, .card-actions, .composer-footer, .topbar, .filters, .dialog",
      );
      const container = row?.getBoundingClientRect();
      const label = `${button.tagName.toLowerCase()} "${(button.textContent || button.getAttribute("aria-label") || "").trim().slice(0, 30)}"`;
      if (box.left < -1 || box.right > width + 1) problems.push(`${label} outside the window (${Math.round(box.left)}–${Math.round(box.right)} of ${width})`);
      else if (container && (box.left < container.left - 1 || box.right > container.right + 1)) problems.push(`${label} outside its row`);
      // Ellipsized text is fine where the full text shows on hover.
      else if (button.scrollWidth > button.clientWidth + 2 && button.tagName === "BUTTON" && button.title !== button.textContent)
        problems.push(`${label} text clipped`);
    }
    return problems;
  });
  expect(clipped, where).toEqual([]);
}

test("triage order, the need-you count is what n visits, group by project", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const idle = fleet.sims.createThread(sim, { title: "Alpha idle" });
  await fleet.pairAll();
  const running = fleet.sims.createThread(sim, { title: "Delta running", text: "#hang" });
  const failed = fleet.sims.createThread(sim, { title: "Charlie failed", text: "#fail" });
  const asking = fleet.sims.createThread(sim, { title: "Bravo asks", text: "#input" });
  await page.goto(fleet.shell.url);
  await expect(agentRow(page, sim.environmentId, asking)).toHaveAttribute("data-status", "needs-input");
  await expect(agentRow(page, sim.environmentId, failed)).toHaveAttribute("data-status", "failed");
  await expect(agentRow(page, sim.environmentId, running)).toHaveAttribute("data-status", "running");
  const mine = page.locator(`[data-testid="agent-row"][data-key^="${sim.environmentId}/"]`);
  const order = await mine.evaluateAll((nodes) => nodes.map((node) => (node as HTMLElement).dataset.status));
  expect(order.slice(0, 2).sort()).toEqual(["failed", "needs-input"]);
  expect(order.slice(2)).toEqual(["running", "idle"]);
  expect(await mine.last().getAttribute("data-key")).toBe(`${sim.environmentId}/${idle}`);

  await expect(page.getByTestId("needs-you-count")).toHaveText("2 need you");
  const visited = new Set<string>();
  for (let i = 0; i < 4; i++) {
    await page.keyboard.press("n");
    const title = await page.getByTestId("agent-panel").locator("h2").textContent();
    visited.add(title ?? "");
    await page.keyboard.press("Escape");
  }
  expect([...visited].sort()).toEqual(["Bravo asks", "Charlie failed"]);

  await page.getByTestId("group-project").click();
  const project = page.getByTestId("project-row").filter({ hasText: sim.label });
  await expect(project).toBeVisible();
  await expect(project.getByTestId("count-failed")).toHaveText("1 failed");
  await page.getByTestId("fleet-tree").screenshot({ path: join(SCREENSHOTS, "fleet-by-project.png") });
  await page.reload(); // the grouping is kept across a reload
  await expect(page.getByTestId("project-row").filter({ hasText: sim.label })).toBeVisible();
  await page.getByTestId("group-machine").click();
  await expect(page.getByTestId("project-row")).toHaveCount(0);
});

test("idle agents older than the configured age fold under 'N older'", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  fleet.sims.createThread(sim, { title: "Yesterday's idle" });
  const busy = fleet.sims.createThread(sim, { title: "Still running", text: "#hang" });
  await fleet.pairAll();
  await page.clock.install();
  await page.goto(fleet.shell.url);
  await expect(agentRow(page, sim.environmentId, busy)).toHaveAttribute("data-status", "running");
  await expect(page.getByTestId("older-row")).toHaveCount(0);
  // A day and a bit later (the page's clock): idle agents fold, the running one stays.
  await page.clock.fastForward("25:00:00");
  await page.clock.resume();
  const older = envRow(page, sim.environmentId).locator("xpath=following::*[@data-testid='older-row'][1]");
  await expect(older).toHaveText(/^\d+ older$/);
  await expect(page.getByText("Yesterday's idle")).toHaveCount(0);
  await expect(agentRow(page, sim.environmentId, busy)).toBeVisible();
  await older.getByRole("button").click();
  await expect(page.getByText("Yesterday's idle")).toBeVisible();
  // The age is a setting.
  await page.getByTestId("open-settings").click();
  await page.getByTestId("older-than-hours").fill("48");
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("older-row")).toHaveCount(0);
});

test("notices: one per condition, withdrawn when it clears, never over a control; the tab shows the count; browser notifications follow", async ({
  page,
  fleet,
  context,
}) => {
  await context.grantPermissions(["notifications"]);
  await page.addInitScript(() => {
    // Records what the page shows through the real Notification API.
    const Real = window.Notification;
    const log: { title: string; tag: string; closed: boolean }[] = [];
    (window as unknown as { __notices: typeof log }).__notices = log;
    class Recorded extends Real {
      constructor(title: string, options?: NotificationOptions) {
        super(title, options);
        const entry = { title, tag: options?.tag ?? "", closed: false };
        log.push(entry);
        const close = this.close.bind(this);
        this.close = () => {
          entry.closed = true;
          close();
        };
      }
    }
    Object.defineProperty(window, "Notification", { value: Recorded });
  });
  const sim = fleet.sims.servers[1]!;
  const threadId = fleet.sims.createThread(sim, { title: "Deployer" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  await expect(agentRow(page, sim.environmentId, threadId)).toHaveAttribute("data-status", "idle");
  await expect(page).toHaveTitle("T3 Fleet — nothing needs you");

  fleet.sims.sendMessage(sim, threadId, "ship it #approval");
  const notice = page.getByTestId("notice");
  await expect(notice).toHaveCount(1);
  await expect(notice).toContainText("Deployer needs your approval");
  await expect(notice).toHaveAttribute("data-critical", "true");
  await expect(page).toHaveTitle("1 needs you — T3 Fleet");
  await expect(page.locator('link[rel="icon"]')).toHaveAttribute("data-count", "1");
  await expect(page.locator('link[rel="icon"]')).toHaveAttribute("data-variant", "needs-you");
  const shown = () => page.evaluate(() => (window as unknown as { __notices: { title: string; tag: string; closed: boolean }[] }).__notices);
  expect(await shown()).toEqual([{ title: "Deployer needs your approval", tag: `agent:${sim.environmentId}/${threadId}:needs-approval`, closed: false }]);

  await agentRow(page, sim.environmentId, threadId).locator(".agent-title").click();
  // The notice strip sits above the fleet: the composer and card buttons are not covered.
  for (const button of [
    page.getByTestId("approval-card").getByRole("button", { name: "Allow once", exact: true }),
    page.getByTestId("composer").getByRole("button"),
  ]) {
    const box = (await button.boundingBox())!;
    const hit = await page.evaluate(
      ([x, y]) => document.elementFromPoint(x!, y!)?.closest("button")?.textContent,
      [box.x + box.width / 2, box.y + box.height / 2],
    );
    expect(hit).toBe(await button.textContent());
  }
  await page.screenshot({ path: join(SCREENSHOTS, "notice-approval.png") });
  await page.getByTestId("approval-card").getByRole("button", { name: "Allow once", exact: true }).click();
  await expect(agentRow(page, sim.environmentId, threadId)).toHaveAttribute("data-status", "idle");
  await expect(notice).toHaveCount(0);
  expect((await shown())[0]!.closed).toBe(true);
  await expect(page).toHaveTitle("T3 Fleet — nothing needs you");

  // Outages: a notice when the machine drops, gone when it is back; a machine that drops again soon
  // after (a flapping host) says so on its row only, without another notification.
  await page.keyboard.press("Escape");
  const offlineShown = async () => (await shown()).filter((entry) => entry.title.endsWith("is offline")).length;
  for (let outage = 0; outage < 3; outage++) {
    await sim.kill();
    await expect(envRow(page, sim.environmentId)).toHaveAttribute("data-phase", /offline|backoff/);
    if (outage === 0) await expect(page.getByTestId("notice").filter({ hasText: "is offline" })).toHaveCount(1);
    await sim.start();
    await expect(envRow(page, sim.environmentId)).toHaveAttribute("data-phase", "online");
    await expect(page.getByTestId("notice").filter({ hasText: "is offline" })).toHaveCount(0);
    // The service sends a notification before the change that clears it: once the row is back
    // online, any notification for this outage has arrived.
    expect(await offlineShown()).toBe(1);
  }
});

test("transcripts: markdown, highlighted and folded code, tool activity inline, the answer shown, Open in T3", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const code = Array.from({ length: 30 }, (_, i) => `const line${i} = ${i};`).join("\n");
  const threadId = fleet.sims.createThread(sim, { title: "Writer" });
  fleet.sims.sendMessage(sim, threadId, `Use **bold** and a table:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n\`\`\`ts\n${code}\n\`\`\``);
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  await agentRow(page, sim.environmentId, threadId).locator(".agent-title").click();
  const transcript = page.getByTestId("transcript");
  const user = transcript.getByTestId("message-user").first();
  await expect(user.locator("strong")).toHaveText("bold");
  await expect(user.locator("table td")).toHaveText(["1", "2"]);
  await expect(user.locator(".hljs-keyword").first()).toHaveText("const");
  const folded = user.getByTestId("folded");
  await expect(folded.getByRole("button")).toHaveText("Show all 31 lines");
  await folded.getByRole("button").click();
  await expect(folded.getByRole("button")).toHaveText("Fold code");

  // An approval, then a question: the command with its status and the answer show in the transcript.
  fleet.sims.sendMessage(sim, threadId, "deploy #approval");
  await expect(page.getByTestId("approval-card")).toBeVisible();
  await page.getByTestId("approval-card").getByRole("button", { name: "Allow once", exact: true }).click();
  await expect(transcript.getByTestId("activity-command").last()).toContainText("$ npm test");
  await expect(transcript.getByTestId("activity-command").last()).toHaveAttribute("data-status", "completed");
  // The next message must start its own turn: sent while this one still runs, the simulated Codex
  // takes it as a steer and asks nothing (a race on a busy machine).
  await expect(agentRow(page, sim.environmentId, threadId)).toHaveAttribute("data-status", "idle");
  fleet.sims.sendMessage(sim, threadId, "next #input");
  const card = page.getByTestId("input-card");
  await card.getByLabel("orders").check();
  await card.getByRole("button", { name: "Answer" }).click();
  await expect(transcript.getByTestId("activity-question")).toContainText("Asked: Which database should I migrate first?");
  await expect(transcript.getByTestId("activity-answer")).toContainText("Answered: orders");
  await page.getByTestId("agent-panel").screenshot({ path: join(SCREENSHOTS, "transcript.png") });

  const popup = page.waitForEvent("popup");
  await page.getByTestId("open-in-t3").click();
  expect((await popup).url()).toBe(`${sim.baseUrl}/${sim.environmentId}/${threadId}`);
  await (await popup).close();
  const byKey = page.waitForEvent("popup");
  await page.keyboard.press("o");
  expect((await byKey).url()).toBe(`${sim.baseUrl}/${sim.environmentId}/${threadId}`);
});

test("a transcript opens at its newest message", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const threadId = fleet.sims.createThread(sim, { title: "Long talk" });
  const paragraphs = Array.from({ length: 50 }, (_, i) => `Paragraph ${i + 1} of a long request.`).join("\n\n");
  fleet.sims.sendMessage(sim, threadId, paragraphs);
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  const row = agentRow(page, sim.environmentId, threadId);
  await expect(row).toHaveAttribute("data-status", "idle");
  await row.locator(".agent-title").click();
  const transcript = page.getByTestId("transcript");
  await expect(transcript.getByTestId("message-assistant").last()).toBeInViewport();
  await expect(transcript.getByTestId("message-user").getByText("Paragraph 1 of a long request.", { exact: true })).not.toBeInViewport();
});

test("a draft stays with its agent: opening another agent never carries the words there, and coming back finds them", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const [first, second] = ["Writer", "Reader"].map((title) => fleet.sims.createThread(sim, { title }));
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  const composer = page.getByTestId("composer").getByRole("textbox");
  const open = async (threadId: string) => {
    const row = agentRow(page, sim.environmentId, threadId!);
    await expect(row).toHaveAttribute("data-status", "idle");
    await row.locator(".agent-title").click();
    await expect(page.getByTestId("agent-panel")).toContainText(threadId === first ? "Writer" : "Reader");
  };
  await open(first!);
  await composer.fill("only for the writer");
  await open(second!);
  // Before, the writer's words stayed in the composer, and Enter sent them to the reader.
  await expect(composer).toHaveValue("");
  await composer.fill("for the reader");
  await composer.press("Enter");
  await expect(composer).toHaveValue("");
  await expect
    .poll(() =>
      sim.engine.threads
        .get(second!)!
        .messages.filter((message) => message.role === "user")
        .map((message) => message.text),
    )
    .toEqual(["for the reader"]);
  await open(first!);
  await expect(composer).toHaveValue("only for the writer");
  expect(sim.engine.threads.get(first!)!.messages.filter((message) => message.role === "user")).toEqual([]);
});

test("questions: required answers are enforced before sending; inputs count their characters", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const threadId = fleet.sims.createThread(sim, { title: "Migrator", text: "#input" });
  await fleet.pairAll();
  const tap = await tapBridge(page);
  await page.goto(fleet.shell.url);
  await expect(agentRow(page, sim.environmentId, threadId)).toHaveAttribute("data-status", "needs-input");
  await page.keyboard.press("n");
  const card = page.getByTestId("input-card");
  await page.keyboard.press("r"); // the answer key focuses the first question
  await expect(card.getByLabel("orders")).toBeFocused();
  await card.getByRole("button", { name: "Answer" }).click();
  await expect(card.getByTestId("question-missing")).toHaveText("This question needs an answer.");
  expect(tap.sent.filter((request) => request.method === "agent.respondInput")).toEqual([]);
  await card.getByLabel("users").check();
  await expect(card.getByTestId("question-missing")).toHaveCount(1); // shown until the next try
  await card.getByRole("button", { name: "Answer" }).click();
  await expect(agentRow(page, sim.environmentId, threadId)).not.toHaveAttribute("data-status", "needs-input");
  expect(tap.sent.find((request) => request.method === "agent.respondInput")?.params).toMatchObject({ answers: { q1: "users" } });

  await page.getByLabel("Message").fill("hello");
  await expect(page.getByTestId("message-counter")).toHaveText("5 / 100,000");
  await page.keyboard.press("Escape");
  await page.keyboard.press("Escape");
  await page.getByTestId("open-pairing").click();
  await page.getByTestId("pair-input").fill("x".repeat(4_001));
  await expect(page.getByTestId("pair-input-counter")).toHaveText("4,001 / 4,000 — too long");
  await expect(page.getByTestId("pair-submit")).toBeDisabled();
});

test("command palette and keys: one registry; search keeps its query on Esc, ↓/Enter choose", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[1]!;
  const deployer = fleet.sims.createThread(sim, { title: "Deployer", text: "ship #approval" });
  const other = fleet.sims.createThread(sim, { title: "Reviewer", text: "#approval" });
  const failing = fleet.sims.createThread(sim, { title: "Builder", text: "#fail" });
  await fleet.pairAll();
  const tap = await tapBridge(page);
  await page.goto(fleet.shell.url);
  await expect(agentRow(page, sim.environmentId, deployer)).toHaveAttribute("data-status", "needs-approval");
  await expect(agentRow(page, sim.environmentId, other)).toHaveAttribute("data-status", "needs-approval");

  // The palette lists what applies and runs it.
  await agentRow(page, sim.environmentId, deployer).click();
  await page.keyboard.press("Control+k");
  const palette = page.getByTestId("command-palette");
  await expect(palette).toBeVisible();
  await palette.getByLabel("Command").fill("allow");
  await expect(palette.getByRole("option")).toHaveText(["Allow oncea", "Allow for this sessionShift+A"]);
  await palette.screenshot({ path: join(SCREENSHOTS, "command-palette.png") });
  await page.keyboard.press("Enter");
  await expect(palette).toHaveCount(0);
  await expect(agentRow(page, sim.environmentId, deployer)).toHaveAttribute("data-status", "idle");

  // A key decides only what is on screen: from the list, d first opens the agent (its approval card
  // shows the command); then d declines.
  await agentRow(page, sim.environmentId, other).click();
  await page.keyboard.press("d");
  await expect(page.getByTestId("approval-card")).toBeVisible();
  await expect(agentRow(page, sim.environmentId, other)).toHaveAttribute("data-status", "needs-approval");
  await page.keyboard.press("d");
  await expect(agentRow(page, sim.environmentId, other)).toHaveAttribute("data-status", "idle");
  expect(tap.sent.filter((r) => r.method === "agent.respondApproval").map((r) => (r.params as { decision: string }).decision)).toEqual(["accept", "decline"]);

  // x acknowledges a failure through the service's agent.acknowledge.
  await page.keyboard.press("Escape");
  await agentRow(page, sim.environmentId, failing).click();
  await expect(agentRow(page, sim.environmentId, failing)).toHaveAttribute("data-status", "failed");
  await page.keyboard.press("x");
  await expect.poll(() => tap.sent.filter((r) => r.method === "agent.acknowledge").map((r) => r.params)).toEqual([{ key: `${sim.environmentId}/${failing}` }]);
  // Acknowledged: it leaves "need you" (the header, `n`) while its row still says it failed.
  await expect(page.getByTestId("needs-you-count")).toHaveText("0 need you");
  await expect(agentRow(page, sim.environmentId, failing)).toHaveAttribute("data-status", "failed");

  // Search: "/" focuses, Esc leaves the query, ↓ chooses the first result, Enter opens it.
  await page.keyboard.press("/");
  await page.keyboard.type("review");
  await page.keyboard.press("Escape");
  await expect(page.getByLabel("Search")).toHaveValue("review");
  await expect(page.getByLabel("Search")).not.toBeFocused();
  await expect(rows(page)).toHaveCount(1);
  await page.getByLabel("Search").focus();
  await page.keyboard.press("ArrowDown");
  await expect(agentRow(page, sim.environmentId, other)).toHaveAttribute("aria-selected", "true");
  await page.getByLabel("Search").focus();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("agent-panel").locator("h2")).toHaveText("Reviewer");
});

test("keys pressed while an agent opens go where they were meant: focus moves later only if the user has not moved it", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[1]!;
  fleet.sims.createThread(sim, { title: "Reviewer", text: "review the patch" });
  fleet.sims.createThread(sim, { title: "Builder" });
  await fleet.pairAll();
  const tap = await tapBridge(page);
  await page.goto(fleet.shell.url);
  await expect(rows(page)).toHaveCount(2);
  const search = page.getByLabel("Search");
  const composer = page.getByTestId("composer").getByRole("textbox");

  // The service is slow to open the agent: m, pressed before it answers, writes to the agent, not into the search.
  tap.hold("agent.open");
  await page.keyboard.press("/");
  await page.keyboard.type("review");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("agent-panel").locator("h2")).toHaveText("Reviewer");
  await page.keyboard.press("m");
  await expect(composer).toBeFocused();
  await expect(search).toHaveValue("review");
  // Its answer arrives: the composer keeps focus (before: the agent's heading took it).
  tap.release("agent.open");
  await expect(page.getByTestId("transcript").getByTestId("message-user")).toBeVisible();
  await page.keyboard.type("hello");
  await expect(composer).toHaveValue("hello");

  // Esc back to the list, then straight into the search: the frame that returns focus to the list does not take it.
  await page.getByTestId("agent-panel").locator("h2").focus();
  await page.keyboard.press("Escape");
  await search.focus();
  await page.keyboard.press("Control+a");
  await page.keyboard.press("Backspace");
  await page.keyboard.type("build");
  await expect(search).toHaveValue("build");
  await expect(search).toBeFocused();
});

test("a machine row says what its connection does, with the one action that helps", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[2]!;
  fleet.sims.createThread(sim, { title: "Night build" });
  await fleet.pairAll();
  const tap = await tapBridge(page);
  await page.goto(fleet.shell.url);
  const row = envRow(page, sim.environmentId);
  await expect(row.getByTestId("env-phase")).toHaveText("online");
  await expect(row.getByTestId("env-fix")).toHaveCount(0);
  await sim.kill();
  await expect(row.getByTestId("env-phase")).toHaveText(/^(offline|failing) · retrying (in \d+ s|now)$/);
  await expect(row.getByTestId("env-fix")).toHaveText("Retry now");
  await row.screenshot({ path: join(SCREENSHOTS, "machine-retrying.png") });
  // The outage notice is not critical: it goes by itself while the row keeps saying what happens.
  const notice = page.getByTestId("notice").filter({ hasText: "is offline" });
  await expect(notice).toHaveAttribute("data-critical", "false");
  await expect(notice).toHaveCount(0, { timeout: 15_000 });
  await expect(row).not.toHaveAttribute("data-phase", "online");
  await row.getByTestId("env-fix").click();
  await expect.poll(() => tap.sent.some((r) => r.method === "environment.retry")).toBe(true);
  await sim.start();
  await expect(row.getByTestId("env-phase")).toHaveText("online");
});

test("errors are never silent: a refused command shows where it was run; a lost bridge shows everything unknown", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const threadId = fleet.sims.createThread(sim, { title: "Worker", text: "#hang" });
  await fleet.pairAll();
  const tap = await tapBridge(page);
  await page.goto(fleet.shell.url);
  const row = envRow(page, sim.environmentId);
  await expect(agentRow(page, sim.environmentId, threadId)).toHaveAttribute("data-status", "running");

  tap.refuse("environment.mute", "The registry file could not be written.");
  await row.getByTestId("env-menu").click();
  await page.getByRole("menuitem", { name: "Mute notifications" }).click();
  await expect(row.getByTestId("command-error")).toHaveText(/The registry file could not be written\./);

  tap.refuse("agent.interrupt", "The server refused the interrupt.");
  await agentRow(page, sim.environmentId, threadId).locator(".agent-title").click();
  await expect(page.getByTestId("interrupt")).toBeEnabled();
  await page.keyboard.press("i"); // the interrupt key runs what the Interrupt button runs
  await expect(page.getByTestId("agent-panel").getByTestId("command-error")).toContainText("The server refused the interrupt.");

  await tap.cut();
  await expect(page.getByTestId("bridge-lost")).toBeVisible();
  await expect(agentRow(page, sim.environmentId, threadId)).toHaveAttribute("data-status", "unknown");
  for (const machine of await page.getByTestId("env-row").all()) await expect(machine).toHaveAttribute("data-phase", "unknown");
  await expect(page.getByTestId("agent-panel").locator(".chip").first()).toHaveAttribute("data-status", "unknown");
  await page.screenshot({ path: join(SCREENSHOTS, "bridge-lost.png") });
  tap.restore();
  await expect(page.getByTestId("bridge-lost")).toHaveCount(0);
  await expect(agentRow(page, sim.environmentId, threadId)).toHaveAttribute("data-status", "running");
  await expect(row).toHaveAttribute("data-phase", "online");
});

for (const size of SIZES) {
  test(`controls fit at ${size.name}: long labels ellipsized with the full text on hover`, async ({ page, fleet }) => {
    await page.setViewportSize({ width: size.width, height: size.height });
    const sim = fleet.sims.servers[0]!;
    const longTitle = `Refactor the ${"very ".repeat(20)}long module name that never ends`;
    const threadId = fleet.sims.createThread(sim, { title: longTitle, text: "#approval" });
    fleet.sims.createThread(sim, { title: "Failing build", text: "#fail" });
    await fleet.pairAll();
    const longLabel = `build-box-${"x".repeat(85)}`; // 95 characters, as a hostile server could send
    await fleet.service.request("environment.rename", { environmentId: sim.environmentId, label: longLabel });
    await page.goto(fleet.shell.url);
    const row = envRow(page, sim.environmentId);
    await expect(row.getByTestId("env-label")).toHaveAttribute("title", longLabel);
    await expect(agentRow(page, sim.environmentId, threadId)).toHaveAttribute("data-status", "needs-approval");
    await expect(agentRow(page, sim.environmentId, threadId).locator(".agent-title")).toHaveAttribute("title", longTitle);
    await expectNoClippedControl(page, `fleet at ${size.name}`);
    await page.screenshot({ path: join(SCREENSHOTS, `fleet-${size.name}.png`) });

    await row.getByTestId("env-menu").click();
    await page.getByRole("menuitem", { name: "Remove…" }).click();
    await expect(page.getByRole("menuitem", { name: "Keep" })).toBeVisible();
    await expectNoClippedControl(page, `remove confirmation at ${size.name}`);
    await page.getByRole("menuitem", { name: "Keep" }).click();

    await agentRow(page, sim.environmentId, threadId).locator(".agent-title").click();
    await expect(page.getByTestId("approval-card")).toBeVisible();
    await expectNoClippedControl(page, `agent view at ${size.name}`);
    if (await row.isVisible()) {
      // Wide windows keep the fleet beside the agent: its rows and their confirmation still fit.
      await row.getByTestId("env-menu").click();
      await page.getByRole("menuitem", { name: "Remove…" }).click();
      await expectNoClippedControl(page, `remove confirmation beside the agent at ${size.name}`);
      await page.screenshot({ path: join(SCREENSHOTS, `remove-beside-agent-${size.name}.png`) });
      await page.getByRole("menuitem", { name: "Keep" }).click();
    }
    await page.screenshot({ path: join(SCREENSHOTS, `agent-${size.name}.png`) });
  });
}

test("protocol 2: the composer lets the user steer or queue and says which before sending; several questions, multi-select, required ones enforced", async ({
  page,
  fleet,
}) => {
  const v2 = await new V2SimServer({ label: "v2-box", tickMs: 40 }).start();
  try {
    const holder = createV2Thread(v2, { title: "Long task", text: "work #hold" });
    const asker = createV2Thread(v2, { title: "Asker", text: "plan #question" });
    await fleet.service.request("pair.confirm", { input: v2.pairingUrl() });
    const tap = await tapBridge(page);
    await page.goto(fleet.shell.url);
    const environmentId = v2.environmentId;

    await expect(agentRow(page, environmentId, holder)).toHaveAttribute("data-status", "running");
    await agentRow(page, environmentId, holder).locator(".agent-title").click();
    const intent = page.getByTestId("intent");
    await expect(intent).toHaveAttribute("data-intent", "steer");
    await page.getByTestId("choose-queue").click();
    await expect(intent).toHaveAttribute("data-intent", "queue");
    await expect(intent).toContainText("after the running one");
    await expect(page.getByTestId("composer").getByRole("button", { name: "Queue" })).toBeVisible();
    await page.getByLabel("Message").fill("then add tests");
    await page.getByLabel("Message").press("Enter");
    await expect(page.locator('[data-testid="delivery"]').filter({ hasText: "then add tests" })).not.toHaveAttribute("data-state", /sending|refused/);
    await page.getByTestId("choose-steer").click();
    await expect(intent).toHaveAttribute("data-intent", "steer");
    await page.getByLabel("Message").fill("and keep it small");
    await page.getByLabel("Message").press("Enter");
    await expect(page.locator('[data-testid="delivery"]').filter({ hasText: "and keep it small" })).not.toHaveAttribute("data-state", /sending|refused/);
    expect(tap.sent.filter((r) => r.method === "agent.send").map((r) => (r.params as { expectedIntent: string }).expectedIntent)).toEqual(["queue", "steer"]);
    // What was observed afterwards, in words on each send.
    await expect(page.locator('[data-testid="delivery"]').filter({ hasText: "then add tests" })).toContainText("queued after the running turn");
    await expect(page.locator('[data-testid="delivery"]').filter({ hasText: "and keep it small" })).toContainText("T3 accepted it as a steer");
    await page.getByTestId("agent-panel").screenshot({ path: join(SCREENSHOTS, "composer-steer-or-queue.png") });

    await page.keyboard.press("Escape");
    await page.keyboard.press("Escape");
    await expect(agentRow(page, environmentId, asker)).toHaveAttribute("data-status", "needs-input");
    await agentRow(page, environmentId, asker).locator(".agent-title").click();
    const card = page.getByTestId("input-card");
    await expect(card.getByTestId("question")).toHaveCount(2);
    await card.getByRole("button", { name: "Answer" }).click();
    await expect(card.getByTestId("question-missing")).toHaveCount(1); // only the required one
    await card.getByLabel("api").check();
    await card.getByLabel("web").check();
    await card.getByRole("button", { name: "Answer" }).click();
    await expect(agentRow(page, environmentId, asker)).not.toHaveAttribute("data-status", "needs-input");
    expect(tap.sent.find((r) => r.method === "agent.respondInput")?.params).toMatchObject({ answers: { scope: ["api", "web"] } });
  } finally {
    await v2.stop();
  }
});
