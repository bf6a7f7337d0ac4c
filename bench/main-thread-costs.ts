// Where a page's main thread spends its time, from a Chromium performance trace (Playwright's
// browser.startTracing/stopTracing): self time by kind of work (script, style, layout, paint, GC…),
// as DevTools' summary shows it, so a bench can say what an update costs and not only how much.
import { z } from "zod";

/** The timeline categories DevTools records. */
export const TRACE_CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute", "blink.user_timing"];

const TraceEvent = z.object({
  name: z.string(),
  ph: z.string(),
  pid: z.number(),
  tid: z.number(),
  ts: z.number(),
  dur: z.number().optional(),
  args: z.record(z.string(), z.unknown()).optional(),
});
type TraceEvent = z.infer<typeof TraceEvent>;
const Trace = z.object({ traceEvents: z.array(z.unknown()) });

/** DevTools' grouping of timeline events; anything else inside a task is "other". */
const KINDS: Record<string, string> = {
  FunctionCall: "script",
  EvaluateScript: "script",
  TimerFire: "script",
  FireAnimationFrame: "script",
  EventDispatch: "script",
  "v8.execute": "script",
  "V8.Execute": "script",
  RunMicrotasks: "script",
  FireIdleCallback: "script",
  UpdateLayoutTree: "style",
  ParseAuthorStyleSheet: "style",
  Layout: "layout",
  PrePaint: "paint",
  Paint: "paint",
  PaintImage: "paint",
  Layerize: "paint",
  UpdateLayer: "paint",
  CompositeLayers: "paint",
  Commit: "paint",
  MinorGC: "gc",
  MajorGC: "gc",
  "V8.GC_SCAVENGER": "gc",
  "V8.GC_MARK_COMPACTOR": "gc",
  ParseHTML: "parse",
};

export interface MainThreadCosts {
  /** Milliseconds of self time per kind, over the trace. */
  byKind: Record<string, number>;
  /** How many times each of these ran: layouts forced from script count too. */
  counts: { layouts: number; styleRecalcs: number; animationFrames: number };
  /** Milliseconds the main thread was in tasks. */
  busy: number;
  /** The biggest events of no known kind, by self time: what "other" is made of. */
  other: [name: string, ms: number][];
}

/** The renderer's main thread: the thread named CrRendererMain with the most events (the page's, not a worker's). */
function mainThread(events: TraceEvent[]): { pid: number; tid: number } | undefined {
  const named = events.filter((event) => event.ph === "M" && event.name === "thread_name" && event.args?.name === "CrRendererMain");
  let best: { pid: number; tid: number; count: number } | undefined;
  for (const thread of named) {
    const count = events.filter((event) => event.pid === thread.pid && event.tid === thread.tid && event.ph === "X").length;
    if (!best || count > best.count) best = { pid: thread.pid, tid: thread.tid, count };
  }
  return best;
}

export function mainThreadCosts(traceJson: string): MainThreadCosts {
  const raw = Trace.parse(JSON.parse(traceJson)).traceEvents;
  const events = raw.flatMap((event) => {
    const parsed = TraceEvent.safeParse(event);
    return parsed.success ? [parsed.data] : [];
  });
  const thread = mainThread(events);
  const byKind: Record<string, number> = {};
  const counts = { layouts: 0, styleRecalcs: 0, animationFrames: 0 };
  const other = new Map<string, number>();
  if (!thread) return { byKind, counts, busy: 0, other: [] };
  const complete = events
    .filter((event) => event.pid === thread.pid && event.tid === thread.tid && event.ph === "X" && event.dur !== undefined)
    .sort((a, b) => a.ts - b.ts || b.dur! - a.dur!);
  // Self time: an event's duration less its children's, each charged to the innermost kind known
  // (a layout forced inside a script call is layout, not script).
  const stack: { name: string; end: number; kind: string | null; childTime: number; dur: number }[] = [];
  let busy = 0;
  const close = (upTo: number) => {
    while (stack.length && stack.at(-1)!.end <= upTo) {
      const done = stack.pop()!;
      const self = done.dur - done.childTime;
      const kind = done.kind ?? stack.findLast((open) => open.kind !== null)?.kind ?? "other";
      byKind[kind] = (byKind[kind] ?? 0) + self / 1000;
      if (kind === "other") other.set(done.name, (other.get(done.name) ?? 0) + self / 1000);
    }
  };
  for (const event of complete) {
    close(event.ts);
    if (event.name === "Layout") counts.layouts++;
    if (event.name === "UpdateLayoutTree") counts.styleRecalcs++;
    if (event.name === "FireAnimationFrame") counts.animationFrames++;
    const parent = stack.at(-1);
    if (parent) parent.childTime += event.dur!;
    else busy += event.dur! / 1000;
    stack.push({ name: event.name, end: event.ts + event.dur!, kind: KINDS[event.name] ?? null, childTime: 0, dur: event.dur! });
  }
  close(Number.POSITIVE_INFINITY);
  const biggestOther = [...other].sort(([, a], [, b]) => b - a).slice(0, 4);
  return { byKind, counts, busy, other: biggestOther };
}

/** One line: each kind's share of a core over `seconds`, biggest first, and the layout count. */
export function costsLine(costs: MainThreadCosts, seconds: number): string {
  const share = (ms: number) => `${((ms / 1000 / seconds) * 100).toFixed(1)} %`;
  const kinds = Object.entries(costs.byKind)
    .sort(([, a], [, b]) => b - a)
    .map(([kind, ms]) => `${kind} ${share(ms)}`)
    .join(", ");
  const other = costs.other.map(([name, ms]) => `${name} ${share(ms)}`).join(", ");
  return `main thread ${share(costs.busy)} of a core: ${kinds}; ${costs.counts.layouts} layouts, ${costs.counts.styleRecalcs} style recalcs, ${costs.counts.animationFrames} animation-frame callbacks; "other" is mostly ${other || "nothing"}`;
}
