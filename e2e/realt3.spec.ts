// The fleet window in Chromium, through the headless shell, against the real T3 0.0.42 server
// (electron/fleet/realt3/harness.testkit.ts). Runs inside a private network namespace with the
// real-server suite (playwright.realt3.config.ts, scripts/realt3.sh).
import { expect } from "@playwright/test";
import { RELEASED_T3 } from "../electron/fleet/realt3/harness.testkit";
import { T3Operator } from "../electron/fleet/realt3/operator.testkit";
import { agentRow, envRow } from "./fixtures";
import { realFleetTest } from "./realt3-fixture";

const REPLY = "Hello from the real T3 server.";
const test = realFleetTest(RELEASED_T3, REPLY);

// The server starts inside the fixture, which counts toward the test's time (the V2 engine: 10-40 s on a loaded machine).
test.describe.configure({ timeout: 120_000 });

test("pairs a real T3 server by link in the window, follows a live turn and sends a message", async ({ page, real }) => {
  const { server } = real;
  const operator = await T3Operator.start(server);
  const projectId = await operator.createProject("Window project");
  const parentId = await operator.createThread(projectId, "Lead");
  const childId = await operator.createThread(projectId, "Helper", `sub.${parentId}.helper`);
  const link = await server.pairingLink();
  const environmentId = ((await (await fetch(`${server.baseUrl}/.well-known/t3/environment`)).json()) as { environmentId: string }).environmentId;

  await page.goto(real.shell.url);
  await page.getByTestId("open-pairing").click();
  await page.getByTestId("pair-input").fill(link.url);
  await page.getByTestId("pair-submit").click();
  const preview = page.getByTestId("pair-preview");
  await expect(preview).toContainText(environmentId);
  await expect(preview).toContainText("T3 0.0.42");
  await page.getByTestId("pair-submit").click();
  await expect(page.getByTestId("pairing-dialog")).toBeHidden();
  await expect(envRow(page, environmentId)).toHaveAttribute("data-phase", "online");
  const child = agentRow(page, environmentId, childId);
  await expect(child).toHaveAttribute("data-status", "idle");
  await expect(child).toHaveAttribute("aria-level", "3");

  // A live turn started on the server's own UI shows running, then idle with T3's reply.
  await operator.startTurn(childId, "a long task");
  await expect(child).toHaveAttribute("data-status", "running", { timeout: 20_000 });
  await child.locator(".agent-title").click();
  await expect(child).toHaveAttribute("data-status", "idle", { timeout: 20_000 });
  await expect(page.getByTestId("transcript")).toContainText("word30.");

  // A message from the window: a new turn, answered, stored once on the server.
  await expect(page.getByTestId("intent")).toHaveAttribute("data-intent", "new-turn");
  await page.getByLabel("Message").fill("now summarise it");
  await page.getByLabel("Message").press("Enter");
  const delivery = page.locator('[data-testid="delivery"]').filter({ hasText: "now summarise it" });
  await expect(delivery).toHaveAttribute("data-state", "answered", { timeout: 20_000 });
  await expect(delivery).toHaveAttribute("data-outcome", "new-turn");
  await expect(page.getByTestId("message-assistant").last()).toContainText(REPLY);
  const stored = await operator.thread(childId);
  expect(stored.messages.filter((message) => message.role === "user" && message.text === "now summarise it")).toHaveLength(1);
  expect(stored.messages.filter((message) => message.role === "assistant").at(-1)?.text).toBe(REPLY);
});
