// UI figures in Debian's Chromium: event to pixel, and scrolling a 10,000-agent fleet.
// Prints figures; asserts nothing.
import { SimFleet } from "../sim/fleet";
import { startPageRig } from "./page-rig";

const ENVS = 10;
const THREADS = 1_000;
const SAMPLES = 100;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const sims = await SimFleet.start({ envs: ENVS, seedThreads: THREADS, generations: ["fork"], tickMs: 20 });
const { service, shell, browser, close } = await startPageRig(sims, "ui");
try {
  for (const sim of sims.servers) await service.request("pair.confirm", { input: sim.pairingUrl() });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  // tsx keeps function names with a `__name` helper that the page does not have.
  await page.addInitScript("globalThis.__name = (fn) => fn;");
  await page.goto(shell.url);
  await page.waitForFunction((count) => document.querySelector('[data-testid="fleet-summary"]')?.textContent?.includes(`${count} agents`), ENVS * THREADS, {
    timeout: 60_000,
  });

  // Event to pixel: rename the first visible thread on the server, time until the new title is painted.
  const target = sims.servers.slice().sort((a, b) => a.label.localeCompare(b.label))[0]!;
  const latencies: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const title = `Task 0 · revision ${i}`;
    const painted = page.evaluate(
      (expected) =>
        new Promise<number>((done) => {
          const check = () => {
            if (document.querySelector('[data-testid="fleet-tree"]')?.textContent?.includes(expected)) {
              // The frame after the DOM change is when it reaches the screen.
              requestAnimationFrame(() => done(Date.now()));
              return true;
            }
            return false;
          };
          if (check()) return;
          const observer = new MutationObserver(() => check() && observer.disconnect());
          observer.observe(document.body, { subtree: true, childList: true, characterData: true });
        }),
      title,
    );
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(r)));
    const sentAt = Date.now();
    target.engine.dispatch({ type: "thread.meta.update", commandId: `bench-${i}`, threadId: "thread-0", title });
    latencies.push((await painted) - sentAt);
  }
  console.log(`event to pixel with ${ENVS * THREADS} agents: p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms   (target p99 < 100 ms)`);

  // Scrolling the whole virtualized list.
  const frames = await page.evaluate(async () => {
    const tree = document.querySelector('[data-testid="fleet-tree"]') as HTMLElement;
    const deltas: number[] = [];
    let last = performance.now();
    await new Promise<void>((done) => {
      const step = () => {
        const now = performance.now();
        deltas.push(now - last);
        last = now;
        tree.scrollTop += 600;
        if (tree.scrollTop + tree.clientHeight >= tree.scrollHeight - 1 || deltas.length > 900) done();
        else requestAnimationFrame(step);
      };
      requestAnimationFrame(step);
    });
    return { deltas: deltas.slice(1), rendered: tree.querySelectorAll('[data-testid="agent-row"]').length };
  });
  const longFrames = frames.deltas.filter((delta) => delta > 50).length;
  console.log(
    `scrolling ${ENVS * THREADS} agents: ${frames.deltas.length} frames, p50 ${percentile(frames.deltas, 50).toFixed(1)} ms, p95 ${percentile(frames.deltas, 95).toFixed(1)} ms, ${longFrames} over 50 ms; ${frames.rendered} rows in the DOM at once (virtualized)`,
  );
} finally {
  await close();
}
process.exit(0);
