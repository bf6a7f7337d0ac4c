// The soak's bounds. Counts are absolute in every run: no message lost or duplicated, no
// notification beyond one per condition, no agent lost or invented, nothing left running. Growth
// is measured from the first samples after the last restart of the service plus a warm-up
// (SoakPlan.steadyFromMs) to the last ones, each end the median of up to three samples:
//
// - full runs (`npm run soak`, the figures): RSS, descriptors, sockets and active handles
//   grow less than 10 %; the fleet's own objects in the JS heap less than 2 %, and the least-squares
//   line through all their steady samples rises less than 10 % over a working day (issue 43): a line
//   within it rises at most 1.25 % in the measured hour. The whole live heap (without compiled code)
//   grows less than 3 %, the figure. The event-to-pixel p99 at the end is within 20 % of the start
//   plus one frame: a rename is timed to the frame it reaches the screen in (bench/soak/samples.ts), and
//   with the page's p99 at 35-45 ms, 20 % is less than one frame (the three-minute run of stop 58);
// - the short run (`--short`, 3 minutes in `npm run test:soak`) on a shared, loaded 2-core machine:
//   its steady phase is about 80 s, two or three samples, so one garbage collection or one busy
//   neighbour moves a figure by more than 10 %. It allows 50 % growth and a p99 up to twice the
//   start's plus 100 ms; it is there to catch a leak that doubles in minutes, and the counts.
//
// The heap's bounds read the live heap after a full collection without V8's compiled code (the code
// and trusted spaces), and the flat-line bounds only the fleet's own objects, strings and closures'
// contexts, by V8's object stats of that collection (bench/soak/object-stats.ts). V8's bookkeeping
// for the program's functions (code, feedback, scope and function infos, dependent-code lists, hidden
// classes) keeps growing while V8 optimizes more of the service hours in: the traced two-hour run of
// stop 57 had TurboFan code objects 638 → 804 from minute 45 to the end and its dependent-code lists
// 384 → 546 KB, with scripts and function infos level, while the fleet's objects went 14.80 →
// 14.75 MB over its last 47 minutes. That growth is bounded by the program, not by the hours or the
// fleet, and part of it lies in the old space the live heap counts: of three untouched two-hour runs
// of seed 324978891 whose whole live heap was bounded, one held and two rose 14 % and 30 % over a
// working day. Both figures are printed, with V8's share, beside the bounds.
//
// Every rename reaches the screen within 5 s after warm-up, and every reloaded page paints its whole
// tree within 5 s (in every run: a user who reloads waits no longer for the fleet than for a rename).
//
// Descriptors, sockets and handles also get a slack of a few in absolute terms: a machine that is
// reconnecting at the moment of a sample holds one socket more or fewer.
import { holdingsGrowthText } from "./holdings-growth";
import type { MessageTally } from "./messages";
import { handles, PAINT_WITHIN_MS, percentile, type ResourceSample } from "./samples";

export interface SoakBounds {
  name: string;
  growth: number;
  /** The fleet's own objects in the service's live JS heap may grow this share from start to end. */
  heapGrowth: number;
  /** Their fitted line may rise this share of its start over a working day (WORKING_DAY_MS); null: printed only. */
  heapDayRise: number | null;
  /** The whole live JS heap, without compiled code, may grow this share from start to end. */
  liveHeapGrowth: number;
  p99Ratio: number;
  p99SlackMs: number;
  countSlack: number;
}

export function boundsFor(short: boolean): SoakBounds {
  return short
    ? { name: "short run", growth: 0.5, heapGrowth: 0.5, heapDayRise: null, liveHeapGrowth: 0.5, p99Ratio: 2, p99SlackMs: 100, countSlack: 8 }
    : { name: "full run", growth: 0.1, heapGrowth: 0.02, heapDayRise: 0.1, liveHeapGrowth: 0.03, p99Ratio: 1.2, p99SlackMs: 17, countSlack: 8 };
}

export interface SoakOutcome {
  counts: MessageTally;
  misdirected: number;
  notificationsBeyondOne: number;
  agentsLost: number;
  agentsInvented: number;
  /** The truth oracle's contradictions between what the servers stored and what the fleet says (bench/soak/truth.ts). */
  contradictions: number;
  orphanChildren: number;
  orphanSockets: number;
  samples: ResourceSample[];
  steadyFromMs: number;
  pageErrors: number;
  /** Each page reload's time until its tree was painted, ms. */
  reloadPaintsMs: number[];
}

export interface BoundVerdict {
  ok: boolean;
  text: string;
  /** A figure printed beside the bounds, not one of them. */
  info?: boolean;
}

const median = (values: number[]) => percentile(values, 50);
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

