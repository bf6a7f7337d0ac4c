import { describe, expect, it } from "vitest";
import { boundsFor, checkBounds, fitLine, fitPlane, type SoakOutcome } from "./bounds";
import { tally } from "./messages";
import type { ResourceSample } from "./samples";

const MB = 1024 * 1024;
const MINUTE = 60_000;

/** `fleetMb`: the fleet's own objects; `v8Mb`: V8's bookkeeping in the old space beside them (compiled code, 5 MB, apart). */
function sample(atMs: number, fleetMb: number, v8Mb = 10, rows = 100): ResourceSample {
  const liveHeapMb = fleetMb + v8Mb;
  return {
    atMs,
    servicePid: 1,
    liveAgents: 100,
    agents: rows,
    rssBytes: 120 * MB,
    rssAnonBytes: 70 * MB,
    collected: { rssBytes: 110 * MB, rssAnonBytes: 60 * MB },
    afterCollections: null,
    heapUsedBytes: (liveHeapMb + 6) * MB,
    heapLiveBytes: (liveHeapMb + 5) * MB,
    heapCodeBytes: 5 * MB,
    heapReducedBytes: (liveHeapMb + 4.5) * MB,
    heapReducedCodeBytes: 4.5 * MB,
    objects: { groups: {}, fleetBytes: fleetMb * MB, v8Bytes: (v8Mb + 5) * MB },
    fds: 40,
    sockets: 16,
    activeResources: {},
    holdings: [],
    holdingsMs: 0,
    latenciesMs: [30, 40],
    p50Ms: 30,
    p99Ms: 40,
    timeouts: 0,
  };
}

function outcome(samples: ResourceSample[]): SoakOutcome {
  return {
    // Nothing lost or duplicated: what the soak's tally (messages.ts) says of one message delivered once.
    counts: { ...tally([], () => 0, new Map()), sent: 1, delivered: 1 },
    misdirected: 0,
    notificationsBeyondOne: 0,
    agentsLost: 0,
    agentsInvented: 0,
    contradictions: 0,
    orphanChildren: 0,
    orphanSockets: 0,
    samples,
    steadyFromMs: 0,
    pageErrors: 0,
    reloadPaintsMs: [],
  };
}

const heapVerdicts = (samples: ResourceSample[]) =>
  checkBounds(boundsFor(false), outcome(samples)).filter((verdict) => verdict.text.startsWith("service JS heap"));

