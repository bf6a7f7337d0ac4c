// Search from the inbox and a machine away (issue 40 points 5, 6 and 9): a search says what it looks
// through and widens to the whole fleet in one step; a diff opened while its machine was away names
// the machine as of its last confirmation and loads by itself once it is back; "By project" and the
// palette name the machine away, as of when, never a bare "unknown".
import type { Locator, Page } from "@playwright/test";
import { agentRow, envRow, expect, test } from "./fixtures";

const PHONE_AND_LAPTOP = [
  { name: "1400x900", width: 1400, height: 900 },
  { name: "390x844", width: 390, height: 844 },
] as const;

/** A time of day as the window writes it (state/format.ts clockTime, in the browser's locale). */
const TIME = String.raw`\d\d:\d\d( [AP]M)?`;

test.describe("search from the inbox", () => {
  test.use({ startPane: "auto" });

  for (const size of PHONE_AND_LAPTOP) {
    test(`says what it searches, widens to the whole fleet, and the fleet says the query plainly at ${size.name}`, async ({ page, fleet }) => {
      await page.setViewportSize({ width: size.width, height: size.height });
      const [studio, workstation] = fleet.sims.servers as [(typeof fleet.sims.servers)[0], (typeof fleet.sims.servers)[0]];
      fleet.sims.createThread(studio, { title: "Deploy the release", text: "#approval" });
      const notes = fleet.sims.createThread(workstation, { title: "Tidy the release notes" });
      await fleet.pairAll();
      await page.goto(fleet.shell.url);
      await expect(page.getByTestId("inbox-row")).toHaveCount(1);
      await expect(agentRow(page, workstation.environmentId, notes)).toHaveCount(0);

      await page.keyboard.press("/");
      await page.keyboard.type("notes");
      const header = page.locator(".inbox-header");
      await expect(page.getByTestId("inbox-position")).toHaveText("1 hidden by the search");
      // Said once, not in the position and again in the hint.
      expect((await header.innerText()).match(/hidden/g), "what is hidden is said once").toHaveLength(1);
      const scope = page.getByTestId("search-scope");
      await expect(scope.getByTestId("search-scope-words")).toHaveText("Searching only what needs you for “notes”: 0 of them match.");
      const widen = scope.getByTestId("search-fleet");
      await expect(widen).toHaveText("Search the whole fleet (1 agent matches)");
      await expectInWidth(page, scope);

      await page.keyboard.press("Escape"); // out of the search box, the query kept
      await widen.click();
      await expect(page.getByTestId("view-fleet")).toHaveAttribute("aria-pressed", "true");
      await expect(agentRow(page, workstation.environmentId, notes)).toHaveAttribute("aria-selected", "true");
      await expect(scope.getByTestId("search-scope-words")).toHaveText("Searching the whole fleet for “notes”: 1 agent matches.");
      await expect(scope.getByTestId("search-fleet")).toHaveCount(0);
      await expectInWidth(page, scope);

      // Back in the inbox the same query is named there too; clearing it ends both.
      await page.keyboard.press("v");
      await expect(scope.getByTestId("search-scope-words")).toContainText("Searching only what needs you");
      await scope.getByTestId("search-clear").click();
      await expect(scope).toHaveCount(0);
      await expect(page.getByLabel("Search")).toHaveValue("");
      await expect(page.getByTestId("inbox-row")).toHaveCount(1);
    });
  }
});

async function expectInWidth(page: Page, locator: Locator): Promise<void> {
  const box = (await locator.boundingBox())!;
  expect(box.x + box.width, "it fits the window's width").toBeLessThanOrEqual(page.viewportSize()!.width + 1);
}

test.describe("a machine away", () => {
  test.use({ generations: ["upstream", "upstream"] });

  test("a diff opened while its machine is offline names it as of its last confirmation, and loads by itself once it is back", async ({ page, fleet }) => {
    const sim = fleet.sims.servers[0]!;
    await fleet.pairAll();
    await page.goto(fleet.shell.url);
    await expect(envRow(page, sim.environmentId)).toHaveAttribute("data-phase", "online");
    const threadId = fleet.sims.createThread(sim, { title: "Refactor the store", provider: "codex", text: "Refactor #edit:3" });
    const row = agentRow(page, sim.environmentId, threadId);
    await expect(row.getByTestId("changes-tag")).toHaveText(/^3 files /);

    await sim.kill();
    await expect(envRow(page, sim.environmentId)).not.toHaveAttribute("data-phase", "online");
    await row.click();
    await page.keyboard.press("c");
    const diff = page.getByTestId("diff-view");
    await expect(diff.getByTestId("diff-problem")).toHaveText(
      new RegExp(`^${sim.label} offline as of ${TIME}: the diff is read from T3, so it shows here by itself once ${sim.label} is back\\.$`),
    );

    await sim.start();
    // No key pressed, no turn chosen again: the diff is read once the machine is online.
    await expect(diff.getByTestId("diff-lines")).toContainText("README.md");
    await expect(diff.getByTestId("diff-problem")).toHaveCount(0);
  });

  test("By project and the palette name the machine away, as of its last confirmation, never a bare unknown", async ({ page, fleet }) => {
    const [studio, buildBox] = fleet.sims.servers as [(typeof fleet.sims.servers)[0], (typeof fleet.sims.servers)[0]];
    fleet.sims.createThread(studio, { title: "Write the changelog" });
    const watcher = fleet.sims.createThread(buildBox, { title: "Nightly build watcher" });
    fleet.sims.createThread(buildBox, { title: "Flaky test hunt" });
    await fleet.pairAll();
    await page.goto(fleet.shell.url);
    await expect(agentRow(page, buildBox.environmentId, watcher)).toHaveAttribute("data-status", "idle");
    await buildBox.kill();
    await expect(agentRow(page, buildBox.environmentId, watcher)).toHaveAttribute("data-status", "unknown");

    await page.getByTestId("group-project").click();
    const project = page.getByTestId("project-row").filter({ hasText: `${buildBox.label} repo` });
    await expect(project.getByTestId("project-away")).toHaveText(new RegExp(`^2 on ${buildBox.label} offline as of ${TIME}$`));
    await expect(project).not.toContainText("unknown");
    // The machine that is online counts as before.
    await expect(page.getByTestId("project-row").filter({ hasText: `${studio.label} repo` })).toContainText("1 idle");

    await page.keyboard.press("Control+k");
    await page.getByTestId("command-palette").getByLabel("Command").fill("Nightly build");
    const option = page.getByTestId("command-palette").locator('[data-kind="agent"]');
    await expect(option.locator(".palette-kind")).toHaveText(new RegExp(`^was idle · ${buildBox.label} offline as of ${TIME}$`));
  });
});
