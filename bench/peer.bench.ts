// The fleet beside T3's own web UI on the same real T3 0.0.42 server (issue 44 points 3-5): the
// released T3 with the real Codex CLI answering from the scripted model server
// (integration/model), one open thread with a long history and five turns streaming at once, the
// open one among them. Two pages in Debian's Chromium: the fleet's with that agent open, and T3's
// own web client (served by T3, paired by a one-time link) with the same thread open. For each:
// a row showing "working" and going back to idle (T3's event time, the session's updatedAt in its
// shell row → the first frame showing it), a token's time to pixel (the scripted model's chunk
// emission → the first frame with that word in the DOM), WebSocket bytes and frames per minute,
// and the renderer's main-thread share. Prints figures; asserts nothing. Runs inside the private
// network namespace (scripts/realt3.sh): it re-executes itself there when started outside it.
import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const IN_NAMESPACE = "T3_FLEET_PEER_BENCH_NETNS";
if (process.env[IN_NAMESPACE] !== "1") {
  const self = fileURLToPath(import.meta.url);
  const run = spawnSync("bash", ["scripts/realt3.sh", "env", `${IN_NAMESPACE}=1`, process.execPath, "--import", "tsx", self, ...process.argv.slice(2)], {
    cwd: root,
    stdio: "inherit",
  });
  process.exit(run.status ?? 1);
}

const { chromium } = await import("playwright-core");
const { ScriptedModelServer } = await import("../integration/model/scripted-model-server");
const { RealT3Server } = await import("../integration/realt3/harness.testkit");
const { T3Operator } = await import("../integration/realt3/operator.testkit");
const { MemorySecretStore } = await import("../electron/fleet/secrets");
const { FleetService } = await import("../electron/fleet/service");
const { startHeadlessShell } = await import("../electron/serve/server");
const { ensureRendererBuilt } = await import("./renderer-build");
const { SIGNED_OUT_CLERK } = await import("./peer/clerk-stub");
const { PageMeter, installProbe, readProbe } = await import("./peer/probe");
const { sessionTimes } = await import("./peer/session-times");
const { enableTokenStreaming } = await import("./peer/token-streaming");

/** Turns seeded into the open thread before measuring (two messages each); BENCH_PEER_HISTORY_TURNS overrides. */
const HISTORY_TURNS = Number(process.env.BENCH_PEER_HISTORY_TURNS ?? 150);
const STREAM_SECONDS = Number(process.env.BENCH_STREAM_SECONDS ?? 30);
const TITLES = ["Open thread", "Busy 1", "Busy 2", "Busy 3", "Busy 4"];
/** The reviewer's figures for T3's own web UI (issue 44), beside this run's. */
const ISSUE_T3_WEB = { working: "111-122 ms quiet", token: "225-288 ms quiet", bytes: "1.5-2.4 MB", frames: "437-696" };

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
const p50p99 = (values: number[]) =>
  values.length === 0 ? "none seen" : `p50 ${percentile(values, 50).toFixed(0)} ms, p99 ${percentile(values, 99).toFixed(0)} ms (n=${values.length})`;

