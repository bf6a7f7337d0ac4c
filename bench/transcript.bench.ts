// The page with a long transcript open while turns stream (Debian Chromium, the built renderer):
// renderer busy share of a core, frame times, token-to-pixel latency, and the bytes and frames the
// bridge sends to the page per minute of streaming. Prints figures; asserts nothing.
//
// Workload: one protocol-1 machine (upstream, token streaming) with the open thread seeded with
// HISTORY messages (markdown with code), and STREAMING turns streaming word by word at once, the
// open one among them. Token to pixel: the server-side time each numbered word was appended to the
// engine, against the page-side time (same machine clock) of the first animation frame after the
// word reached the transcript's DOM.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { BridgeEvent } from "../shared/bridge/contract";
import { SimFleet } from "../sim/fleet";
import { startPageRig } from "./page-rig";

const STREAMING = 5;
const STREAM_SECONDS = Number(process.env.BENCH_STREAM_SECONDS ?? 20);
const IDLE_SECONDS = 10;
/** T3's own web client received 3.6 MB per minute of streaming on the same kind of workload (measured against real T3 0.0.42). */
const T3_WEB_BYTES_PER_MINUTE = 3.6e6;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const CODE = ["```ts", "export function add(a: number, b: number): number {", "  return a + b; // sum", "}", "```"].join("\n");
function historyText(index: number): string {
  return index % 2 === 0
    ? `Please change **module ${index}** and run the tests.`
    : `Done with step ${index}:\n\n- edited \`src/module-${index}.ts\`\n- ran \`npm test\`\n\n${CODE}\n\nAll green.`;
}

