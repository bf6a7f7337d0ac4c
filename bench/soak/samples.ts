// The soak's samples: the service's memory, descriptors, sockets and handles, and the page's
// event-to-pixel time (a rename on the probe machine until the page paints the new title).
import type { Page } from "playwright-core";
import type { Holding } from "../../electron/serve/holdings";
import type { ResourceReport } from "../../electron/serve/resource-report";
import type { AgentView } from "../../shared/fleet/types";
import { heldLine } from "./holdings-growth";
import type { ObjectStats } from "./object-stats";

export interface ResourceSample {
  atMs: number;
  servicePid: number;
  /** Every row the fleet holds, including threads that left and stay a while (shared/fleet/model.ts, LEFT_ROWS_KEPT_MS). */
  agents: number;
  /** Rows of threads still on their servers: the fleet's size, which churn keeps about constant. */
  liveAgents: number;
  /** Read before the report's collections: the heap's garbage of the last minute is in it. */
  rssBytes: number;
  rssAnonBytes: number;
  /** Read right after the report's memory-reducing collection, which gives the garbage's pages back: the bound reads this. */
  collected: { rssBytes: number; rssAnonBytes: number };
  /** What the process's memory is made of then, by the service (electron/serve/resource-report.ts); null when it did not answer. */
  afterCollections: ResourceReport["afterCollections"];
  heapUsedBytes: number;
  /** The service's heap after a full collection (electron/serve/resource-report.ts): the bound reads this. */
  heapLiveBytes: number;
  /** Of the live heap, V8's compiled code of the service's own functions (electron/serve/resource-report.ts). */
  heapCodeBytes: number;
  /** The same two after V8's memory-reducing collection (electron/serve/resource-report.ts). */
  heapReducedBytes: number;
  heapReducedCodeBytes: number;
  /**
   * The live heap at the same collection by V8's object stats (bench/soak/object-stats.ts): the
   * fleet's objects, strings and contexts apart from V8's bookkeeping; the bound reads the fleet's.
   * Null when the service's output did not hold them whole.
   */
  objects: ObjectStats | null;
  fds: number;
  sockets: number;
  activeResources: Record<string, number>;
  /** What the service holds, by path (electron/serve/holdings.ts); empty when it did not answer. */
  holdings: Holding[];
  holdingsMs: number;
  latenciesMs: number[];
  p50Ms: number;
  p99Ms: number;
  timeouts: number;
}

/** A sample's figures from the service's report; a report that never came reads as not measured (NaN), not as zero. */
export function reportFigures(report: ResourceReport | undefined) {
  return {
    heapUsedBytes: report?.heapUsedBytes ?? NaN,
    heapLiveBytes: report?.heapLiveBytes ?? NaN,
    heapCodeBytes: report?.heapCodeBytes ?? NaN,
    heapReducedBytes: report?.heapReducedBytes ?? NaN,
    heapReducedCodeBytes: report?.heapReducedCodeBytes ?? NaN,
    afterCollections: report?.afterCollections ?? null,
    activeResources: report?.activeResources ?? {},
    ...(report ? { holdings: report.holdings, holdingsMs: report.holdingsMs } : { holdings: [], holdingsMs: NaN }),
  } satisfies Partial<ResourceSample>;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Rows of threads still in their servers' streams (not archived, deleted, or gone without saying which). */
export function liveAgentCount(agents: Iterable<AgentView>): number {
  let live = 0;
  for (const agent of agents) if (agent.lifecycle === "active" && !(agent.status === "ended" && agent.reason === "Archived or deleted")) live++;
  return live;
}

export const handles = (sample: ResourceSample) => Object.values(sample.activeResources).reduce((sum, count) => sum + count, 0);

/** The log's lines for a sample: its figures, and what the service holds in large numbers. */
export function sampleLines(sample: ResourceSample): string[] {
  return [sampleLine(sample), heldLine(sample.holdings, sample.holdingsMs)];
}

function sampleLine(sample: ResourceSample): string {
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  const kinds = Object.entries(sample.activeResources)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, count]) => `${kind} ${count}`)
    .join(", ");
  return `sample: ${sample.liveAgents} agents (${sample.agents} rows with those that left); service RSS ${mb(sample.rssBytes)} (anonymous ${mb(sample.rssAnonBytes)}; after the collections ${mb(sample.collected.rssBytes)}, anonymous ${mb(sample.collected.rssAnonBytes)}${makeUpText(sample.afterCollections)}), heap ${mb(sample.heapUsedBytes)} (${mb(sample.heapLiveBytes)} live after a full collection, of which compiled code ${mb(sample.heapCodeBytes)}; ${mb(sample.heapReducedBytes)} after a memory-reducing one, code ${mb(sample.heapReducedCodeBytes)}; ${objectsText(sample.objects)}), fds ${sample.fds}, sockets ${sample.sockets}, handles ${handles(sample)} (${kinds}); event to pixel p50 ${sample.p50Ms} ms, p99 ${sample.p99Ms} ms${sample.timeouts ? `, ${sample.timeouts} not painted in 5 s` : ""}`;
}

