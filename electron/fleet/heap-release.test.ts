import { afterEach, describe, expect, it, vi } from "vitest";
import { HeapRelease } from "./heap-release";

function release(collect: () => void) {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  return new HeapRelease({ quietMs: 1_000, maxWaitMs: 30_000, now: Date.now, collection: collect });
}

describe("HeapRelease", () => {
  afterEach(() => vi.useRealTimers());

  it("collects once, after a burst of snapshots has gone quiet, not inside it", () => {
    const collect = vi.fn();
    const heap = release(collect);
    for (let i = 0; i < 10; i++) {
      heap.snapshotApplied();
      vi.advanceTimersByTime(500);
    }
    expect(collect).not.toHaveBeenCalled();
    vi.advanceTimersByTime(500);
    expect(collect).toHaveBeenCalledTimes(1);
    heap.activity();
    vi.advanceTimersByTime(60_000);
    expect(collect).toHaveBeenCalledTimes(1);
  });

  it("waits while agents keep changing, but no longer than its deadline", () => {
    const collect = vi.fn();
    const heap = release(collect);
    heap.snapshotApplied();
    for (let elapsed = 0; elapsed < 29_500; elapsed += 100) {
      heap.activity();
      vi.advanceTimersByTime(100);
    }
    expect(collect).not.toHaveBeenCalled();
    for (let elapsed = 0; elapsed < 600; elapsed += 100) {
      heap.activity();
      vi.advanceTimersByTime(100);
    }
    expect(collect).toHaveBeenCalledTimes(1);
  });

  it("collects nothing after it was stopped", () => {
    const collect = vi.fn();
    const heap = release(collect);
    heap.snapshotApplied();
    heap.stop();
    vi.advanceTimersByTime(60_000);
    expect(collect).not.toHaveBeenCalled();
  });

  it("runs V8's own collection without leaving a gc global behind", () => {
    const before = "gc" in globalThis;
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const heap = new HeapRelease({ quietMs: 10 });
    heap.snapshotApplied();
    expect(() => vi.advanceTimersByTime(10)).not.toThrow();
    expect("gc" in globalThis).toBe(before);
  });
});
