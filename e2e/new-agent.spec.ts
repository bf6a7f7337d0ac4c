// Starting work from the fleet (issue 42), keyboard only, at a laptop's and a phone's width: the
// palette finds "New agent on…" by "new", "start" and "create"; the form offers each machine's
// projects, harnesses and models as its T3 lists them (a missing harness said, not offered); an
// empty message is refused before anything is sent; a new agent opens in the agent view with its
// receipt created → started → replied; "New child of this agent" starts one under it, shown there;
// "New project…" adds a folder on the machine as a project (refused in words until it is an absolute
// path) and starts the agent in it, its message previewed as markdown first. axe-core finds no
// violation in the form.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "@playwright/test";
import { createV2Thread } from "../sim/protocol2/fleet-hooks";
import { join } from "node:path";
import { SCREENSHOTS, expect, test } from "./fixtures";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

async function violations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ content: AXE_SOURCE });
  const found = await page.evaluate(async () => {
    type Violation = { id: string; impact: string | null; nodes: { target: string[] }[] };
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: Violation[] }> } }).axe;
    return (await axe.run(document, { resultTypes: ["violations"] })).violations;
  });
  return found.flatMap((violation) => violation.nodes.map((node) => `${violation.impact ?? "?"} ${violation.id}: ${node.target.join(" ")}`));
}

/** Tabs forward until the element with this test id has focus (keyboard only, whatever lies between). */
async function tabTo(page: Page, testId: string): Promise<void> {
  for (let step = 0; step < 25; step++) {
    if (await page.evaluate((id) => document.activeElement?.getAttribute("data-testid") === id, testId)) return;
    await page.keyboard.press("Tab");
  }
  throw new Error(`Tab never reached ${testId}`);
}

/** Opens the palette, types the words and runs the first match. */
async function palette(page: Page, words: string): Promise<void> {
  await page.keyboard.press("Control+k");
  await page.keyboard.type(words);
  await expect(page.getByTestId("command-palette").locator('[aria-selected="true"]')).toHaveAttribute("data-command", /agent\.new/);
  await page.keyboard.press("Enter");
}

const SIZES = [
  { name: "1400x900", width: 1400, height: 900 },
  { name: "390x844", width: 390, height: 844 },
] as const;

