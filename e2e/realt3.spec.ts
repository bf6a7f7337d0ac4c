// The fleet window in Chromium, through the headless shell, against the real T3 0.0.42 server
// (integration/realt3/harness.testkit.ts). Runs inside a private network namespace with the
// real-server suite (playwright.realt3.config.ts, scripts/realt3.sh).
import { expect } from "@playwright/test";
import { RELEASED_T3 } from "../integration/realt3/harness.testkit";
import { T3Operator } from "../integration/realt3/operator.testkit";
import { agentRow } from "./fixtures";
import { PLAIN_REPLY } from "../integration/model/script";
import { expectStoredOnce, pairInWindow, realFleetTest, sendNewTurnFromWindow } from "./realt3-fixture";

/** What the scripted model answers the real Codex (integration/model/script.ts). */
const REPLY = PLAIN_REPLY;
const test = realFleetTest(RELEASED_T3);

// The server starts inside the fixture, which counts toward the test's time.
test.describe.configure({ timeout: 120_000 });

test("pairs a real T3 server by link in the window, follows a live turn and sends a message", async ({ page, real }) => {
  const { server } = real;
  const operator = await T3Operator.start(server);
  const projectId = await operator.createProject("Window project");
  const parentId = await operator.createThread(projectId, "Lead");
  const childId = await operator.createThread(projectId, "Helper", `sub.${parentId}.helper`);

  const environmentId = await pairInWindow(page, real);
  const child = agentRow(page, environmentId, childId);
  await expect(child).toHaveAttribute("data-status", "idle");
  await expect(child).toHaveAttribute("aria-level", "3");

  // A live turn started on the server's own UI shows running, then idle with T3's reply.
  await operator.startTurn(childId, "a slow task");
  await expect(child).toHaveAttribute("data-status", "running", { timeout: 20_000 });
  await child.locator(".agent-title").click();
  await expect(child).toHaveAttribute("data-status", "idle", { timeout: 20_000 });
  await expect(page.getByTestId("transcript")).toContainText("word40.");

  // A message from the window: a new turn, answered, stored once on the server.
  await sendNewTurnFromWindow(page, "now summarise it", REPLY, 20_000);
  expectStoredOnce((await operator.thread(childId)).messages, "now summarise it", REPLY);
});
