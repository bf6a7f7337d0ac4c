// Records every change of the page's "needs you" surfaces as the page shows it: the top bar's count,
// the Inbox badge, the tab's title and its icon (colour variant and count). A MutationObserver in
// the page reads them after each DOM change and reports a changed value at once.
import type { Page } from "playwright-core";
import type { Surface } from "./verdict";

/** Kept a string: it runs in the page as is (no bundler helpers, no DOM types needed here). */
const RECORDER = `(() => {
  const last = {};
  const read = () => {
    const icon = document.querySelector('link[rel="icon"]');
    const count = document.querySelector('[data-testid="needs-you-count"]')?.textContent?.match(/^\\s*(\\d+)/);
    return {
      "top bar": count ? count[1] : null,
      "inbox badge": document.querySelector('[data-testid="inbox-count"]')?.textContent?.trim() || null,
      "tab title": document.title || null,
      favicon: icon && icon.dataset.variant ? icon.dataset.variant + " " + icon.dataset.count : null,
    };
  };
  const check = () => {
    for (const [surface, value] of Object.entries(read())) {
      if (value === null || value === last[surface]) continue;
      last[surface] = value;
      window.__needsSurface(surface, value);
    }
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ["data-variant", "data-count"] });
})();`;

/** Calls `onReading` with each new value of each surface, in the order the page showed them. Call before the page loads. */
export async function recordSurfaces(page: Pick<Page, "exposeBinding" | "addInitScript">, onReading: (surface: Surface, value: string) => void): Promise<void> {
  await page.exposeBinding("__needsSurface", (_source, surface: Surface, value: string) => onReading(surface, value));
  await page.addInitScript(RECORDER);
}
