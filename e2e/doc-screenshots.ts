// The README's screenshots live in docs/screenshots/ (committed, small PNGs). Specs refresh them only
// when asked (`T3FLEET_DOC_SCREENSHOTS=1 npx playwright test e2e/inbox.spec.ts`), so an ordinary test
// run never rewrites files in the checkout.
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "@playwright/test";

export const DOCS_SCREENSHOTS = join(resolve(dirname(fileURLToPath(import.meta.url)), ".."), "docs/screenshots");

export async function docScreenshot(page: Page, name: string): Promise<void> {
  if (process.env.T3FLEET_DOC_SCREENSHOTS !== "1") return;
  await page.screenshot({ path: join(DOCS_SCREENSHOTS, name), scale: "css", animations: "disabled", caret: "hide" });
}
