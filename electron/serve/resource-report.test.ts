import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { installResourceReport, RESOURCE_REPORT_ENV, type ResourceReport, resourceReport } from "./resource-report";

describe("resource report (the soak benchmark's debug hook)", () => {
  const listeners = process.listeners("SIGUSR2");
  afterEach(() => {
    for (const listener of process.listeners("SIGUSR2")) if (!listeners.includes(listener)) process.off("SIGUSR2", listener);
  });

  it("counts the process's own memory and active handles by kind", () => {
    const timer = setInterval(() => undefined, 60_000);
    try {
      const report = resourceReport();
      expect(report.afterCollections).toBeNull();
      expect(report.pid).toBe(process.pid);
      expect(report.heapUsedBytes).toBeGreaterThan(0);
      expect(report.rssBytes).toBeGreaterThanOrEqual(report.heapUsedBytes);
      expect(report.activeResources.Timeout).toBeGreaterThanOrEqual(1);
    } finally {
      clearInterval(timer);
    }
  });

  it("is off unless the environment names a file", () => {
    expect(installResourceReport({})).toBeNull();
    expect(process.listeners("SIGUSR2")).toEqual(listeners);
  });

  it("writes the report to the named file on SIGUSR2", async () => {
    const dir = await mkdtemp(join(tmpdir(), "t3-fleet-resource-report-"));
    try {
      const path = join(dir, "report.json");
      const watch = installResourceReport({ [RESOURCE_REPORT_ENV]: path });
      const store = new Map(Array.from({ length: 300 }, (_, index) => [`thread-${index}`, { title: "t" }]));
      watch!.hold("service", { store });
      process.emit("SIGUSR2", "SIGUSR2");
      const report = JSON.parse(await readFile(path, "utf8")) as ResourceReport;
      expect(report.pid).toBe(process.pid);
      expect(Object.keys(report.activeResources).length).toBeGreaterThan(0);
      // After a full collection: garbage is not counted as what the service holds.
      expect(report.heapLiveBytes).toBeGreaterThan(0);
      expect(report.heapLiveBytes).toBeLessThanOrEqual(report.heapUsedBytes);
      // V8's compiled code is part of the live heap, and this test's own functions are some of it.
      expect(report.heapCodeBytes).toBeGreaterThan(0);
      expect(report.heapCodeBytes).toBeLessThan(report.heapLiveBytes!);
      // V8's memory-reducing collection after the plain one leaves no more than it did.
      expect(report.heapReducedBytes).toBeGreaterThan(0);
      expect(report.heapReducedBytes).toBeLessThanOrEqual(report.heapLiveBytes!);
      expect(report.heapReducedCodeBytes).toBeGreaterThan(0);
      // What the memory is made of after them: a buffer held outside the heap is counted outside it.
      const held = Buffer.alloc(8 * 1024 * 1024, 1);
      process.emit("SIGUSR2", "SIGUSR2");
      const withBuffer = JSON.parse(await readFile(path, "utf8")) as ResourceReport;
      expect(held.byteLength).toBe(8 * 1024 * 1024);
      const makeUp = withBuffer.afterCollections!;
      expect(makeUp.heapCommittedBytes).toBeGreaterThanOrEqual(withBuffer.heapReducedBytes!);
      expect(makeUp.arrayBuffersBytes).toBeGreaterThanOrEqual(8 * 1024 * 1024);
      expect(makeUp.externalBytes).toBeGreaterThanOrEqual(makeUp.arrayBuffersBytes);
      expect(makeUp.v8MallocedBytes).toBeGreaterThan(0);
      // What the watched object holds, by path.
      expect(report.holdings).toContainEqual({ path: "service.store", objects: 1, entries: 300, chars: [...store.keys()].join("").length });
      expect(report.holdings).toContainEqual({ path: "service.store[*]", objects: 300, entries: 0, chars: 300 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