test.describe("New agent", () => {
  // axe is injected as a script, which the page's CSP refuses unless bypassed (as e2e/axe.spec.ts does).
  test.use({ generations: ["upstream", "v2"], bypassCSP: true });

  for (const size of SIZES) {
    test(`starts an agent and a child from the palette, keyboard only, at ${size.name}`, async ({ page, fleet }) => {
      await page.setViewportSize({ width: size.width, height: size.height });
      // The dispatcher announces each command it runs (state/dispatch.ts ACTION_RUN_EVENT); the page keeps them.
      await page.addInitScript(() => {
        const runs: unknown[] = [];
        (window as unknown as { commandRuns: unknown[] }).commandRuns = runs;
        window.addEventListener("t3fleet:command", (event) => runs.push((event as CustomEvent).detail));
      });
      const [upstream] = fleet.sims.servers;
      const [v2] = fleet.sims.v2Servers;
      fleet.sims.createThread(upstream!, { title: "Existing work" });
      createV2Thread(v2!, { title: "Other work" });
      await fleet.pairAll();
      await page.goto(fleet.shell.url);
      await expect(page.getByTestId("env-row")).toHaveCount(2);

      // Its key opens the form too; Esc closes it.
      await page.keyboard.press("Shift+N");
      await expect(page.getByTestId("new-agent-dialog")).toBeVisible();
      await page.keyboard.press("Escape");
      await expect(page.getByTestId("new-agent-dialog")).toHaveCount(0);
      for (const words of ["start", "create"]) {
        await page.keyboard.press("Control+k");
        await page.keyboard.type(words);
        await expect(page.getByTestId("command-palette").locator('[data-command="agent.new"]')).toHaveCount(1);
        await page.keyboard.press("Escape");
      }
      await palette(page, "new");
      const dialog = page.getByTestId("new-agent-dialog");
      await expect(dialog).toBeVisible();
      await expect(page.getByTestId("new-agent-machine")).toBeFocused();
      // The first machine by name is read: studio-mac, the protocol-1 one, whose Grok is missing.
      await expect(page.getByTestId("new-agent-machine")).toHaveValue(upstream!.environmentId);
      await expect(page.getByTestId("new-agent-harness").locator("option", { hasText: "Grok" })).toBeDisabled();
      await expect(page.getByTestId("new-agent-harness").locator("option", { hasText: "Grok" })).toContainText("not installed");
      await expect(page.getByTestId("new-agent-project").locator("option")).toContainText([/\/home\/user\//]);
      expect(await violations(page), "the New agent form").toEqual([]);
      await page.screenshot({ path: join(SCREENSHOTS, `new-agent-${size.name}.png`) });
      const box = await dialog.boundingBox();
      expect(box!.x >= 0 && box!.x + box!.width <= size.width, "the form fits the window's width").toBe(true);

      // Nothing is sent without a first message.
      await tabTo(page, "new-agent-message");
      await page.keyboard.press("Control+Enter");
      await expect(page.getByTestId("new-agent-error")).toHaveText("Write the first message: the agent starts with it.");
      const before = upstream!.engine.threads.size;
      expect(upstream!.engine.threads.size).toBe(before);

      await page.keyboard.type("Summarise the open issues\nthen say hello");
      await page.keyboard.press("Control+Enter");
      await expect(dialog).toHaveCount(0);
      const panel = page.getByTestId("agent-panel");
      await expect(panel.locator("h2")).toHaveText("Summarise the open issues");
      const receipt = page.getByTestId("creation").filter({ hasText: "Summarise the open issues" });
      await expect(receipt.getByTestId("creation-words")).toHaveText(" · created → started → replied");
      await page.screenshot({ path: join(SCREENSHOTS, `new-agent-replied-${size.name}.png`) });
      expect(upstream!.engine.threads.size).toBe(before + 1);

      // A child of the open agent, from the palette: on its machine, with it as the parent.
      await palette(page, "child");
      await expect(dialog.locator("h2")).toHaveText("New child of this agent");
      await expect(page.getByTestId("new-agent-parent").locator("option:checked")).toHaveText("Summarise the open issues");
      await tabTo(page, "new-agent-title-input");
      await page.keyboard.type("Check the tests");
      await tabTo(page, "new-agent-message");
      await page.keyboard.type("Run the tests");
      await page.keyboard.press("Control+Enter");
      await expect(panel.locator("h2")).toHaveText("Check the tests");
      await expect(page.getByTestId("creation").filter({ hasText: "Check the tests" }).getByTestId("creation-words")).toHaveText(
        " · created → started → replied",
      );
      const child = [...upstream!.engine.threads.keys()].find((id) => id.startsWith("sub."))!;
      const parent = [...upstream!.engine.threads.values()].find((thread) => thread.title === "Summarise the open issues")!.id;
      expect(child.startsWith(`sub.${parent}.`)).toBe(true);
      // Each way in ran the one dispatcher's handler.
      const runs = await page.evaluate(() => (window as unknown as { commandRuns: { id: string; source: string; handler: string }[] }).commandRuns);
      expect(runs.filter((run) => run.id.startsWith("agent.new"))).toEqual([
        { id: "agent.new", source: "keys", handler: "openNewAgent" },
        { id: "agent.new", source: "palette", handler: "openNewAgent" },
        { id: "agent.new-child", source: "palette", handler: "openNewAgent" },
      ]);
      // Back on the list, the child shows under its parent.
      await page.keyboard.press("Escape");
      const row = page.locator(`[data-testid="agent-row"][data-key="${upstream!.environmentId}/${child}"]`);
      await expect(row).toHaveCount(1);
      const parentLevel = Number(await page.locator(`[data-testid="agent-row"][data-key="${upstream!.environmentId}/${parent}"]`).getAttribute("aria-level"));
      await expect(row).toHaveAttribute("aria-level", String(parentLevel + 1));
    });
  }

  for (const size of SIZES) {
    test(`a new project on a machine and an agent in it, the message previewed as markdown, keyboard only, at ${size.name}`, async ({ page, fleet }) => {
      await page.setViewportSize({ width: size.width, height: size.height });
      const [upstream] = fleet.sims.servers;
      const [v2] = fleet.sims.v2Servers;
      await fleet.pairAll();
      await page.goto(fleet.shell.url);
      await expect(page.getByTestId("env-row")).toHaveCount(2);
      // At the laptop's width on the protocol-1 machine (dispatch API); at the phone's on the protocol-2 one (projects.mutate).
      const onV2 = size.width < 800;
      const sim = onV2 ? v2! : upstream!;
      const projectsNamed = (title: string) => [...sim.engine.projects.values()].filter((project) => project.title === title);
      await page.keyboard.press("Shift+N");
      const dialog = page.getByTestId("new-agent-dialog");
      await expect(page.getByTestId("new-agent-machine")).toBeFocused();
      // Chosen once it can be (on a loaded machine a connection may drop and come back meanwhile).
      if (onV2) {
        await expect(page.getByTestId("new-agent-machine").locator("option", { hasText: v2!.label })).toBeEnabled();
        await page.keyboard.press("ArrowDown");
      }
      await expect(page.getByTestId("new-agent-machine")).toHaveValue(sim.environmentId);
      await expect(page.getByTestId("new-agent-project").locator("option").last()).toHaveText("New project…");

      await tabTo(page, "new-agent-project");
      await page.keyboard.press("End");
      await expect(page.getByTestId("new-agent-project")).toHaveValue("+new-project");
      await expect(page.getByTestId("new-agent-new-project")).toContainText("T3 creates it if you tick the box; otherwise it must exist there");
      await tabTo(page, "new-project-title");
      await page.keyboard.type("api service");
      await tabTo(page, "new-project-folder");
      await page.keyboard.type("api-service");
      await tabTo(page, "new-agent-message");
      await page.keyboard.type("**Start** the `api` service");
      // A folder that is not an absolute path on that machine is refused before anything is sent.
      await page.keyboard.press("Control+Enter");
      await expect(page.getByTestId("new-agent-error")).toHaveText(
        'The folder must be an absolute path on that machine (starting with / or ~), not "api-service".',
      );
      expect(projectsNamed("api service")).toHaveLength(0);
      await page.getByTestId("new-project-folder").focus();
      await page.keyboard.press("Home");
      await page.keyboard.type("/home/user/");
      await tabTo(page, "new-project-create-folder");
      await page.keyboard.press("Space");
      await expect(page.getByTestId("new-project-create-folder")).toBeChecked();

      // Preview shows the message as the agent view will; Write brings the text back as it was.
      await tabTo(page, "new-agent-preview");
      await page.keyboard.press("Enter");
      const preview = page.getByTestId("new-agent-message-preview");
      await expect(preview.locator("strong")).toHaveText("Start");
      await expect(preview.locator("code")).toHaveText("api");
      await expect(page.getByTestId("new-agent-counter")).toContainText("27 / 100,000");
      expect(await violations(page), "the form with a new project and the preview").toEqual([]);
      const box = await dialog.boundingBox();
      expect(box!.x >= 0 && box!.x + box!.width <= size.width, "the form fits the window's width").toBe(true);
      await page.screenshot({ path: join(SCREENSHOTS, `new-agent-new-project-${size.name}.png`) });
      await page.keyboard.press("Shift+Tab");
      await expect(page.getByTestId("new-agent-write")).toBeFocused();
      await page.keyboard.press("Enter");
      await expect(page.getByTestId("new-agent-message")).toHaveValue("**Start** the `api` service");

      await page.keyboard.press("Control+Enter");
      await expect(dialog).toHaveCount(0);
      const receipt = page.getByTestId("creation").filter({ hasText: "**Start** the `api` service" });
      await expect(receipt.getByTestId("creation-words")).toHaveText(" · created → started → replied");
      await expect(page.getByTestId("agent-panel").locator("h2")).toHaveText("**Start** the `api` service");
      // On T3, once: the project with its folder, and the agent's thread in it.
      expect(projectsNamed("api service").map((project) => project.workspaceRoot)).toEqual(["/home/user/api-service"]);
    });
  }

  test("a machine that is offline is shown with when it was last seen, and nothing can be sent to it", async ({ page, fleet }) => {
    const [upstream] = fleet.sims.servers;
    const [v2] = fleet.sims.v2Servers;
    fleet.sims.createThread(upstream!, { title: "Existing work" });
    await fleet.pairAll();
    await page.goto(fleet.shell.url);
    await expect(page.getByTestId("env-row")).toHaveCount(2);
    await upstream!.stop();
    await v2!.stop();
    await expect(page.locator('[data-testid="env-row"][data-phase="offline"]')).toHaveCount(2);
    await page.keyboard.press("Shift+N");
    await expect(page.getByTestId("new-agent-machine-note")).toContainText(/is offline, last seen \d\d:\d\d( [AP]M)?\./);
    await expect(page.getByTestId("new-agent-machine").locator("option", { hasText: "studio-mac" })).toBeDisabled();
    await tabTo(page, "new-agent-message");
    await page.keyboard.type("Anyone there?");
    await page.keyboard.press("Control+Enter");
    await expect(page.getByTestId("new-agent-error")).toHaveText("No paired machine can take a new agent now: each says why above.");
    expect(await violations(page), "the form with no machine to choose").toEqual([]);
  });
});
