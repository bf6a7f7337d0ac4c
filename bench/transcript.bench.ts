// The page with a long transcript open while turns stream (Debian Chromium, the built renderer):
// renderer busy share of a core, frame times, token-to-pixel latency, the fleet's own share of it,
// and the bytes and frames the bridge sends to the page per minute of streaming. Prints figures;
// asserts nothing.
//
// Workload: one protocol-1 machine (upstream, token streaming) with the open thread seeded with
// HISTORY messages (markdown with code), and STREAMING turns streaming word by word at once, the
// open one among them; each of them first ran a turn that changed files, so its row carries its
// changes and usage (issue 44). The last run adds 10,000 idle agents on ten machines. Token to
// pixel: the server-side time each numbered word was appended to the engine, against the page-side
// time (same machine clock) of the first animation frame after the word reached the transcript's
// DOM; the fleet's own share starts instead when T3's frame with the word reached the service.
// Bytes and frames are what the page's socket received (Chromium's DevTools protocol).
// BENCH_TRACE=1 adds where the main thread spent the window (bench/main-thread-costs.ts).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { BridgeServerMessage } from "../shared/bridge/contract";
import { SimFleet } from "../sim/fleet";
import { costsLine, mainThreadCosts, TRACE_CATEGORIES } from "./main-thread-costs";
import { startPageRig } from "./page-rig";

const STREAMING = 5;
const STREAM_SECONDS = Number(process.env.BENCH_STREAM_SECONDS ?? 20);
const IDLE_SECONDS = 10;
/** T3's own web client received 3.6 MB per minute of streaming on the same kind of workload (measured against real T3 0.0.42). */
const T3_WEB_BYTES_PER_MINUTE = 3.6e6;
/** T3 web's frames per minute of five streaming turns, side by side on real T3 0.0.42 (issue 44): the fleet's target is the low end. */
const T3_WEB_FRAMES_PER_MINUTE = [437, 696] as const;

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

