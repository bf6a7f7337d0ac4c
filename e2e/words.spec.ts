// What the window says after the user acts (issue 40 point 4): a decision reads as what it was,
// "Handled today" opens the agent each entry names with its words beside their time, z says when
// there is nothing to undo, the composer goes back to the agent's default after a queued message,
// and no server id is shown raw.
import type { Page } from "@playwright/test";
import { createV2Thread } from "../sim/protocol2/fleet-hooks";
import { agentRow, expect, test } from "./fixtures";

const PHONE_AND_LAPTOP = [
  { name: "1400x900", width: 1400, height: 900 },
  { name: "390x844", width: 390, height: 844 },
] as const;

test.describe("a protocol-2 decision", () => {
  test.use({ startPane: "auto", generations: ["v2"] });

  for (const size of PHONE_AND_LAPTOP) {
    test(`reads as the agent's question, not as a command in raw backticks, and Handled today opens its agent at ${size.name}`, async ({ page, fleet }) => {
      await page.setViewportSize({ width: size.width, height: size.height });
      const v2 = fleet.sims.v2Servers[0]!;
      // As in the demo: the simulated Claude asks "Run `npm test`?" (sim/protocol2/steps.ts).
      createV2Thread(v2, { title: "Run the integration suite", provider: "claudeAgent", text: "Run the suite #approval" });
      await fleet.pairAll();
      await page.goto(fleet.shell.url);
      const item = page.getByTestId("inbox-row");
      await expect(item).toHaveCount(1);
      await expect(item.locator(".inbox-need")).toHaveText("approve a command: Run npm test?");

      await page.keyboard.press("n");
      const panel = page.getByTestId("agent-panel");
      await expect(panel.locator("h2")).toHaveText("Run the integration suite");
      await expect(page.getByTestId("approval-card").locator("dt").first()).toHaveText("It asks");
      await page.keyboard.press("d");
      const said = `Denied a command (“Run npm test?”) for Run the integration suite on ${v2.label}`;
      await expect(page.getByTestId("action-confirmation-text")).toHaveText(said);

      // Handled today: the same words, beside their time (never wrapped under it), and the entry opens its agent.
      await page.keyboard.press("Escape");
      await expect(panel).toHaveCount(0);
      await page.keyboard.press("h");
      const entry = page.getByTestId("handled-today").getByTestId("handled-entry");
      await expect(entry).toHaveCount(1);
      await expect(entry).toContainText(said);
      await expectBeside(page, entry.locator("time"), entry.getByTestId("handled-open"));
      await page.keyboard.press("Shift+Tab"); // from Close to the entry
      await expect(entry.getByTestId("handled-open")).toBeFocused();
      await page.keyboard.press("Enter");
      await expect(page.getByTestId("handled-today")).toHaveCount(0);
      await expect(panel.locator("h2")).toHaveText("Run the integration suite");
    });
  }
});

/** `words` starts right of `time`, on the same first line, and stays inside the window. */
async function expectBeside(page: Page, time: ReturnType<Page["locator"]>, words: ReturnType<Page["locator"]>): Promise<void> {
  const timeBox = (await time.boundingBox())!;
  const wordsBox = (await words.boundingBox())!;
  expect(wordsBox.x, "the words start right of their time").toBeGreaterThanOrEqual(timeBox.x + timeBox.width);
  expect(Math.abs(wordsBox.y - timeBox.y), "the words start on their time's line").toBeLessThanOrEqual(4);
  expect(wordsBox.x + wordsBox.width, "the words fit the window").toBeLessThanOrEqual(page.viewportSize()!.width);
}

test.describe("undo", () => {
  test.use({ startPane: "auto", generations: ["upstream"] });

  test("z with nothing to undo says so, and why, instead of doing nothing", async ({ page, fleet }) => {
    const sim = fleet.sims.servers[0]!;
    const deploy = fleet.sims.createThread(sim, { title: "Deploy", text: "#approval" });
    await expect.poll(() => sim.engine.threads.get(deploy)?.pendingApprovals.size).toBe(1);
    await fleet.pairAll();
    await page.goto(fleet.shell.url);
    await expect(page.getByTestId("inbox-row")).toHaveCount(1);
    const confirmation = page.getByTestId("action-confirmation-text");

    await page.keyboard.press("n");
    await page.keyboard.press("a");
    await expect(confirmation).toHaveText(`Approved “npm test” for Deploy on ${sim.label}`);
    // A decision is final: z says T3 cannot take it back.
    await page.keyboard.press("z");
    await expect(confirmation).toHaveText("Nothing to undo: T3 cannot take that back.");
    // Once the confirmation is gone, z says how long Undo lasts and where a snooze can still be ended.
    await page.getByTestId("action-confirmation").getByRole("button", { name: "Dismiss" }).click();
    await expect(confirmation).toHaveText("");
    await page.keyboard.press("z");
    await expect(confirmation).toHaveText(
      "Nothing to undo: Undo lasts while an action's confirmation shows; a snooze can still be ended from the Snoozed list (Shift+Z).",
    );
  });
});

test.describe("the composer", () => {
  test.use({ generations: ["v2"] });

  test("goes back to the agent's default (steer) after a message was queued", async ({ page, fleet }) => {
    const v2 = fleet.sims.v2Servers[0]!;
    const threadId = createV2Thread(v2, { title: "Long job", provider: "claudeAgent", text: "migrate #hold" });
    await fleet.pairAll();
    await page.goto(fleet.shell.url);
    await expect(agentRow(page, v2.environmentId, threadId)).toHaveAttribute("data-status", "running");
    await agentRow(page, v2.environmentId, threadId).locator(".agent-title").click();
    const intent = page.getByTestId("intent");
    await expect(intent).toHaveAttribute("data-intent", "steer");
    await page.getByTestId("choose-queue").click();
    await expect(intent).toHaveAttribute("data-intent", "queue");
    await page.getByLabel("Message").fill("then write the docs");
    await page.getByLabel("Message").press("Enter");
    await expect(page.locator('[data-testid="delivery"]').filter({ hasText: "then write the docs" })).toHaveAttribute("data-outcome", "queued");
    // The choice was for that message; the next starts from what the fleet offers for a running agent.
    await expect(page.getByLabel("Message")).toHaveValue("");
    await expect(page.getByTestId("choose-steer")).toHaveAttribute("aria-checked", "true");
    await expect(intent).toHaveAttribute("data-intent", "steer");
    await expect(page.getByTestId("send")).toContainText("Send");
  });

  test("names the servers' ids in words: a subagent's origin and the runtime mode", async ({ page, fleet }) => {
    const v2 = fleet.sims.v2Servers[0]!;
    const threadId = createV2Thread(v2, { title: "Coordinate the sweep", provider: "claudeAgent", text: "Sweep the repo #subagent" });
    await fleet.pairAll();
    await page.goto(fleet.shell.url);
    const subagent = page.getByTestId("subagent-row").filter({ hasText: "Explore" });
    await expect(subagent.getByTestId("subagent-kind")).toHaveText("the provider's own subagent · read-only");
    await agentRow(page, v2.environmentId, threadId).locator(".agent-title").click();
    await page.getByTestId("agent-details").locator("summary").click();
    await expect(page.getByTestId("agent-details")).toContainText("Provider");
    for (const raw of ["provider_native", "app_owned", "full-access", "approval-required"]) await expect(page.locator("body")).not.toContainText(raw);
  });
});
