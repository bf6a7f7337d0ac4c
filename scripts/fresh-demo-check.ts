// Loads the demo's page from its printed link (scripts/fresh-demo.sh): in Debian's Chromium where
// it is installed, the fleet tree shows the demo's machines and the page says where tokens are
// kept; on a machine without a browser yet, the page and every script and style it names answer.
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";

const link = process.argv[2];
if (!link) throw new Error("usage: fresh-demo-check.ts <the demo's link>");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

async function withoutBrowser(url: URL): Promise<void> {
  const page = await fetch(url);
  if (!page.ok) throw new Error(`GET ${url.pathname}: HTTP ${page.status}`);
  const html = await page.text();
  const assets = [...html.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((match) => match[1]!);
  if (!assets.some((asset) => asset.endsWith(".js"))) throw new Error("the page names no script");
  for (const asset of assets) {
    const answer = await fetch(new URL(asset, url));
    if (!answer.ok) throw new Error(`GET ${asset}: HTTP ${answer.status}`);
  }
  console.log(`fresh-demo: no browser here yet; the page and its ${assets.length} assets answered`);
}

async function inChromium(url: URL): Promise<void> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    // The window opens on the inbox when something needs the user; the tree is what shows every machine.
    await page.addInitScript(() => sessionStorage.setItem("t3fleet.pane", "fleet"));
    await page.goto(url.href);
    const rows = page.getByTestId("fleet-tree").getByRole("treeitem");
    await rows.first().waitFor({ timeout: 60_000 });
    await page.getByText("Tokens are kept", { exact: false }).first().waitFor({ timeout: 10_000 });
    if (errors.length) throw new Error(`the page threw: ${errors.join("; ")}`);
    console.log(`fresh-demo: the page loaded in Chromium with ${await rows.count()} rows and says where tokens are kept`);
  } finally {
    await browser.close();
  }
}

const url = new URL(link);
await (existsSync(CHROMIUM) ? inChromium(url) : withoutBrowser(url));
