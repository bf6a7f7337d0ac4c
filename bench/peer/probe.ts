// What the peer benchmark watches inside each page (the fleet's and T3's own web UI): the first
// animation frame in which a thread's row shows it working, then idle again, and in which each
// numbered word of the open thread's reply is in the transcript's DOM. One MutationObserver a page,
// read once per frame; both pages pay the same small cost for it.
import type { CDPSession, Page } from "playwright-core";

/** How a page shows a thread's row and its transcript, as CSS selectors and a working test. */
export interface PageShape {
  /** The row of each watched thread, by the key the bench names it with. */
  rows: Record<string, string>;
  /** The row's own "working" mark: an element inside the row with that text, or the row's attribute. */
  working: { selector: string; text: string } | { attribute: string; values: string[] };
  transcript: string;
}

export interface ProbeReadout {
  working: Record<string, number[]>;
  idle: Record<string, number[]>;
  words: Record<string, number>;
}

/** Installs the probe; its times are wall-clock milliseconds (performance.timeOrigin + now). */
export async function installProbe(page: Page, shape: PageShape): Promise<void> {
  await page.evaluate((shape) => {
    const readout = { working: {} as Record<string, number[]>, idle: {} as Record<string, number[]>, words: {} as Record<string, number> };
    (globalThis as unknown as { __peer: unknown }).__peer = readout;
    const last: Record<string, boolean> = {};
    let highest = 0;
    let pending = false;
    const isWorking = (row: Element): boolean => {
      const mark = shape.working;
      if ("attribute" in mark) return mark.values.includes(row.getAttribute(mark.attribute) ?? "");
      return [...row.querySelectorAll(mark.selector)].some((element) => element.textContent?.includes(mark.text));
    };
    const check = () => {
      pending = false;
      const at = performance.timeOrigin + performance.now();
      for (const [key, selector] of Object.entries(shape.rows)) {
        const row = document.querySelector(selector);
        const working = row ? isWorking(row) : false;
        if (last[key] !== undefined && working !== last[key]) (working ? (readout.working[key] ??= []) : (readout.idle[key] ??= [])).push(at);
        last[key] = working;
      }
      // T3's timeline marks each of its virtualized rows as a root: read them all.
      const text = [...document.querySelectorAll(shape.transcript)].map((element) => element.textContent ?? "").join(" ");
      let top = highest;
      for (const match of text.matchAll(/\bword(\d+)\b/g)) top = Math.max(top, Number(match[1]));
      for (let word = highest + 1; word <= top; word++) readout.words[word] = at;
      highest = top;
    };
    check();
    new MutationObserver(() => {
      if (pending) return;
      pending = true;
      requestAnimationFrame(check);
    }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  }, shape);
}

export const readProbe = (page: Page): Promise<ProbeReadout> => page.evaluate(() => (globalThis as unknown as { __peer: ProbeReadout }).__peer);

/** What a page's socket received and how busy its renderer was, between start() and stop(). */
export class PageMeter {
  bytes = 0;
  frames = 0;
  private counting = false;
  private before = { task: 0, thread: 0, at: 0 };
  private constructor(private readonly cdp: CDPSession) {}

  static async attach(page: Page): Promise<PageMeter> {
    const cdp = await page.context().newCDPSession(page);
    const meter = new PageMeter(cdp);
    await cdp.send("Network.enable");
    await cdp.send("Performance.enable");
    cdp.on("Network.webSocketFrameReceived", ({ response }: { response: { payloadData: string } }) => {
      if (!meter.counting) return;
      meter.bytes += Buffer.byteLength(response.payloadData);
      meter.frames++;
    });
    return meter;
  }

  private async metrics(): Promise<{ task: number; thread: number }> {
    const { metrics } = await this.cdp.send("Performance.getMetrics");
    const value = (name: string) => metrics.find((metric) => metric.name === name)?.value ?? 0;
    return { task: value("TaskDuration"), thread: value("ThreadTime") };
  }

  async start(): Promise<void> {
    this.bytes = 0;
    this.frames = 0;
    this.counting = true;
    this.before = { ...(await this.metrics()), at: performance.now() };
  }

  /** Stops counting; returns seconds measured and the main thread's busy share (tasks) and CPU share (thread time). */
  async stop(): Promise<{ seconds: number; taskShare: number; threadShare: number }> {
    this.counting = false;
    const after = await this.metrics();
    const seconds = (performance.now() - this.before.at) / 1000;
    return { seconds, taskShare: (after.task - this.before.task) / seconds, threadShare: (after.thread - this.before.thread) / seconds };
  }
}
