// One dispatcher (renderer/src/state/dispatch.ts): a registry action pressed as its key, clicked as
// its button, chosen in the palette or sent by the tray runs the same handler with the same effect.
// The dispatcher announces each run on `window` (ACTION_RUN_EVENT); the page keeps them for the spec.
import type { Page } from "@playwright/test";
import { agentRow, expect, test } from "./fixtures";

interface CommandRun {
  id: string;
  source: string;
  handler: string;
}

async function recordCommandRuns(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const runs: unknown[] = [];
    (window as unknown as { commandRuns: unknown[] }).commandRuns = runs;
    window.addEventListener("t3fleet:command", (event) => runs.push((event as CustomEvent).detail));
  });
}

const commandRuns = (page: Page) => page.evaluate(() => (window as unknown as { commandRuns: CommandRun[] }).commandRuns);

async function runFromPalette(page: Page, query: string): Promise<void> {
  await page.getByTestId("open-palette").click();
  const palette = page.getByTestId("command-palette");
  await palette.getByLabel("Command").fill(query);
  await page.keyboard.press("Enter");
  await expect(palette).toHaveCount(0);
}

test("snooze: the key, the button and the palette run one handler with one effect", async ({ page, fleet }) => {
  const sim = fleet.sims.servers[0]!;
  const threads = ["Deployer", "Reviewer", "Migrator"].map((title) => fleet.sims.createThread(sim, { title, text: "#approval" }));
  await fleet.pairAll();
  await recordCommandRuns(page);
  await page.goto(fleet.shell.url);
  const panel = page.getByTestId("agent-panel");

  const snoozeEach: ((page: Page) => Promise<void>)[] = [
    (page) => page.keyboard.press("s"),
    (page) => page.getByTestId("snooze").click(),
    (page) => runFromPalette(page, "snooze until"),
  ];
  for (const [index, threadId] of threads.entries()) {
    const row = agentRow(page, sim.environmentId, threadId);
    await expect(row).toHaveAttribute("data-status", "needs-approval");
    await row.locator(".agent-title").click();
    await expect(panel.locator("h2")).toHaveText(["Deployer", "Reviewer", "Migrator"][index]!);
    await expect(panel.getByTestId("snoozed")).toHaveCount(0);
    await snoozeEach[index]!(page);
    await expect(panel.getByTestId("snoozed")).toBeVisible();
  }
  const snoozes = (await commandRuns(page)).filter((run) => run.id === "agent.snooze");
  expect(snoozes).toEqual([
    { id: "agent.snooze", source: "keys", handler: "snooze" },
    { id: "agent.snooze", source: "button", handler: "snooze" },
    { id: "agent.snooze", source: "palette", handler: "snooze" },
  ]);
});

test("settings: the key, the button, the palette and the tray's command over the bridge open the same dialog", async ({ page, fleet }) => {
  await fleet.pairAll();
  await recordCommandRuns(page);
  await page.goto(fleet.shell.url);
  await expect(page.getByTestId("fleet-summary")).toContainText("3 machines");
  const dialog = page.getByTestId("settings-dialog");

  const openEach: [string, () => Promise<void>][] = [
    ["keys", () => page.keyboard.press(",")],
    ["button", () => page.getByTestId("open-settings").click()],
    ["palette", () => runFromPalette(page, "settings")],
    // What electron/main/tray-commands.ts sends the window for a tray item.
    ["tray", async () => void fleet.service.emit("event", { type: "ui.command", id: "settings.open" })],
  ];
  for (const [, open] of openEach) {
    await expect(dialog).toHaveCount(0);
    await open();
    await expect(dialog).toBeVisible();
    await page.keyboard.press("Escape");
  }
  // An id the registry does not name is not run.
  fleet.service.emit("event", { type: "ui.command", id: "app.format-disk" } as never);
  fleet.service.emit("event", { type: "ui.command", id: "settings.open" });
  await expect(dialog).toBeVisible();
  const runs = await commandRuns(page);
  // Closing is an action too (Esc, and the palette closing as it runs its choice).
  expect(runs.map((run) => run.id)).toEqual([
    ...["settings.open", "settings.close", "settings.open", "settings.close"],
    ...["palette.open", "palette.close", "settings.open", "settings.close"],
    ...["settings.open", "settings.close", "settings.open"],
  ]);
  expect(runs.filter((run) => run.id === "settings.open")).toEqual(
    ["keys", "button", "palette", "tray", "tray"].map((source) => ({ id: "settings.open", source, handler: "openSettings" })),
  );
});