/** `fleetAgents`: idle agents on ten more machines (the fleet's own share is read under this load). */
async function measure(history: number, fleetAgents = 0) {
  const sims = await SimFleet.start(
    fleetAgents > 0
      ? { envs: 10, seedThreads: Math.ceil(fleetAgents / 10), generations: ["upstream", "fork"], tickMs: 40 }
      : { envs: 1, generations: ["upstream"], tickMs: 40 },
  );
  const sim = sims.servers[0]!;
  // Word-by-word deltas, as upstream T3 sends with legacy token streaming.
  sim.agents.options.tokenStreaming = true;
  // When T3's frame with each numbered word of the open thread reached the service.
  let probe: ((frame: unknown) => void) | undefined;
  const { service, shell, browser, close } = await startPageRig(sims, "transcript", {
    socket: { onFrame: (direction, frame) => direction === "recv" && probe?.(frame) },
  });
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
    for (const server of sims.servers) await service.request("pair.confirm", { input: server.pairingUrl() });
    // Each streaming thread first changes files in a turn: its row carries changes and usage while it streams.
    const streamingKeys = [open, ...others].map((thread) => `${sim.environmentId}/${thread}`);
    for (const thread of [open, ...others]) sims.sendMessage(sim, thread, "#edit:6 warm up");
    const warmedUp = () =>
      streamingKeys.every((key) => {
        const agent = service.model.agent(key);
        return agent?.status === "idle" && (agent.changes?.length ?? 0) > 0 && agent.usage !== undefined;
      });
    const warmUpBy = Date.now() + 60_000;
    while (!warmedUp() && Date.now() < warmUpBy) await new Promise((done) => setTimeout(done, 200));

    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.addInitScript("globalThis.__name = (fn) => fn;");
    await page.goto(shell.url);
    const agents = [...service.model.agents()].length;
    await page.waitForFunction(
      (count) =>
        document.querySelector('[data-testid="fleet-summary"]')?.textContent?.includes(`${count.toLocaleString("en-US")} agents`) ||
        document.querySelector('[data-testid="fleet-summary"]')?.textContent?.includes(`${count} agents`),
      agents,
      {
        timeout: 120_000,
      },
    );
    // Opened as a notification's click opens it (the row may be far down a 10,000-agent tree).
    service.emit("event", { type: "ui.openAgent", key: `${sim.environmentId}/${open}` });
    await page.waitForFunction((count) => document.querySelectorAll('[data-testid="transcript"] .transcript-entry').length > 0 && count > 0, history);

    // Page side: the frame that paints each numbered word of the open thread. A word that reached the
    // DOM between frames is painted by the next frame; one that reached it inside a frame's callbacks
    // (the page applies deltas there) by that same frame, which a frame callback requested then would
    // miss by one. The probe's frame callback runs first in each frame (it is requested a frame ahead)
    // and resizes a hidden box, whose ResizeObserver runs after that frame's layout: in between, a
    // change is painted by this frame.
    const installProbe = () =>
      page.evaluate(() => {
        const seen: Record<number, number> = {};
        const frames: number[] = [];
        const bench = { seen, frames, measuring: true, stop: () => {} };
        (globalThis as unknown as { __bench: unknown }).__bench = bench;
        let highest = -1;
        let pending = false;
        let frameAt: number | null = null;
        const box = document.body.appendChild(document.createElement("div"));
        box.style.cssText = "position: absolute; visibility: hidden; height: 1px; width: 1px";
        new ResizeObserver(() => (frameAt = null)).observe(box);
        const transcript = document.querySelector('[data-testid="transcript"]')!;
        const lastWord = () => {
          const messages = transcript.querySelectorAll('[data-testid="message-assistant"]');
          const text = messages[messages.length - 1]?.textContent ?? "";
          const match = /w(\d+)\s*$/.exec(text) ?? [...text.matchAll(/w(\d+)/g)].at(-1);
          return match ? Number(match[1]) : -1;
        };
        // Words already shown when the probe starts are not timed.
        highest = lastWord();
        const record = (at: number) => {
          const index = lastWord();
          for (let word = highest + 1; word <= index; word++) seen[word] = at;
          highest = Math.max(highest, index);
        };
        const mutations = new MutationObserver(() => {
          if (frameAt !== null) return record(frameAt);
          if (pending) return;
          pending = true;
          requestAnimationFrame(() => {
            pending = false;
            record(performance.timeOrigin + performance.now());
          });
        });
        mutations.observe(transcript, { subtree: true, childList: true, characterData: true });
        bench.stop = () => {
          bench.measuring = false;
          mutations.disconnect();
          box.remove();
        };
        let last = performance.now();
        const frame = () => {
          const now = performance.now();
          frameAt = performance.timeOrigin + now;
          box.style.width = box.style.width === "1px" ? "2px" : "1px";
          frames.push(now - last);
          last = now;
          if (bench.measuring) requestAnimationFrame(frame);
          else frameAt = null;
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
    const receivedAt = new Map<number, number>();
    let tokenEvents = 0;
    /** Messages T3 sent the service while the turns streamed (what T3's own web page would be sent for them). */
    let t3Messages = 0;
    sim.engine.on("event", (event: { type: string; aggregateId: string; payload: Record<string, unknown> }) => {
      if (
        probe &&
        event.type === "thread.message-sent" &&
        event.payload.role === "assistant" &&
        streamingKeys.includes(`${sim.environmentId}/${event.aggregateId}`)
      )
        tokenEvents++;
    });
    // What the page's socket received while the turns streamed: every frame, and each row update in them.
    let bridgeBytes = 0;
    let bridgeFrames = 0;
    const rowUpdates: number[] = [];
    let counting = false;
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Network.enable");
    cdp.on("Network.webSocketFrameReceived", ({ response }: { response: { payloadData: string } }) => {
      if (!counting) return;
      bridgeBytes += Buffer.byteLength(response.payloadData);
      bridgeFrames++;
      const message = JSON.parse(response.payloadData) as BridgeServerMessage;
      const events = message.type === "events" ? message.events : message.type === "event" ? [message.event] : [];
      for (const event of events) {
        if (event.type !== "fleet.delta") continue;
        for (const update of [...event.agents, ...(event.patches ?? [])]) rowUpdates.push(Buffer.byteLength(JSON.stringify(update)));
      }
    });
    await cdp.send("Performance.enable");
    // The renderer process's CPU time, all its threads: unlike task durations, not inflated when other
    // processes hold the cores (the machine the benches run on is often shared).
    const browserCdp = await browser.newBrowserCDPSession();
    const rendererCpuSeconds = async () => {
      const { processInfo } = (await browserCdp.send("SystemInfo.getProcessInfo")) as { processInfo: { type: string; cpuTime: number }[] };
      return processInfo.filter((info) => info.type === "renderer").reduce((sum, info) => sum + info.cpuTime, 0);
    };
    const taskSeconds = async () => ((await cdp.send("Performance.getMetrics")).metrics.find((metric) => metric.name === "TaskDuration")?.value ?? 0) as number;

    // Two windows of STREAM_SECONDS each, the turns streaming through both: the first, from the first
    // word, is what the page's work costs (the renderer figures, trace and profile); the second times
    // each word with the frame probe above, whose hidden box is laid out and painted in every frame.
    // Enough words that every turn streams for both (one word per tick / 4, slower on a busy machine).
    const words = Math.ceil((2 * STREAM_SECONDS * 1000) / 10);
    const text = (prefix: string) => Array.from({ length: words }, (_, i) => `${prefix}${i}`).join(" ");
    // BENCH_CPU_PROFILE=DIR: the renderer's CPU profile of the cost window, for Chromium's DevTools
    // (sampling adds its own cost: compare figures from runs without it).
    const profileDir = process.env.BENCH_CPU_PROFILE;
    if (profileDir) {
      await cdp.send("Profiler.enable");
      await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
      await cdp.send("Profiler.start");
    }
    // BENCH_TRACE=1: where the page's main thread spends the cost window (script, style, layout,
    // paint), from Chromium's performance trace; tracing adds its own cost, as profiling does.
    // BENCH_TRACE=DIR also keeps the trace, for DevTools' Performance panel.
    const tracing = Boolean(process.env.BENCH_TRACE);
    if (tracing) await browser.startTracing(page, { categories: TRACE_CATEGORIES });
    counting = true;
    probe = (frame) => {
      t3Messages++;
      const text = JSON.stringify(frame);
      if (!text.includes(open) || !text.includes('"assistant"')) return;
      const now = Date.now();
      for (const match of text.matchAll(/\bw(\d+)\b/g)) if (!receivedAt.has(Number(match[1]))) receivedAt.set(Number(match[1]), now);
    };
    const busyBefore = await taskSeconds();
    const cpuBefore = await rendererCpuSeconds();
    const started = performance.now();
    sims.sendMessage(sim, open, text("w"));
    for (const thread of others) sims.sendMessage(sim, thread, text("x"));
    await new Promise((done) => setTimeout(done, STREAM_SECONDS * 1000));
    const busy = (await taskSeconds()) - busyBefore;
    const cpu = (await rendererCpuSeconds()) - cpuBefore;
    const costElapsed = (performance.now() - started) / 1000;
    const wordsInCostWindow = sentAt.size;
    const trace = tracing ? await browser.stopTracing() : undefined;
    if (trace && process.env.BENCH_TRACE !== "1") {
      const file = join(process.env.BENCH_TRACE!, `transcript-history-${history}.trace.json`);
      await writeFile(file, trace);
      console.log(`  trace of the cost window: ${file}`);
    }
    if (profileDir) {
      const { profile } = await cdp.send("Profiler.stop");
      const file = join(profileDir, `transcript-history-${history}.cpuprofile`);
      await writeFile(file, JSON.stringify(profile));
      console.log(`  CPU profile of the cost window: ${file}`);
    }

    await installProbe();
    const probedStarted = performance.now();
    const probedBusyBefore = await taskSeconds();
    await new Promise((done) => setTimeout(done, STREAM_SECONDS * 1000));
    const probedBusy = ((await taskSeconds()) - probedBusyBefore) / ((performance.now() - probedStarted) / 1000);
    const elapsed = (performance.now() - started) / 1000;
    counting = false;
    probe = undefined;
    const page_ = (await page.evaluate(() => {
      const bench = (globalThis as unknown as { __bench: { seen: Record<number, number>; frames: number[]; stop: () => void } }).__bench;
      bench.stop(); // the idle figure below must not count the frame probe
      return { seen: bench.seen, frames: bench.frames };
    })) as { seen: Record<string, number>; frames: number[] };
    const latencies: number[] = [];
    for (const [word, at] of sentAt) {
      const painted = page_.seen[String(word)];
      if (painted !== undefined) latencies.push(painted - at);
    }
    const fleetShare: number[] = [];
    for (const [word, at] of receivedAt) {
      const painted = page_.seen[String(word)];
      if (painted !== undefined) fleetShare.push(painted - at);
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
      `history ${history} messages, ${agents.toLocaleString("en-US")} agents, ${STREAMING} turns streaming for ${elapsed.toFixed(0)} s: ${wordsInCostWindow} words of the open thread in the first ${costElapsed.toFixed(0)} s measured for cost, then ${latencies.length} timed by the probe:`,
    );
    console.log(
      `  renderer busy: ${((busy / costElapsed) * 100).toFixed(1)} % of a core   (target < 25 %; 17-19 % before issue 44); ${(probedBusy * 100).toFixed(1)} % in the next window, the probe timing words (its box is laid out and painted every frame)`,
    );
    if (trace) console.log(`  ${costsLine(mainThreadCosts(trace.toString("utf8")), costElapsed)}   (traced: figures of this run carry tracing's cost)`);
    console.log(`  renderer process CPU: ${((cpu / costElapsed) * 100).toFixed(1)} % of a core (all its threads; the same on a loaded machine)`);
    console.log(`  token to pixel: p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms   (target p99 < 100 ms)`);
    console.log(
      `  frame time: p50 ${percentile(frames, 50).toFixed(1)} ms, p95 ${percentile(frames, 95).toFixed(1)} ms, p99 ${percentile(frames, 99).toFixed(1)} ms, ${frames.filter((f) => f > 50).length} of ${frames.length} over 50 ms`,
    );
    console.log(
      `  the fleet's own share, T3's frame into the service → pixel: p50 ${percentile(fleetShare, 50).toFixed(0)} ms, p99 ${percentile(fleetShare, 99).toFixed(0)} ms over ${fleetShare.length} words   (target p50 ≤ 16 ms, p99 ≤ 33 ms)`,
    );
    console.log(
      `  bridge to the page per minute of streaming: ${((bridgeBytes * perMinute) / 1e6).toFixed(2)} MB   (target ≤ ${(T3_WEB_BYTES_PER_MINUTE / 2 / 1e6).toFixed(1)} MB: half of T3 web's 3.6 MB)`,
    );
    // A frame to the page goes at most once per T3 message and per painted frame: T3's own page is sent at least one per message.
    console.log(
      `  frames to the page per minute of streaming: ${Math.round(bridgeFrames * perMinute)}, for ${Math.round(t3Messages * perMinute)} messages a minute from T3   (target ≤ T3 web's on the same workload: ${T3_WEB_FRAMES_PER_MINUTE.join("-")} on real T3, one per T3 message here)`,
    );
    const average = rowUpdates.reduce((sum, bytes) => sum + bytes, 0) / Math.max(1, rowUpdates.length);
    console.log(
      `  bytes per token event: ${(bridgeBytes / Math.max(1, tokenEvents)).toFixed(0)} B over ${tokenEvents} token events   (target ≤ 150 B); row updates: ${rowUpdates.length}, average ${average.toFixed(0)} B   (target ≤ 512 B, rows with changes and usage)`,
    );
    console.log(`  renderer idle with this transcript open: ${(idleBusy * 100).toFixed(1)} % of a core over ${IDLE_SECONDS} s   (T3 web measured 2.8-2.9 %)`);
  } finally {
    await close();
  }
}

// Two histories: cost per token must not grow with the transcript. Then the fleet's own share under
// the issue-44 load: an open 1,000-message thread and 10,000 agents in the fleet.
// BENCH_TRANSCRIPT_RUNS=1000,1000x10000: only these runs (history, and agents in the fleet after an x).
const runs = (process.env.BENCH_TRANSCRIPT_RUNS ?? "100,1000,1000x10000").split(",").map((run) => run.split("x").map(Number) as [number, number?]);
for (const [history, fleetAgents] of runs) await measure(history, fleetAgents);
process.exit(0);
