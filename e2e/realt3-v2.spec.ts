// The fleet window in Chromium, through the headless shell, against T3's real V2 engine (protocol 2;
// integration/realt3/harness.testkit.ts). Runs inside a private network namespace with the
// real-server suite (playwright.realt3.config.ts, scripts/realt3.sh).
import { expect } from "@playwright/test";
import { V2_ENGINE } from "../integration/realt3/harness.testkit";
import { T3V2Operator } from "../integration/realt3/operator-v2.testkit";
import { agentRow } from "./fixtures";
import { PLAIN_REPLY } from "../integration/model/script";
import { expectStoredOnce, pairInWindow, realFleetTest, sendNewTurnFromWindow } from "./realt3-fixture";

/** What the scripted model answers the real Codex (integration/model/script.ts). */
const REPLY = PLAIN_REPLY;
const test = realFleetTest(V2_ENGINE);

// The server starts inside the fixture, which counts toward the test's time (the V2 engine: 10-40 s on a loaded machine).
test.describe.configure({ timeout: 180_000 });

test("pairs T3's V2 engine by link in the window, follows a live turn, nests a fork and sends a message once", async ({ page, real }) => {
  const { server } = real;
  const operator = await T3V2Operator.start(server);
  test.info().attach("engine start (ms)", { body: String(server.startupMs[0]) });
  const projectId = await operator.createProject("Window project");
  const leadId = await operator.createThread(projectId, "Lead");

  const environmentId = await pairInWindow(page, real);
  const lead = agentRow(page, environmentId, leadId);
  await expect(lead).toHaveAttribute("data-status", "idle");
  await expect(lead).toHaveAttribute("aria-level", "2");

  // A live run started on the engine's own UI shows running, then idle with the engine's reply
  // (buffered by the engine until its provider turn ends).
  await operator.send(leadId, "a slow task");
  await expect(lead).toHaveAttribute("data-status", "running", { timeout: 20_000 });
  await lead.locator(".agent-title").click();
  await expect(lead).toHaveAttribute("data-status", "idle", { timeout: 30_000 });
  await expect(page.getByTestId("transcript")).toContainText("word40.");

  // A fork of the finished run is nested under it, from its lineage.
  const forkId = await operator.fork(leadId, "Lead's fork");
  const fork = agentRow(page, environmentId, forkId);
  await expect(fork).toHaveAttribute("aria-level", "3");

  // A message from the window: a new run, answered, stored once on the engine.
  await sendNewTurnFromWindow(page, "now summarise it", REPLY, 30_000);
  expectStoredOnce((await operator.projection(leadId)).messages, "now summarise it", REPLY);
  operator.close();
});