export function checkBounds(bounds: SoakBounds, outcome: SoakOutcome): BoundVerdict[] {
  const zero = (what: string, value: number): BoundVerdict => ({ ok: value === 0, text: `${what}: ${value} (must be 0)` });
  const verdicts = [
    zero("messages lost", outcome.counts.lost),
    zero("messages duplicated", outcome.counts.duplicated),
    zero("messages delivered but shown refused", outcome.counts.deliveredButShownRefused),
    zero("messages in another thread", outcome.misdirected),
    zero("notifications beyond one per condition", outcome.notificationsBeyondOne),
    zero("agents lost", outcome.agentsLost),
    zero("agents invented", outcome.agentsInvented),
    zero("contradictions between what the servers stored and what the fleet says", outcome.contradictions),
    zero("child processes left", outcome.orphanChildren),
    zero("connections left open", outcome.orphanSockets),
    zero("uncaught errors in the page", outcome.pageErrors),
    {
      ok: outcome.counts.sent > 0 && outcome.counts.delivered > 0,
      text: `messages sent ${outcome.counts.sent}, delivered ${outcome.counts.delivered} (some must be)`,
    },
  ];
  const steady = outcome.samples.filter((sample) => sample.atMs >= outcome.steadyFromMs && sample.servicePid === outcome.samples.at(-1)?.servicePid);
  if (steady.length < 2) return [...verdicts, { ok: false, text: `growth: only ${steady.length} sample(s) after warm-up` }];
  const ends = Math.min(3, Math.floor(steady.length / 2));
  const first = steady.slice(0, ends);
  const last = steady.slice(-ends);
  const endsOf = (read: (sample: ResourceSample) => number) => {
    // A sample the service did not answer in time (NaN) is left out, not read as growth.
    const start = median(first.map(read).filter(Number.isFinite));
    const end = median(last.map(read).filter(Number.isFinite));
    const percent = start > 0 ? ((end - start) / start) * 100 : 0;
    return { start, end, change: `${percent >= 0 ? "+" : ""}${percent.toFixed(1)} %` };
  };
  const grew = (what: string, read: (sample: ResourceSample) => number, slack: number, unit = "", growth = bounds.growth): BoundVerdict => {
    const { start, end, change } = endsOf(read);
    const limit = start * (1 + growth) + slack;
    return { ok: end <= limit, text: `${what}: ${fmt(start)}${unit} → ${fmt(end)}${unit} (${change}; bound ${fmt(limit)}${unit})` };
  };
  const whole = endsOf((sample) => mb(sample.heapLiveBytes));
  const code = endsOf((sample) => mb(sample.heapCodeBytes));
  const reduced = endsOf(reducedHeapMb);
  const reducedLine = lineOf(steady, reducedHeapMb).text;
  verdicts.push(
    grew("service RSS", (sample) => mb(sample.rssBytes), 0, " MB"),
    // Live after a full collection: a heap read between V8's collections swings with the garbage of the last burst.
    grew("service JS heap, the fleet's own objects (live, by V8's object stats)", fleetHeapMb, 0, " MB", bounds.heapGrowth),
    heapLine(bounds, steady),
    grew("service JS heap (live, without V8's compiled code)", liveHeapMb, 0, " MB", bounds.liveHeapGrowth),
    {
      ok: true,
      info: true,
      text: `service JS heap (live, without compiled code)'s line ${lineOf(steady, liveHeapMb).text}; V8's bookkeeping by its object stats (its compiled code included) ${lineOf(steady, v8HeapMb).text}`,
    },
    {
      ok: true,
      info: true,
      text: `service JS heap (live, all): ${fmt(whole.start)} MB → ${fmt(whole.end)} MB (${whole.change}), of which V8's compiled code ${fmt(code.start)} MB → ${fmt(code.end)} MB (${code.change})`,
    },
    {
      ok: true,
      info: true,
      text: `service JS heap after V8's memory-reducing collection, without compiled code: ${fmt(reduced.start)} MB → ${fmt(reduced.end)} MB (${reduced.change}); its line ${reducedLine}`,
    },
    heapByTenMinutes(outcome.samples, outcome.steadyFromMs, "service JS heap, the fleet's own objects", fleetHeapMb),
    heapByTenMinutes(outcome.samples, outcome.steadyFromMs, "service JS heap (live, without compiled code)", liveHeapMb),
    { ok: true, info: true, text: holdingsGrowthText(steady[0]!.holdings, steady.at(-1)!.holdings) },
    grew("service descriptors", (sample) => sample.fds, bounds.countSlack),
    grew("service sockets", (sample) => sample.sockets, bounds.countSlack),
    grew("service active handles and timers", handles, bounds.countSlack),
  );
  const p99Start = percentile(
    first.flatMap((sample) => sample.latenciesMs),
    99,
  );
  const p99End = percentile(
    last.flatMap((sample) => sample.latenciesMs),
    99,
  );
  const p99Limit = p99Start * bounds.p99Ratio + bounds.p99SlackMs;
  verdicts.push({ ok: p99End <= p99Limit, text: `event to pixel p99: ${p99Start} ms → ${p99End} ms (bound ${p99Limit.toFixed(0)} ms)` });
  const timeouts = steady.reduce((sum, sample) => sum + sample.timeouts, 0);
  verdicts.push({ ok: timeouts === 0, text: `renames not painted within 5 s after warm-up: ${timeouts} (must be 0)` });
  const slowestReload = Math.max(0, ...outcome.reloadPaintsMs);
  verdicts.push({
    ok: slowestReload <= PAINT_WITHIN_MS,
    text: `reloaded pages painted their tree within 5 s: ${outcome.reloadPaintsMs.filter((ms) => ms <= PAINT_WITHIN_MS).length} of ${outcome.reloadPaintsMs.length}, slowest ${slowestReload} ms`,
  });
  verdicts.push({
    ok: Math.abs(last.at(-1)!.liveAgents - first[0]!.liveAgents) <= first[0]!.liveAgents * 0.25,
    text: `fleet size ${first[0]!.liveAgents} → ${last.at(-1)!.liveAgents} agents on their servers (same order: churn deletes what it creates); rows with those that left ${first[0]!.agents} → ${last.at(-1)!.agents}`,
  });
  return verdicts;
}