async function measure(history: number) {
  const sims = await SimFleet.start({ envs: 1, generations: ["upstream"], tickMs: 40 });
  const sim = sims.servers[0]!;
  // Word-by-word deltas, as upstream T3 sends with legacy token streaming.
  sim.agents.options.tokenStreaming = true;
  const { service, shell, browser, close } = await startPageRig(sims, "transcript");
  try {
    // The open thread's history, appended straight to the simulator's event log.
    const open = sims.createThread(sim, { title: "Long history" });
    const turnId = "turn-history";
    for (let index = 0; index < history; index++) {
      const at = sim.engine.now();
      sim.engine.append("thread", open, "thread.message-sent", "provider:seed", {
        threadId: open,
        messageId: `history-${index}`,
        role: index % 2 === 0 ? "user" : "assistant",
        text: historyText(index),
        turnId,
        streaming: false,
        createdAt: at,
        updatedAt: at,
      });
    }
    const others = Array.from({ length: STREAMING - 1 }, (_, i) => sims.createThread(sim, { title: `Busy ${i + 1}` }));
    await service.request("pair.confirm", { input: sim.pairingUrl() });

    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.addInitScript("globalThis.__name = (fn) => fn;");
    await page.goto(shell.url);
    const row = page.locator(`[data-testid="agent-row"][data-key="${sim.environmentId}/${open}"] .agent-title`);
    await row.click();
    await page.waitForFunction((count) => document.querySelectorAll('[data-testid="transcript"] .transcript-entry').length > 0 && count > 0, history);

    // Page side: the first frame after each numbered word of the open thread reached the DOM.
    await page.evaluate(() => {
      const seen: Record<number, number> = {};
      const frames: number[] = [];
      const bench = { seen, frames, measuring: true };
      (globalThis as unknown as { __bench: unknown }).__bench = bench;
      let highest = -1;
      let pending = false;
      const transcript = document.querySelector('[data-testid="transcript"]')!;
      new MutationObserver(() => {
        if (pending) return;
        pending = true;
        requestAnimationFrame(() => {
          pending = false;
          const messages = transcript.querySelectorAll('[data-testid="message-assistant"]');
          const text = messages[messages.length - 1]?.textContent ?? "";
          const match = /w(\d+)\s*$/.exec(text) ?? [...text.matchAll(/w(\d+)/g)].at(-1);
          const index = match ? Number(match[1]) : -1;
          const at = performance.timeOrigin + performance.now();
          for (let word = highest + 1; word <= index; word++) seen[word] = at;
          highest = Math.max(highest, index);
        });
      }).observe(transcript, { subtree: true, childList: true, characterData: true });
      let last = performance.now();
      const frame = () => {
        const now = performance.now();
        frames.push(now - last);
        last = now;
        if (bench.measuring) requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    });

    // Server side: when each numbered word of the open thread was appended.
    const sentAt = new Map<number, number>();
    sim.engine.on("event", (event: { type: string; aggregateId: string; payload: Record<string, unknown> }) => {
      if (event.type !== "thread.message-sent" || event.aggregateId !== open || event.payload.role !== "assistant") return;
      const match = /w(\d+)/.exec(String(event.payload.text));
      if (match) sentAt.set(Number(match[1]), Date.now());
    });
    let bridgeBytes = 0;
    let bridgeFrames = 0;
    const count = (event: BridgeEvent) => {
      bridgeBytes += Buffer.byteLength(JSON.stringify(event));
      bridgeFrames++;
    };

    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Performance.enable");
    // The renderer process's CPU time, all its threads: unlike task durations, not inflated when other
    // processes hold the cores (the machine the benches run on is often shared).
    const browserCdp = await browser.newBrowserCDPSession();
    const rendererCpuSeconds = async () => {
      const { processInfo } = (await browserCdp.send("SystemInfo.getProcessInfo")) as { processInfo: { type: string; cpuTime: number }[] };
      return processInfo.filter((info) => info.type === "renderer").reduce((sum, info) => sum + info.cpuTime, 0);
    };
    const taskSeconds = async () => ((await cdp.send("Performance.getMetrics")).metrics.find((metric) => metric.name === "TaskDuration")?.value ?? 0) as number;

    // Enough words that every turn streams for the whole window (one word per tick / 4, slower on a busy machine).
    const words = Math.ceil((STREAM_SECONDS * 1000) / 10);
    const text = (prefix: string) => Array.from({ length: words }, (_, i) => `${prefix}${i}`).join(" ");
    // BENCH_CPU_PROFILE=DIR: the renderer's CPU profile of the streaming window, for Chromium's DevTools
    // (sampling adds its own cost: compare figures from runs without it).
    const profileDir = process.env.BENCH_CPU_PROFILE;
    if (profileDir) {
      await cdp.send("Profiler.enable");
      await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
      await cdp.send("Profiler.start");
    }
    service.on("event", count);
    const busyBefore = await taskSeconds();
    const cpuBefore = await rendererCpuSeconds();
    const started = performance.now();
    await page.evaluate(() => ((globalThis as unknown as { __bench: { frames: number[] } }).__bench.frames.length = 0));
    sims.sendMessage(sim, open, text("w"));
    for (const thread of others) sims.sendMessage(sim, thread, text("x"));
    await new Promise((done) => setTimeout(done, STREAM_SECONDS * 1000));
    const busy = (await taskSeconds()) - busyBefore;
    const cpu = (await rendererCpuSeconds()) - cpuBefore;
    const elapsed = (performance.now() - started) / 1000;
    service.off("event", count);
    if (profileDir) {
      const { profile } = await cdp.send("Profiler.stop");
      const file = join(profileDir, `transcript-history-${history}.cpuprofile`);
      await writeFile(file, JSON.stringify(profile));
      console.log(`  CPU profile of the streaming window: ${file}`);
    }
    const page_ = (await page.evaluate(() => {
      const bench = (globalThis as unknown as { __bench: { seen: Record<number, number>; frames: number[]; measuring: boolean } }).__bench;
      bench.measuring = false; // the idle figure below must not count the frame probe
      return { seen: bench.seen, frames: bench.frames };
    })) as { seen: Record<string, number>; frames: number[] };
    const latencies: number[] = [];
    for (const [word, at] of sentAt) {
      const painted = page_.seen[String(word)];
      if (painted !== undefined) latencies.push(painted - at);
    }
    const frames = page_.frames.slice(1);

    // Idle with the long transcript open, once every turn has ended.
    const running = () => [...service.model.agents()].some((agent) => agent.status === "running" || agent.status === "starting");
    const giveUpAt = Date.now() + 120_000;
    while (running() && Date.now() < giveUpAt) await new Promise((done) => setTimeout(done, 500));
    if (running()) sim.agents.haltAll();
    await new Promise((done) => setTimeout(done, 2_000));
    const idleBefore = await taskSeconds();
    const idleStarted = performance.now();
    await new Promise((done) => setTimeout(done, IDLE_SECONDS * 1000));
    const idleBusy = ((await taskSeconds()) - idleBefore) / ((performance.now() - idleStarted) / 1000);

    const perMinute = 60 / elapsed;
    console.log(
      `history ${history} messages, ${STREAMING} turns streaming for ${elapsed.toFixed(0)} s (${sentAt.size} words in the open thread, ${latencies.length} painted):`,
    );
    console.log(`  renderer busy: ${((busy / elapsed) * 100).toFixed(1)} % of a core   (target < 25 %)`);
    console.log(`  renderer process CPU: ${((cpu / elapsed) * 100).toFixed(1)} % of a core (all its threads; the same on a loaded machine)`);
    console.log(`  token to pixel: p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms   (target p99 < 100 ms)`);
    console.log(
      `  frame time: p50 ${percentile(frames, 50).toFixed(1)} ms, p95 ${percentile(frames, 95).toFixed(1)} ms, p99 ${percentile(frames, 99).toFixed(1)} ms, ${frames.filter((f) => f > 50).length} of ${frames.length} over 50 ms`,
    );
    console.log(
      `  bridge to the page per minute of streaming: ${((bridgeBytes * perMinute) / 1e6).toFixed(2)} MB in ${Math.round(bridgeFrames * perMinute)} frames   (target ≤ ${(T3_WEB_BYTES_PER_MINUTE / 2 / 1e6).toFixed(1)} MB: half of T3 web's 3.6 MB in 1,253 frames)`,
    );
    console.log(`  renderer idle with this transcript open: ${(idleBusy * 100).toFixed(1)} % of a core over ${IDLE_SECONDS} s   (T3 web measured 2.8-2.9 %)`);
  } finally {
    await close();
  }
}

// Two histories: cost per token must not grow with the transcript.
for (const history of [100, 1_000]) await measure(history);
process.exit(0);
