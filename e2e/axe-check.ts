// axe-core injected from node_modules into the page (the spec needs `bypassCSP: true`): every
// violation on the page as it is now, whatever its impact, in words a failing test can show.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "@playwright/test";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

export async function violations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ content: AXE_SOURCE });
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run(document, { resultTypes: ["violations"] })).violations;
  });
  return found.flatMap((violation) =>
    violation.nodes.map((node) => `${violation.impact ?? "?"} ${violation.id} (${violation.help}): ${node.target.join(" ")} — ${node.failureSummary ?? ""}`),
  );
}
