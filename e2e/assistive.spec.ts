// Small screens and assistive technology: the top bars leave a phone its room, an offline machine's
// rows keep the state they exist to show, a screen reader hears news (a new message, a notice, a
// length limit) and never keystrokes, agent switches or ticking times; a question opens on its safe
// answer; pairing a second machine named like the first asks first.
import { join } from "node:path";
import type { Page } from "@playwright/test";
import { SimServer } from "../sim/protocol1/server";
import { createV2Thread, sendV2Message } from "../sim/protocol2/fleet-hooks";
import { SCREENSHOTS, agentRow, envRow, expect, test } from "./fixtures";
import { SIZES } from "./sizes";

/**
 * Records every change a screen reader would announce: text that changes inside a live region
 * (aria-live other than off, or role status, alert or log) and outside aria-hidden content.
 */
async function listenToLiveRegions(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const heard: string[] = [];
    (window as unknown as { heard: string[] }).heard = heard;
    const liveRegion = (node: Node | null): Element | null => {
      for (let element = node instanceof Element ? node : (node?.parentElement ?? null); element; element = element.parentElement) {
        if (element.getAttribute("aria-hidden") === "true") return null;
        const live = element.getAttribute("aria-live");
        if (live === "off") return null;
        if (live || ["status", "alert", "log"].includes(element.getAttribute("role") ?? "")) return element;
      }
      return null;
    };
    new MutationObserver((mutations) => {
      for (const mutation of mutations) {
        // Text that appeared or changed; removals alone are not read.
        const added = mutation.type === "characterData" || [...mutation.addedNodes].some((node) => (node.textContent ?? "").trim() !== "");
        if (!added) continue;
        const region = liveRegion(mutation.target);
        if (region) heard.push((region.textContent ?? "").trim());
      }
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
}

const heard = (page: Page) => page.evaluate(() => [...(window as unknown as { heard: string[] }).heard]);

test.describe("assistive technology", () => {
  test.use({ startPane: "fleet" });

  test("typing a message is silent until near the limit; switching agents is silent; ticking times are silent; a new agent message is heard", async ({
    page,
    fleet,
  }) => {
    await listenToLiveRegions(page);
    await page.clock.install();
    const sim = fleet.sims.servers[0]!;
    const first = fleet.sims.createThread(sim, { title: "First agent", text: "port the parser" });
    const second = fleet.sims.createThread(sim, { title: "Second agent", text: "fix the build" });
    await fleet.pairAll();
    await page.goto(fleet.shell.url);
    // The notices region is there from the start, empty, so its first notice is heard.
    await expect(page.getByTestId("notices")).toHaveAttribute("aria-live", "polite");
    await expect(page.getByTestId("notices")).toHaveText("");
    await agentRow(page, sim.environmentId, first).locator(".agent-title").click();
    await expect(page.getByTestId("transcript").getByTestId("message-assistant")).toBeVisible();

    // Switching agents, back and forth, is not read out.
    let before = (await heard(page)).length;
    await agentRow(page, sim.environmentId, second).locator(".agent-title").click();
    await expect(page.getByTestId("agent-panel").locator("h2")).toHaveText("Second agent");
    await expect(page.getByTestId("transcript").getByTestId("message-assistant")).toBeVisible();
    await agentRow(page, sim.environmentId, first).locator(".agent-title").click();
    await expect(page.getByTestId("agent-panel").locator("h2")).toHaveText("First agent");
    await expect(page.getByTestId("transcript").getByTestId("message-assistant")).toBeVisible();
    expect((await heard(page)).slice(before), "announced on switching agents").toEqual([]);

    // Minutes pass: "Nm ago" moves on screen, not in anyone's ears.
    before = (await heard(page)).length;
    await page.clock.runFor(3 * 60_000);
    expect((await heard(page)).slice(before), "announced as time passed").toEqual([]);

    // Typing a message, key by key, is not read out.
    const textbox = page.getByTestId("composer").getByRole("textbox");
    before = (await heard(page)).length;
    await textbox.pressSequentially("now write the tests please", { delay: 0 });
    await expect(page.getByTestId("message-counter")).toContainText("26 /");
    expect((await heard(page)).slice(before), "announced while typing").toEqual([]);

    // Near the limit it says so once, and once more over it.
    const limit = Number((await page.getByTestId("message-counter").textContent())!.split("/")[1]!.replace(/[^0-9]/g, ""));
    await textbox.fill("x".repeat(limit - 10));
    await textbox.pressSequentially("abc", { delay: 0 });
    await textbox.fill("x".repeat(limit + 1));
    const limitWords = (await heard(page)).slice(before).filter((words) => /limit/.test(words));
    expect(limitWords).toEqual([expect.stringContaining("Near the limit"), expect.stringContaining("Too long to send")]);
    await textbox.fill("");

    // A reply that arrives while the agent is open is heard, once.
    before = (await heard(page)).length;
    fleet.sims.sendMessage(sim, first, "and add a changelog");
    await expect(page.getByTestId("transcript")).toContainText("reply to: and add a changelog");
    await expect.poll(async () => (await heard(page)).slice(before).filter((words) => words.startsWith("The agent wrote")).length).toBe(1);

    // The first notice is heard: its region was there, empty, from the start.
    before = (await heard(page)).length;
    await fleet.sims.servers[1]!.kill();
    await expect(page.getByTestId("notice").filter({ hasText: "is offline" })).toHaveCount(1);
    await expect.poll(async () => (await heard(page)).slice(before).some((words) => words.includes("is offline"))).toBe(true);
  });
});

test("at 390×844 the top bars take at most 120 px, and their actions are one menu away", async ({ page, fleet }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  const sim = fleet.sims.servers[0]!;
  fleet.sims.createThread(sim, { title: "Deployer", text: "#approval" });
  fleet.sims.createThread(fleet.sims.servers[1]!, { title: "Builder", text: "#fail" });
  await fleet.pairAll();
  await page.goto(fleet.shell.url);
  await expect(page.getByTestId("needs-you-count")).toHaveText("2 need you");
  // The bars above the list, without the notices between them and the list (a notice comes and goes with what it says).
  const barsHeight = () =>
    page.evaluate(() => {
      const main = document.querySelector("main")!.getBoundingClientRect().top;
      const notices = document.querySelector("[data-testid=notices]")?.getBoundingClientRect().height ?? 0;
      return main - notices;
    });
  expect(await barsHeight(), "top bars on the fleet").toBeLessThanOrEqual(120);
  await page.screenshot({ path: join(SCREENSHOTS, "top-bars-390x844.png") });
  await page.getByTestId("view-inbox").click();
  await expect(page.getByTestId("inbox-row")).toHaveCount(2);
  expect(await barsHeight(), "top bars on the inbox").toBeLessThanOrEqual(120);

  await page.getByTestId("view-fleet").click();
  await page.getByTestId("filters-menu-toggle").click();
  await page.getByTestId("filter-failed").click();
  await expect(page.getByTestId("agent-row")).toHaveCount(1);
  await expect(page.getByTestId("filters-menu-toggle")).toHaveText("Filters (on)");
  await page.getByTestId("filter-failed").click();
  await expect(page.getByTestId("filters-menu-toggle")).toHaveText("Filters");
  await page.getByTestId("filters-menu-toggle").click();
  await expect(page.getByTestId("filter-failed")).toBeHidden();

  // A machine going offline does not make the header taller.
  await fleet.sims.servers[1]!.kill();
  await expect(envRow(page, fleet.sims.servers[1]!.environmentId)).not.toHaveAttribute("data-phase", "online");
  expect(await barsHeight(), "top bars with a machine offline").toBeLessThanOrEqual(120);
  await page.getByTestId("topbar-menu-toggle").click();
  await expect(page.getByTestId("open-pairing")).toBeVisible();
  await page.screenshot({ path: join(SCREENSHOTS, "top-bar-menu-390x844.png") });
  await page.getByTestId("open-pairing").click();
  await expect(page.getByTestId("pairing-dialog")).toBeVisible();
  await expect(page.getByTestId("open-pairing")).toBeHidden();
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("pairing-dialog")).toHaveCount(0);
});

for (const size of SIZES) {
  test(`at ${size.name} an offline machine's rows keep their state readable, and machine summaries are never cut`, async ({ page, fleet }) => {
    await page.setViewportSize({ width: size.width, height: size.height });
    const sim = fleet.sims.servers[0]!;
    const running = fleet.sims.createThread(sim, { title: `Migrate the ${"billing ".repeat(8)}service`, text: "#hang" });
    const busy = fleet.sims.servers[1]!;
    // A machine with a long summary: every kind of count beside its ⋯ button.
    const other = fleet.sims.createThread(busy, { title: "Elsewhere" });
    for (const text of ["#approval", "#input", "#fail", "#hang", "#hang"]) fleet.sims.createThread(busy, { title: `Busy ${text}`, text });
    await fleet.pairAll();
    await page.goto(fleet.shell.url);
    await expect(agentRow(page, sim.environmentId, running)).toHaveAttribute("data-status", "running");
    await expect(envRow(page, busy.environmentId).locator(".count")).toHaveCount(5);
    await sim.kill();
    const asOf = agentRow(page, sim.environmentId, running).getByTestId("as-of");
    await expect(asOf).toBeVisible();
    await expect(asOf).toContainText("was running");
    await expect(envRow(page, sim.environmentId).getByTestId("env-phase")).toContainText("offline");
    const truncated = async (what: string) => {
      const cut = await page.evaluate(() =>
        [...document.querySelectorAll<HTMLElement>('[data-testid="as-of"], [data-testid="env-phase"], .env-facts .counts, .env-facts .count')]
          .filter((element) => element.getClientRects().length > 0 && element.scrollWidth > element.clientWidth + 1)
          .map((element) => element.textContent),
      );
      expect(cut, what).toEqual([]);
    };
    await truncated("the fleet");
    await agentRow(page, busy.environmentId, other).locator(".agent-title").click();
    await expect(page.getByTestId("agent-panel")).toBeVisible();
    // Wide windows keep the fleet beside the agent: its rows must still read in full.
    if (await envRow(page, sim.environmentId).isVisible()) await truncated("the fleet beside an open agent");
  });
}

test.describe("protocol 2", () => {
  test.use({ generations: ["v2"] });

  test("the interrupt question opens on its safe answer: Keep running has the focus", async ({ page, fleet }) => {
    const v2 = fleet.sims.v2Servers[0]!;
    const threadId = createV2Thread(v2, { title: "Port the parser", provider: "claudeAgent", text: "Port the parser #hold" });
    sendV2Message(v2, threadId, "Then update the docs");
    await fleet.pairAll();
    await page.goto(fleet.shell.url);
    await agentRow(page, v2.environmentId, threadId).locator(".agent-title").click();
    await expect(page.getByTestId("transcript").locator('[data-testid="message-user"][data-queue="queued"]')).toHaveCount(1);
    await page.getByTestId("interrupt").click();
    await expect(page.getByTestId("interrupt-confirm")).toBeVisible();
    await expect(page.getByTestId("interrupt-keep-running")).toBeFocused();
    // So Enter answers safely: the turn keeps running, and focus is back on the button that asked.
    await page.keyboard.press("Enter");
    await expect(page.getByTestId("interrupt-confirm")).toHaveCount(0);
    await expect(page.getByTestId("interrupt")).toBeFocused();
    await expect(agentRow(page, v2.environmentId, threadId)).toHaveAttribute("data-status", "running");

    // Asked by its key from the heading: Esc keeps it running and leaves the agent open, focus back on the heading.
    const heading = page.getByTestId("agent-panel").locator("h2");
    await heading.focus();
    await page.keyboard.press("i");
    await expect(page.getByTestId("interrupt-keep-running")).toBeFocused();
    await page.keyboard.press("Escape");
    await expect(page.getByTestId("interrupt-confirm")).toHaveCount(0);
    await expect(heading).toBeFocused();
    await expect(page.getByTestId("agent-panel")).toBeVisible();
    await expect(agentRow(page, v2.environmentId, threadId)).toHaveAttribute("data-status", "running");
  });
});

test("pairing a second machine named like one already paired asks first, and tells them apart", async ({ page, fleet }) => {
  const first = fleet.sims.servers[0]!;
  await fleet.service.request("pair.confirm", { input: first.pairingUrl() });
  const twin = await new SimServer({ generation: "upstream", label: first.label, tickMs: 40 }).start();
  try {
    await page.goto(fleet.shell.url);
    await expect(envRow(page, first.environmentId)).toHaveAttribute("data-phase", "online");
    await page.getByTestId("open-pairing").click();
    await page.getByTestId("pair-input").fill(twin.pairingUrl());
    await page.getByTestId("pair-submit").click();
    const question = page.getByTestId("pair-same-name");
    await expect(question).toContainText(`You already have a machine named ${first.label}`);
    await expect(question).toContainText(twin.baseUrl);
    await expect(page.getByTestId("pair-label")).toHaveValue(`${first.label} (2)`);

    // The same name again needs a yes.
    await page.getByTestId("pair-label").fill(first.label);
    await expect(page.getByTestId("pair-submit")).toBeDisabled();
    await page.getByTestId("pair-same-name-ok").check();
    await expect(page.getByTestId("pair-submit")).toBeEnabled();
    await page.getByTestId("pair-label").fill(`${first.label} (2)`);
    await page.getByTestId("pair-submit").click();
    await expect(page.getByTestId("pairing-dialog")).toHaveCount(0);
    await expect(envRow(page, twin.environmentId).getByTestId("env-label")).toHaveText(`${first.label} (2)`);
    await expect(envRow(page, first.environmentId).getByTestId("env-label")).toHaveText(first.label);
  } finally {
    await twin.stop();
  }
});
