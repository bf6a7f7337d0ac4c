import { describe, expect, it } from "vitest";
import { boundsFor, checkBounds, fitLine, type SoakOutcome } from "./bounds";
import { tally } from "./messages";
import type { ResourceSample } from "./samples";

const MB = 1024 * 1024;
const MINUTE = 60_000;

/** `fleetMb`: the fleet's own objects; `v8Mb`: V8's bookkeeping in the old space beside them (compiled code, 5 MB, apart). */
function sample(atMs: number, fleetMb: number, v8Mb = 10): ResourceSample {
  const liveHeapMb = fleetMb + v8Mb;
  return {
    atMs,
    servicePid: 1,
    liveAgents: 100,
    agents: 100,
    rssBytes: 120 * MB,
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

  it("fails the fleet's bound when a sample's object stats were never read: it cannot show them flat", () => {
    const samples = Array.from({ length: 60 }, (_, minute) => ({ ...sample(minute * MINUTE, 15), objects: null }));
    const [fleetEnds] = heapVerdicts(samples).filter((verdict) => !verdict.info);
    expect(fleetEnds!.ok).toBe(false);
  });
});
