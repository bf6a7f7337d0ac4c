// An agent whose turn changed 100,000 files (a vendored tree checked in), in Debian's Chromium with
// the built renderer, on both protocols: time from the click to the agent view painted with its
// changes, time from "Whole thread's diff" to the diff view's first paint, the longest task of each,
// the page's JS heap growth over both (after a collection), and the page's element count. Prints
// figures with their targets (issue 43 point 2); asserts nothing.
//
// Workload: one machine per protocol whose agent's one turn adds 100,000 files of 1 to 3 lines
// (`#vendor:100000`, sim/changes.ts); the whole thread's diff is read from the simulator when shown.
import type { CDPSession, Page } from "playwright-core";
import { SimFleet } from "../sim/fleet";
import { createV2Thread } from "../sim/protocol2/fleet-hooks";
import { startPageRig } from "./page-rig";

const TEXT = "Vendor the dependencies #vendor:100000";

interface Marks {
  clickedAt: number;
  paintedAt: number;
  longestTask: number;
}

/** Page side: the next click's time, the first frame after `selector` holds `text`, and the longest task between. */
async function armPaint(page: Page, selector: string, text: string): Promise<void> {
  await page.evaluate(
    ([selector, text]) => {
      const marks = { clickedAt: 0, paintedAt: 0, longestTask: 0 };
      (globalThis as unknown as { __marks: typeof marks }).__marks = marks;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) if (marks.paintedAt === 0) marks.longestTask = Math.max(marks.longestTask, entry.duration);
      }).observe({ type: "longtask" });
      document.addEventListener("pointerdown", () => (marks.clickedAt ||= performance.now()), { capture: true, once: true });
      const check = () => document.querySelector(selector)?.textContent?.includes(text) === true;
      new MutationObserver((_, observer) => {
        if (!check()) return;
        observer.disconnect();
        requestAnimationFrame(() => (marks.paintedAt = performance.now()));
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    },
    [selector, text] as const,
  );
}

async function painted(page: Page): Promise<Marks> {
  await page.waitForFunction(() => (globalThis as unknown as { __marks: Marks }).__marks.paintedAt > 0, undefined, { timeout: 120_000 });
  // Long tasks are reported after they end: one frame more.
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(done)));
  return page.evaluate(() => (globalThis as unknown as { __marks: Marks }).__marks);
}

async function heapAfterCollection(cdp: CDPSession): Promise<number> {
  await cdp.send("HeapProfiler.collectGarbage");
  const metrics = (await cdp.send("Performance.getMetrics")).metrics;
  return metrics.find((metric) => metric.name === "JSHeapUsedSize")?.value ?? NaN;
}

async function measure(protocol: 1 | 2): Promise<void> {
  const sims = await SimFleet.start({ envs: 1, generations: [protocol === 1 ? "upstream" : "v2"], tickMs: 20 });
  const sim = protocol === 1 ? sims.servers[0]! : sims.v2Servers[0]!;
  const { service, shell, browser, close } = await startPageRig(sims, "large-turn");
  try {
    await service.request("pair.confirm", { input: sim.pairingUrl() });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.addInitScript("globalThis.__name = (fn) => fn;");
    await page.goto(shell.url);
    await page.waitForFunction(() => document.querySelector('[data-testid="env-row"][data-phase="online"]') !== null);
    const title = "Vendor the dependencies";
    const threadId =
      protocol === 1
        ? sims.createThread(sims.servers[0]!, { title, provider: "codex", text: TEXT })
        : createV2Thread(sims.v2Servers[0]!, { title, provider: "codex", text: TEXT });
    const row = page.locator(`[data-testid="agent-row"][data-key="${sim.environmentId}/${threadId}"]`);
    await row.locator('[data-testid="changes-tag"]').filter({ hasText: "100000 files" }).waitFor({ timeout: 120_000 });

    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Performance.enable");
    const heapBefore = await heapAfterCollection(cdp);

    await armPaint(page, '[data-testid="agent-panel"] [data-testid="latest-changes"]', "100000 files");
    await row.locator(".agent-title").click();
    const open = await painted(page);
    // The fold of every turn's files, opened: its first paint.
    await armPaint(page, '[data-testid="agent-panel"] [data-testid="more-files"]', "more files");
    await page.locator('[data-testid="changes-usage"] summary').click();
    const fold = await painted(page);

    // The diff view's first paint (its files, known before T3's diff is), then what T3 gave (the diff, or why it is not shown).
    await armPaint(page, '[data-testid="diff-view"] [data-testid="more-files"]', "more files");
    await page.locator('[data-testid="thread-diff"]').click();
    const diff = await painted(page);
    await page.waitForFunction(() => document.querySelector('[data-testid="diff-problem"], [data-testid="diff-lines"]') !== null, undefined, {
      timeout: 120_000,
    });
    const answered = await page.evaluate(() => new Promise<number>((done) => requestAnimationFrame(() => done(performance.now()))));
    const heapAfter = await heapAfterCollection(cdp);
    const elements = await page.evaluate(() => document.getElementsByTagName("*").length);
    const words = (await page.locator('[data-testid="diff-view"] [data-testid="more-files"]').textContent()) ?? "(no count of more files)";

    const ms = (marks: Marks, end = marks.paintedAt) => `${(end - marks.clickedAt).toFixed(0)} ms (longest task ${marks.longestTask.toFixed(0)} ms)`;
    console.log(`protocol ${protocol}: an agent whose one turn changed 100,000 files`);
    console.log(`  opening the agent, click to its changes painted: ${ms(open)}   (target < 200 ms)`);
    console.log(`  opening "All turns", click to the files painted: ${ms(fold)}`);
    console.log(`  whole thread's diff, click to its first paint (its files): ${ms(diff)}   (target < 500 ms)`);
    console.log(
      `  whole thread's diff, click to T3's diff painted: ${(answered - diff.clickedAt).toFixed(0)} ms (read from the simulator: too large to show, its files listed: "${words}")`,
    );
    console.log(`  page JS heap growth over both, after a collection: ${((heapAfter - heapBefore) / 1e6).toFixed(1)} MB   (target < 50 MB)`);
    console.log(`  elements in the page with the diff open: ${elements}`);
  } finally {
    await close();
  }
}

await measure(1);
await measure(2);
process.exit(0);