describe("the soak's heap bounds", () => {
  it("fits the least-squares line: its value at the first point and its slope", () => {
    expect(fitLine([0, 1, 2, 3].map((x) => ({ x, y: 10 + 2 * x })))).toEqual({ start: 10, slope: 2 });
    expect(fitLine([{ x: 5, y: 7 }])).toEqual({ start: 7, slope: 0 });
  });

  it("passes a sawtooth that stays level: its ends and its line", () => {
    const samples = Array.from({ length: 120 }, (_, minute) => sample(minute * MINUTE, 20 + (minute % 10) * 0.05));
    const verdicts = heapVerdicts(samples);
    expect(verdicts.filter((verdict) => !verdict.info).map((verdict) => verdict.ok)).toEqual([true, true, true]);
  });

  it("fails a heap whose two ends are level but whose line rises over a working day", () => {
    // 20 MB rising 0.1 MB a minute (48 MB over eight hours), with the last samples dropping back to the start's level.
    const samples = Array.from({ length: 120 }, (_, minute) => sample(minute * MINUTE, minute >= 117 ? 20 : 20 + minute * 0.1));
    const [ends, line] = heapVerdicts(samples).filter((verdict) => !verdict.info);
    expect(ends!.ok).toBe(true);
    expect(line!.ok).toBe(false);
    expect(line!.text).toMatch(/MB an hour, .* % over a working day \(bound 10 %\)/);
  });

  it("prints the heap's ten-minute means over the service's life, its warm-up marked, so a fill that levels reads apart from a line", () => {
    // Filling for the first 40 minutes (to 22 MB), then level; measured from minute 60.
    const samples = Array.from({ length: 120 }, (_, minute) => sample(minute * MINUTE, 20 + Math.min(minute, 40) * 0.05));
    const means = checkBounds(boundsFor(false), { ...outcome(samples), steadyFromMs: 60 * MINUTE }).find((verdict) =>
      verdict.text.includes("ten-minute means"),
    )!;
    expect(means.info).toBe(true);
    expect(means.text).toContain(
      "from the minute: 0 (warm-up) 20.23, 10 (warm-up) 20.73, 20 (warm-up) 21.23, 30 (warm-up) 21.73, 40 (warm-up) 22.00, 50 (warm-up) 22.00, 60 22.00",
    );
    expect(means.text).toMatch(/110 22\.00 MB$/);
  });

  it("fails 2 % of growth from end to end on a full run, and passes 1.5 %", () => {
    const step = (to: number) => Array.from({ length: 60 }, (_, minute) => sample(minute * MINUTE, minute < 30 ? 20 : to));
    const [grew] = heapVerdicts(step(20.5)).filter((verdict) => !verdict.info);
    expect(grew!.ok).toBe(false);
    expect(grew!.text).toContain("+2.5 %; bound 20.4 MB");
    const [held] = heapVerdicts(step(20.3)).filter((verdict) => !verdict.info);
    expect(held!.ok).toBe(true);
  });

  it("bounds the fleet's own objects flat and the whole live heap by 3 %: V8's bookkeeping may rise within that, and is named", () => {
    // The fleet's objects level at 15 MB; V8's bookkeeping 10 MB rising 0.7 MB an hour (the traced run of stop 57).
    const rising = (perHour: number) =>
      Array.from({ length: 60 }, (_, minute) => sample(minute * MINUTE, 15 + (minute % 5) * 0.01, 10 + (perHour * minute) / 60));
    const [fleetEnds, fleetLine, whole] = heapVerdicts(rising(0.7)).filter((verdict) => !verdict.info);
    expect([fleetEnds!.ok, fleetLine!.ok, whole!.ok]).toEqual([true, true, true]);
    expect(whole!.text).toMatch(/^service JS heap \(live, without V8's compiled code\): 25\.0 MB → 25\.7 MB \(\+2\.7 %; bound 25\.8 MB\)/);
    const named = heapVerdicts(rising(0.7)).find((verdict) => verdict.text.includes("V8's bookkeeping"))!;
    expect(named.info).toBe(true);
    expect(named.text).toMatch(/line \+0\.7\d\d MB an hour, .*; V8's bookkeeping by its object stats \(its compiled code included\) \+0\.700 MB an hour/);
    // At 1 MB an hour the whole live heap goes past the 3 %, though the fleet's objects are level.
    const [, , over] = heapVerdicts(rising(1)).filter((verdict) => !verdict.info);
    expect(over!.ok).toBe(false);
  });

  it("fits time and rows together: a line in time beside a share per row, or nothing when the rows follow time", () => {
    const rowsAt = (x: number) => 300 + 100 * Math.sin(x / 7);
    const fitted = fitPlane([0, 5, 10, 15, 20, 25, 30].map((x) => ({ x, rows: rowsAt(x), y: 12 + 0.01 * x + 0.002 * rowsAt(x) })))!;
    expect(fitted.slope).toBeCloseTo(0.01, 9);
    expect(fitted.perRow).toBeCloseTo(0.002, 9);
    expect(fitted.start).toBeCloseTo(12 + 0.002 * rowsAt(0), 9);
    // Rows level, rows rising with time, and fewer bytes with more rows: time alone holds.
    expect(fitPlane([0, 1, 2, 3].map((x) => ({ x, rows: 100, y: x })))).toBeNull();
    expect(fitPlane([0, 1, 2, 3].map((x) => ({ x, rows: 100 + 10 * x + (x % 2), y: x })))).toBeNull();
    expect(fitPlane([0, 5, 10, 15, 20].map((x) => ({ x, rows: rowsAt(x), y: 20 - 0.01 * rowsAt(x) })))).toBeNull();
  });

  // Soak J's rows with those that left over its measured hour: 342 at minute 60, 444 at minute 92, 368 at the end (docs/architecture.md).
  const soakJRows = (minute: number) => (minute < 32 ? 342 + ((444 - 342) * minute) / 32 : 444 - ((444 - 368) * (minute - 32)) / 28) + 12 * Math.sin(minute);
  const soakJ = (leakMbAnHour: number, perRowMb = 0.004) =>
    Array.from({ length: 61 }, (_, minute) =>
      sample(minute * MINUTE, 10.6 + perRowMb * soakJRows(minute) + (leakMbAnHour * minute) / 60 + (minute % 3) * 0.01, 10, Math.round(soakJRows(minute))),
    );

  it("passes the fleet's objects that follow its rows, rising with them through the hour, at a constant row count", () => {
    const [ends, line] = heapVerdicts(soakJ(0)).filter((verdict) => !verdict.info);
    expect([ends!.ok, line!.ok]).toEqual([true, true]);
    expect(line!.text).toMatch(/at a constant row count, beside 4\.\d\d KB a row: [+-]0\.0\d\d MB an hour/);
    expect(line!.text).toMatch(/in time alone \+0\.\d+ MB an hour/);
    expect(ends!.text).toMatch(/rows 3\d\d → 3\d\d, at 3\d\d rows 12\.\d MB \(\+0\.\d %\)/);
  });

  it("fails a leak that rises in time beside the same rows: the rows take only their share", () => {
    // 0.3 MB an hour on 12 MB is 20 % of a working day, with soak J's rows beside it.
    const [ends, line] = heapVerdicts(soakJ(0.3)).filter((verdict) => !verdict.info);
    expect(line!.ok).toBe(false);
    expect(line!.text).toMatch(/beside 4\.\d\d KB a row: \+0\.3\d\d MB an hour, 20\.\d % over a working day; .*\(bound 10 %\)$/);
    expect(ends!.ok).toBe(false);
  });

  it("fails the fleet's bound when a sample's object stats were never read: it cannot show them flat", () => {
    const samples = Array.from({ length: 60 }, (_, minute) => ({ ...sample(minute * MINUTE, 15), objects: null }));
    const [fleetEnds] = heapVerdicts(samples).filter((verdict) => !verdict.info);
    expect(fleetEnds!.ok).toBe(false);
  });
});