const mb = (bytes: number) => bytes / 1024 / 1024;
const liveHeapMb = (sample: ResourceSample) => mb(sample.heapLiveBytes - sample.heapCodeBytes);
const fleetHeapMb = (sample: ResourceSample) => mb(sample.objects?.fleetBytes ?? NaN);
const v8HeapMb = (sample: ResourceSample) => mb(sample.objects?.v8Bytes ?? NaN);
const reducedHeapMb = (sample: ResourceSample) => mb(sample.heapReducedBytes - sample.heapReducedCodeBytes);

/** A working day at the desk: what the heap's line is projected over. */
export const WORKING_DAY_MS = 8 * 3_600_000;

/** The least-squares line through the points: its value at the first x and its slope per unit of x. */
export function fitLine(points: { x: number; y: number }[]): { start: number; slope: number } {
  const meanX = mean(points.map((point) => point.x));
  const meanY = mean(points.map((point) => point.y));
  const spread = points.reduce((sum, point) => sum + (point.x - meanX) ** 2, 0);
  const slope = spread > 0 ? points.reduce((sum, point) => sum + (point.x - meanX) * (point.y - meanY), 0) / spread : 0;
  return { start: meanY + slope * ((points[0]?.x ?? 0) - meanX), slope };
}

/**
 * Whether the heap rises in a line: the two ends (checkBounds) can both land in a trough of a sawtooth, so the
 * heap's least-squares line over every steady sample is projected over a working day instead.
 */
function heapLine(bounds: SoakBounds, steady: ResourceSample[]): BoundVerdict {
  const line = lineOf(steady, fleetHeapMb);
  const text = `service JS heap, the fleet's own objects' line over ${line.samples} samples: ${line.text}`;
  if (bounds.heapDayRise === null || line.samples < 10) return { ok: true, info: true, text };
  return { ok: line.dayRise <= bounds.heapDayRise, text: `${text} (bound ${(bounds.heapDayRise * 100).toFixed(0)} %)` };
}

/**
 * A heap figure's ten-minute means over the last service process's life, the warm-up marked: what
 * the bounds read is the end of a curve, and its shape (a fill that levels, or a line) is printed.
 */
function heapByTenMinutes(samples: ResourceSample[], steadyFromMs: number, what: string, read: (sample: ResourceSample) => number): BoundVerdict {
  const lastPid = samples.at(-1)?.servicePid;
  const life = samples.filter((sample) => sample.servicePid === lastPid && Number.isFinite(read(sample)));
  const means: string[] = [];
  for (let from = Math.floor((life[0]?.atMs ?? 0) / 600_000) * 600_000; from <= (life.at(-1)?.atMs ?? -1); from += 600_000) {
    const within = life.filter((sample) => sample.atMs >= from && sample.atMs < from + 600_000).map(read);
    if (within.length === 0) continue;
    means.push(`${from / 60_000}${from + 600_000 > steadyFromMs ? "" : " (warm-up)"} ${mean(within).toFixed(2)}`);
  }
  return { ok: true, info: true, text: `${what}, ten-minute means from the minute: ${means.join(", ")} MB` };
}

/** The least-squares line through the steady samples: its rise over a working day (share of its start), and in words. */
function lineOf(steady: ResourceSample[], read: (sample: ResourceSample) => number): { samples: number; dayRise: number; text: string } {
  const points = steady.map((sample) => ({ x: sample.atMs, y: read(sample) })).filter((point) => Number.isFinite(point.y));
  const { start, slope } = fitLine(points);
  const perHour = slope * 3_600_000;
  const dayRise = start > 0 ? (slope * WORKING_DAY_MS) / start : 0;
  return {
    samples: points.length,
    dayRise,
    text: `${perHour >= 0 ? "+" : ""}${perHour.toFixed(3)} MB an hour, ${(dayRise * 100).toFixed(1)} % over a working day`,
  };
}

const fmt = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1));