function makeUpText(makeUp: ResourceSample["afterCollections"]): string {
  if (!makeUp) return "";
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
  return `: V8's heap pages ${mb(makeUp.heapCommittedBytes)}, external ${mb(makeUp.externalBytes)} (ArrayBuffers ${mb(makeUp.arrayBuffersBytes)}), V8's malloc ${mb(makeUp.v8MallocedBytes)} MB`;
}

function objectsText(objects: ObjectStats | null): string {
  if (!objects) return "V8's object stats not read";
  const groups = Object.entries(objects.groups)
    .map(([group, bytes]) => `${group} ${(bytes / 1024 / 1024).toFixed(2)}`)
    .join(", ");
  return `by V8's object stats the fleet's objects ${(objects.fleetBytes / 1024 / 1024).toFixed(2)} MB, V8's bookkeeping ${(objects.v8Bytes / 1024 / 1024).toFixed(2)} MB: ${groups} MB`;
}

/** How long a rename may take to reach the screen; a reloaded page gets as long to paint the whole fleet. */
export const PAINT_WITHIN_MS = 5_000;

/** Renames the probe's thread `count` times and times each until the page has painted the new title. */
export async function measureEventToPixel(
  page: Page,
  rename: (title: string) => Promise<unknown>,
  count: number,
): Promise<{ latencies: number[]; p50: number; p99: number; timeouts: number }> {
  const latencies: number[] = [];
  let timeouts = 0;
  for (let i = 0; i < count; i++) {
    const title = `Probe ${Date.now().toString(36)}-${i}`;
    const painted = page.evaluate(
      ({ expected, within }) =>
        new Promise<number | null>((done) => {
          const timer = setTimeout(() => {
            observer.disconnect();
            done(null);
          }, within);
          const check = () => {
            if (!document.querySelector('[data-testid="fleet-tree"]')?.textContent?.includes(expected)) return false;
            clearTimeout(timer);
            observer.disconnect();
            // The frame after the DOM change is when it reaches the screen.
            requestAnimationFrame(() => done(Date.now()));
            return true;
          };
          const observer = new MutationObserver(() => void check());
          observer.observe(document.body, { subtree: true, childList: true, characterData: true });
          check();
        }),
      { expected: title, within: PAINT_WITHIN_MS },
    );
    // The soak never reloads the page during a sample (bench/soak.ts, pageTurnFor); a page whose context
    // is destroyed anyway (it crashed, or navigated itself) rejects: that rename counts as not painted.
    const settled = painted.catch(() => null);
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(done))).catch(() => undefined);
    const sentAt = Date.now();
    await rename(title);
    const at = await settled;
    if (at === null) timeouts++;
    else latencies.push(at - sentAt);
  }
  return { latencies, p50: percentile(latencies, 50), p99: percentile(latencies, 99), timeouts };
}
