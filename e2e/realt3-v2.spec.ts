// The fleet window in Chromium, through the headless shell, against T3's real V2 engine (protocol 2;
// electron/fleet/realt3/harness.testkit.ts). Runs inside a private network namespace with the
// real-server suite (playwright.realt3.config.ts, scripts/realt3.sh).
import { expect } from "@playwright/test";
import { V2_ENGINE } from "../electron/fleet/realt3/harness.testkit";
import { T3V2Operator } from "../electron/fleet/realt3/operator-v2.testkit";
import { agentRow, envRow } from "./fixtures";
import { realFleetTest } from "./realt3-fixture";

const REPLY = "Hello from T3's V2 engine.";
const test = realFleetTest(V2_ENGINE, REPLY);

// The server starts inside the fixture, which counts toward the test's time (the V2 engine: 10-40 s on a loaded machine).
test.describe.configure({ timeout: 180_000 });

test("pairs T3's V2 engine by link in the window, follows a live turn, nests a fork and sends a message once", async ({ page, real }) => {
  const { server } = real;
  const operator = await T3V2Operator.start(server);
  test.info().attach("engine start (ms)", { body: String(server.startupMs[0]) });
  const projectId = await operator.createProject("Window project");
  const leadId = await operator.createThread(projectId, "Lead");
  const link = await server.pairingLink();
  const environmentId = ((await (await fetch(`${server.baseUrl}/.well-known/t3/environment`)).json()) as { environmentId: string }).environmentId;

  await page.goto(real.shell.url);
  await page.getByTestId("open-pairing").click();
  await page.getByTestId("pair-input").fill(link.url);
  await page.getByTestId("pair-submit").click();
  const preview = page.getByTestId("pair-preview");
  await expect(preview).toContainText(environmentId);
  await expect(preview).toContainText(`T3 ${V2_ENGINE.serverVersion}`);
  await page.getByTestId("pair-submit").click();
  await expect(page.getByTestId("pairing-dialog")).toBeHidden();
  await expect(envRow(page, environmentId)).toHaveAttribute("data-phase", "online");
  const lead = agentRow(page, environmentId, leadId);
  await expect(lead).toHaveAttribute("data-status", "idle");
  await expect(lead).toHaveAttribute("aria-level", "2");

  // A live run started on the engine's own UI shows running, then idle with the engine's reply
  // (buffered by the engine until its provider turn ends).
  await operator.send(leadId, "a long task");
  await expect(lead).toHaveAttribute("data-status", "running", { timeout: 20_000 });
  await lead.locator(".agent-title").click();
  await expect(lead).toHaveAttribute("data-status", "idle", { timeout: 30_000 });
  await expect(page.getByTestId("transcript")).toContainText("word30.");

  // A fork of the finished run is nested under it, from its lineage.
  const forkId = await operator.fork(leadId, "Lead's fork");
  const fork = agentRow(page, environmentId, forkId);
  await expect(fork).toHaveAttribute("aria-level", "3");

  // A message from the window: a new run, answered, stored once on the engine.
  await expect(page.getByTestId("intent")).toHaveAttribute("data-intent", "new-turn");
  await page.getByLabel("Message").fill("now summarise it");
  await page.getByLabel("Message").press("Enter");
  const delivery = page.locator('[data-testid="delivery"]').filter({ hasText: "now summarise it" });
  await expect(delivery).toHaveAttribute("data-state", "answered", { timeout: 30_000 });
  await expect(delivery).toHaveAttribute("data-outcome", "new-turn");
  await expect(page.getByTestId("message-assistant").last()).toContainText(REPLY);
  const stored = await operator.projection(leadId);
  expect(stored.messages.filter((message) => message.role === "user" && message.text === "now summarise it")).toHaveLength(1);
  expect(stored.messages.filter((message) => message.role === "assistant").at(-1)?.text).toBe(REPLY);
  operator.close();
});
