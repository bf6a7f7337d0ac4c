// The diff view with a 10,000-line change (Debian Chromium, the built renderer): time from the `c`
// key to the first painted diff line, and the renderer busy share of a core while the diff is
// scrolled end to end. Prints figures; asserts nothing.
//
// Workload: one protocol-1 machine whose agent's turn adds one file of 10,000 lines (`#bigdiff`,
// sim/changes.ts); the diff is read from the simulator through the fleet service when shown.
import { SimFleet } from "../sim/fleet";
import { startPageRig } from "./page-rig";

const SCROLL_SECONDS = 5;

const sims = await SimFleet.start({ envs: 1, generations: ["upstream"], tickMs: 20 });
const sim = sims.servers[0]!;
const { service, shell, browser, close } = await startPageRig(sims, "diff");
try {
  await service.request("pair.confirm", { input: sim.pairingUrl() });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.addInitScript("globalThis.__name = (fn) => fn;");
  await page.goto(shell.url);
  await page.waitForFunction(() => document.querySelector('[data-testid="env-row"][data-phase="online"]') !== null);
  const threadId = sims.createThread(sim, { title: "Generate the table", provider: "codex", text: "Generate #bigdiff" });
  const row = page.locator(`[data-testid="agent-row"][data-key="${sim.environmentId}/${threadId}"]`);
  await row.locator('[data-testid="changes-tag"]').waitFor();
  await row.click();

  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable");
  const metric = async (name: string) => ((await cdp.send("Performance.getMetrics")).metrics.find((found) => found.name === name)?.value ?? 0) as number;
  const taskSeconds = () => metric("TaskDuration");
  // The main thread's CPU time: on a machine shared with other work, task durations (wall time) count the time the thread waited for a core.
  const threadSeconds = () => metric("ThreadTime");

  // Page side: the first animation frame after the first diff line is in the DOM.
  await page.evaluate(() => {
    const bench = { pressedAt: 0, paintedAt: 0 };
    (globalThis as unknown as { __bench: typeof bench }).__bench = bench;
    new MutationObserver((_, observer) => {
      if (!document.querySelector('[data-testid="diff-lines"] .diff-add')) return;
      observer.disconnect();
      requestAnimationFrame(() => (bench.paintedAt = performance.now()));
    }).observe(document.body, { subtree: true, childList: true });
    window.addEventListener("keydown", (event) => {
      if (event.key === "c" && bench.pressedAt === 0) bench.pressedAt = performance.now();
    });
  });
  await page.keyboard.press("c");
  await page.waitForFunction(() => (globalThis as unknown as { __bench: { paintedAt: number } }).__bench.paintedAt > 0, undefined, { timeout: 60_000 });
  const firstPaint = await page.evaluate(() => {
    const bench = (globalThis as unknown as { __bench: { pressedAt: number; paintedAt: number } }).__bench;
    return bench.paintedAt - bench.pressedAt;
  });
  const mounted = await page.locator('[data-testid="diff-lines"] .diff-line').count();

  // Scroll the whole diff at an even pace, one step per frame, for SCROLL_SECONDS.
  const busyBefore = await taskSeconds();
  const cpuBefore = await threadSeconds();
  const started = performance.now();
  const frames = (await page.evaluate(async (seconds) => {
    const element = document.querySelector('[data-testid="diff-lines"]') as HTMLElement;
    const durations: number[] = [];
    const start = performance.now();
    let last = start;
    await new Promise<void>((done) => {
      const step = () => {
        const now = performance.now();
        durations.push(now - last);
        last = now;
        const progress = Math.min(1, (now - start) / (seconds * 1000));
        element.scrollTop = progress * (element.scrollHeight - element.clientHeight);
        if (progress < 1) requestAnimationFrame(step);
        else done();
      };
      requestAnimationFrame(step);
    });
    return durations.slice(1);
  }, SCROLL_SECONDS)) as number[];
  const elapsed = (performance.now() - started) / 1000;
  const busy = (await taskSeconds()) - busyBefore;
  const cpu = (await threadSeconds()) - cpuBefore;
  const sorted = [...frames].sort((a, b) => a - b);
  const p = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  console.log(`diff of 10,000 added lines (one file), read from the simulator when shown:`);
  console.log(`  first paint of the diff after the key: ${firstPaint.toFixed(0)} ms   (target < 500 ms)`);
  console.log(`  diff lines mounted at first paint: ${mounted} of 10,006   (virtualized: only those in view)`);
  console.log(
    `  renderer busy while scrolling it end to end: ${((busy / elapsed) * 100).toFixed(1)} % of a core over ${elapsed.toFixed(1)} s   (target < 50 %)`,
  );
  console.log(`  renderer main thread CPU time while scrolling: ${((cpu / elapsed) * 100).toFixed(1)} % of a core   (target < 50 %)`);
  console.log(
    `  frame time while scrolling: p50 ${p(0.5).toFixed(1)} ms, p95 ${p(0.95).toFixed(1)} ms, ${frames.filter((f) => f > 50).length} of ${frames.length} over 50 ms`,
  );
} finally {
  await close();
}
process.exit(0);
