// Accessibility: axe-core (injected from node_modules) finds no serious or critical issue on the
// fleet, the inbox, the agent view, an offline machine and the command palette.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "@playwright/test";
import { agentRow, expect, test } from "./fixtures";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** Serious and critical violations on the page as it is now, in words a failing test can show. */
async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ content: AXE_SOURCE });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run(document, { resultTypes: ["violations"] })).violations;
  });
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .flatMap((violation) => violation.nodes.map((node) => `${violation.id} (${violation.help}): ${node.target.join(" ")} — ${node.failureSummary ?? ""}`));
}

test.describe("axe", () => {
  // The page's CSP allows only its own scripts; the test injects axe-core's source beside them.
  test.use({ startPane: "auto", bypassCSP: true });

  test("no serious issue on the inbox, the fleet, the agent view, an offline machine and the palette", async ({ page, fleet }) => {
    const sim = fleet.sims.servers[0]!;
    const deployer = fleet.sims.createThread(sim, {
      title: "Deployer",
      text: "Ship it with `npm run release`\n\n```ts\nconst x = 1; // a comment\n```\n#approval",
    });
    fleet.sims.createThread(fleet.sims.servers[1]!, { title: "Builder", text: "#fail" });
    fleet.sims.createThread(fleet.sims.servers[2]!, { title: "Runner", text: "#hang" });
    fleet.sims.createThread(fleet.sims.servers[2]!, { title: "Resting" });
    await fleet.pairAll();
    await page.goto(fleet.shell.url);
    await expect(page.getByTestId("inbox-row")).toHaveCount(2);
    expect(await seriousViolations(page), "the inbox").toEqual([]);

    await page.getByTestId("view-fleet").click();
    await expect(agentRow(page, sim.environmentId, deployer)).toHaveAttribute("data-status", "needs-approval");
    expect(await seriousViolations(page), "the fleet").toEqual([]);

    await agentRow(page, sim.environmentId, deployer).getByRole("button", { name: "Deployer" }).click();
    await expect(page.getByTestId("transcript").getByTestId("message-user")).toBeVisible();
    expect(await seriousViolations(page), "the agent view").toEqual([]);

    await sim.kill();
    await expect(page.getByTestId("offline-banner")).toBeVisible();
    expect(await seriousViolations(page), "an offline machine").toEqual([]);

    await page.keyboard.press("Escape");
    await page.keyboard.press("Control+k");
    await page.getByTestId("command-palette").getByLabel("Command").fill("de");
    await expect(page.getByTestId("command-palette").getByRole("option").first()).toBeVisible();
    expect(await seriousViolations(page), "the command palette").toEqual([]);
  });
});