ensureRendererBuilt();
const model = await ScriptedModelServer.start();
const server = await RealT3Server.start({ harnesses: { names: ["codex"], modelUrl: model.url } });
const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-peer-bench-"));
const cleanups: (() => Promise<unknown>)[] = [() => model.close(), () => server.stop(), () => rm(dataDir, { recursive: true, force: true })];
try {
  const operator = await T3Operator.start(server);
  await enableTokenStreaming(server.baseUrl, await server.issueToken("peer bench settings"));
  const projectId = await operator.createProject("Peer");
  const threads: string[] = [];
  for (const title of TITLES) threads.push(await operator.createThread(projectId, title));
  const openThread = threads[0]!;
  const turnEnded = async (threadId: string, count: number) => {
    for (;;) {
      const thread = await operator.thread(threadId);
      if (thread.messages.filter((message) => message.role === "assistant" && !message.streaming).length >= count && thread.session?.status !== "running")
        return thread;
      await sleep(100);
    }
  };
  const seedStarted = Date.now();
  for (let turn = 1; turn <= HISTORY_TURNS; turn++) {
    await operator.startTurn(openThread, `history message ${turn}`);
    await turnEnded(openThread, turn);
  }
  const seeded = (await operator.thread(openThread)).messages.length;
  console.log(`seeded the open thread with ${seeded} messages in ${((Date.now() - seedStarted) / 1000).toFixed(0)} s (${HISTORY_TURNS} turns)`);

  // The fleet: a service paired by link, the headless shell serving the built renderer.
  const times = sessionTimes();
  const service = await FleetService.start({
    dataDir,
    secrets: new MemorySecretStore(),
    socket: { onFrame: (direction, frame) => direction === "recv" && times.record(frame) },
  });
  cleanups.unshift(() => service.stop());
  const shell = await startHeadlessShell({ service, rendererDir: process.env.BENCH_RENDERER_DIR ?? join(root, "out/renderer") });
  cleanups.unshift(() => shell.close());
  const link = await server.pairingLink();
  const { environmentId } = (await service.request("pair.confirm", { input: link.url })) as { environmentId: string };
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  cleanups.unshift(() => browser.close());
  const viewport = { width: 1400, height: 900 };

  const fleetPage = await (await browser.newContext({ viewport })).newPage();
  await fleetPage.addInitScript("globalThis.__name = (fn) => fn;");
  await fleetPage.goto(shell.url);
  const rowOf = (threadId: string) => `[data-testid="agent-row"][data-key="${environmentId}/${threadId}"]`;
  await fleetPage.waitForSelector(rowOf(openThread), { timeout: 60_000 });
  service.emit("event", { type: "ui.openAgent", key: `${environmentId}/${openThread}` });
  await fleetPage.waitForSelector('[data-testid="transcript"] .transcript-entry', { timeout: 60_000 });

  // T3's own web client, paired by a one-time link as a user opens it; nothing leaves loopback.
  const t3Context = await browser.newContext({ viewport });
  await t3Context.addInitScript(SIGNED_OUT_CLERK);
  await t3Context.addInitScript("globalThis.__name = (fn) => fn;");
  await t3Context.route(
    (url) => url.hostname !== "127.0.0.1",
    (route) => route.abort(),
  );
  const t3Page = await t3Context.newPage();
  await t3Page.goto((await server.pairingLink()).url);
  const t3Row = (title: string) => `li[data-thread-item]:has-text("${title}")`;
  await t3Page.waitForSelector(t3Row(TITLES[0]!), { timeout: 60_000 });
  await t3Page.click(t3Row(TITLES[0]!));
  await t3Page.waitForSelector("[data-timeline-root]", { timeout: 60_000 });

  const rows = (selector: (index: number) => string) => Object.fromEntries(TITLES.map((title, index) => [title, selector(index)]));
  await installProbe(fleetPage, {
    rows: rows((index) => rowOf(threads[index]!)),
    working: { attribute: "data-status", values: ["running", "starting"] },
    transcript: '[data-testid="transcript"]',
  });
  await installProbe(t3Page, {
    rows: rows((index) => `li[data-thread-item][data-peer="${index}"]`),
    working: { selector: '[role="status"]', text: "Working" },
    transcript: "[data-timeline-root]",
  });
  // T3's sidebar rows carry no thread id: mark each by its title for the probe.
  await t3Page.evaluate((titles) => {
    for (const item of document.querySelectorAll("li[data-thread-item]")) {
      const index = titles.findIndex((title) => item.textContent?.includes(title));
      if (index >= 0) item.setAttribute("data-peer", String(index));
    }
  }, TITLES);
  const meters = { fleet: await PageMeter.attach(fleetPage), t3: await PageMeter.attach(t3Page) };

  // The open thread's reply: when the scripted model wrote each of its numbered words.
  const emitted = new Map<number, number>();
  model.onChunk((request, data, at) => {
    if (!request.conversation?.userTexts.at(-1)?.includes(TITLES[0]!)) return;
    for (const match of data.matchAll(/\bword(\d+)\b/g)) if (!emitted.has(Number(match[1]))) emitted.set(Number(match[1]), at);
  });
  await meters.fleet.start();
  await meters.t3.start();
  const started = Date.now();
  times.since(started);
  await Promise.all(threads.map((threadId, index) => operator.startTurn(threadId, `endless reply for ${TITLES[index]}`)));
  await sleep(STREAM_SECONDS * 1000);
  const streaming = { fleet: await meters.fleet.stop(), t3: await meters.t3.stop() };
  const interruptedAt = Date.now();
  for (const threadId of threads) await operator.dispatch({ type: "thread.turn.interrupt", threadId });
  for (const threadId of threads) await turnEnded(threadId, 1);
  await sleep(2_000);
  const readouts = { fleet: await readProbe(fleetPage), t3: await readProbe(t3Page) };
  // BENCH_PEER_TIMELINE=1: each thread's row changes from T3 and each page's idle pixel, after the interrupt (ms).
  if (process.env.BENCH_PEER_TIMELINE === "1") {
    threads.forEach((threadId, index) => {
      const after = (at: number | undefined) => (at === undefined ? "-" : String(Math.round(at - interruptedAt)));
      const changes = times.changes(threadId).filter((change) => change.receivedAt >= interruptedAt);
      const rows = changes.map((change) => `${change.turn}/${change.session} at ${after(change.at)} received ${after(change.receivedAt)}`).join("; ");
      const pixel = (page: "fleet" | "t3") => after(readouts[page].idle[TITLES[index]!]?.find((at) => at >= interruptedAt));
      console.log(`  ${TITLES[index]}: ${rows}; idle pixel fleet ${pixel("fleet")}, T3 web ${pixel("t3")}`);
    });
  }

  console.log(
    `T3 0.0.42 with the real Codex CLI; open thread ${seeded} messages; ${TITLES.length} turns streaming for ${streaming.fleet.seconds.toFixed(0)} s (${emitted.size} words of the open reply emitted); ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)} at the end (figures are noisy on a loaded machine)`,
  );
  for (const [name, page] of [
    ["fleet", "fleet"],
    ["T3 web", "t3"],
  ] as const) {
    const readout = readouts[page];
    // From the event only: the fleet shows a turn from thread-stream events this bench does not parse, before T3's shell row.
    const working = { event: [] as number[] };
    const idle = { event: [] as number[], frame: [] as number[] };
    threads.forEach((threadId, index) => {
      const running = times.working(threadId);
      const ready = times.ended(threadId, interruptedAt);
      const shown = readout.working[TITLES[index]!]?.find((at) => at >= started - 1_000);
      const back = readout.idle[TITLES[index]!]?.find((at) => at >= interruptedAt);
      if (running && shown !== undefined) {
        working.event.push(shown - running.at);
      }
      if (ready && back !== undefined) {
        idle.event.push(back - ready.at);
        idle.frame.push(back - ready.receivedAt);
      }
    });
    const tokens = [...emitted].flatMap(([word, at]) => (readout.words[word] === undefined ? [] : [readout.words[word]! - at]));
    const meter = meters[page];
    const window = streaming[page];
    console.log(`  ${name}:`);
    console.log(`    row "working", T3's event → pixel: ${p50p99(working.event)}${page === "t3" ? `   (issue 44: ${ISSUE_T3_WEB.working})` : ""}`);
    console.log(`    token, model emission → pixel: ${p50p99(tokens)}${page === "t3" ? `   (issue 44: ${ISSUE_T3_WEB.token})` : ""}`);
    console.log(
      `    WebSocket to the page per minute: ${((meter.bytes * 60) / window.seconds / 1e6).toFixed(2)} MB, ${Math.round((meter.frames * 60) / window.seconds)} frames${page === "t3" ? `   (issue 44: ${ISSUE_T3_WEB.bytes}, ${ISSUE_T3_WEB.frames} frames)` : "   (target: frames ≤ T3 web's)"}`,
    );
    console.log(
      `    renderer main thread: ${(window.taskShare * 100).toFixed(1)} % busy (TaskDuration), ${(window.threadShare * 100).toFixed(1)} % CPU (ThreadTime)`,
    );
    console.log(`    row back to idle, T3's event → pixel: ${p50p99(idle.event)}${page === "fleet" ? "   (target: at least as quick as T3 web's)" : ""}`);
    console.log(`      from T3's frame (its arrival at the fleet's service): ${p50p99(idle.frame)}`);
  }
} finally {
  for (const cleanup of cleanups) await cleanup().catch((error: unknown) => console.error(String(error)));
}
process.exit(0);
