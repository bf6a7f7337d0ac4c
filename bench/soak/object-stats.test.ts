import { spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { RESOURCE_REPORT_ENV, RESOURCE_REPORT_OBJECT_STATS_ENV, type ResourceReport } from "../../electron/serve/resource-report";
import { lastLiveSection, objectStats } from "./object-stats";

describe("V8's object stats of the service's resource report", () => {
  it("are printed for the report's own collection only, and group the held objects as the fleet's", async () => {
    const dir = await mkdtemp(join(tmpdir(), "t3-fleet-resource-report-"));
    try {
      // V8 prints on the process's stdout (C's stdio), which only a process of its own can send to a file.
      const script = join(dir, "report.mts");
      await writeFile(
        script,
        [
          `import { installResourceReport } from ${JSON.stringify(fileURLToPath(new URL("../../electron/serve/resource-report.ts", import.meta.url)))};`,
          "installResourceReport(process.env);",
          "const held = Array.from({ length: 20_000 }, (_, index) => ({ index, text: `thread-${index}` }));",
          'process.emit("SIGUSR2", "SIGUSR2");',
          // Collections after the report's are not traced.
          "for (let i = 0; i < 3; i++) { Array.from({ length: 100_000 }, () => ({})); await new Promise((done) => setTimeout(done, 10)); }",
          "console.log(`held ${held.length}`);",
        ].join("\n"),
      );
      const stdoutPath = join(dir, "stdout");
      const stdout = openSync(stdoutPath, "w");
      try {
        const child = spawn(process.execPath, ["--import", "tsx", script], {
          env: { ...process.env, [RESOURCE_REPORT_ENV]: join(dir, "report.json"), [RESOURCE_REPORT_OBJECT_STATS_ENV]: "1" },
          stdio: ["ignore", stdout, "inherit"],
        });
        const [code] = (await once(child, "exit")) as [number | null];
        expect(code).toBe(0);
      } finally {
        closeSync(stdout);
      }
      const text = await readFile(stdoutPath, "utf8");
      expect(text).toContain("held 20000");
      // One collection traced: its live section and its dead one.
      expect(text.match(/"type": "gc_descriptor"/g)).toHaveLength(2);
      const stats = objectStats(lastLiveSection(text)!);
      const report = JSON.parse(await readFile(join(dir, "report.json"), "utf8")) as ResourceReport;
      // The types cover the live heap the report measured after that same collection (and V8 counts
      // its scripts' sources, which are outside the heap, in them too); the fleet's are part of it.
      expect(stats.fleetBytes + stats.v8Bytes).toBeGreaterThan(report.heapLiveBytes! * 0.9);
      expect(stats.fleetBytes).toBeLessThan(report.heapLiveBytes!);
      // 20,000 held objects and their strings are the fleet's, not V8's.
      expect(stats.groups.objects).toBeGreaterThan(20_000 * 16);
      expect(stats.groups.strings).toBeGreaterThan(20_000 * 12);
      expect(stats.groups["V8 code"]).toBeGreaterThan(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("reads only a live section whose dead section has begun: the rest may still be in C's stdio buffer", () => {
    const line = (fields: string) => `{ "isolate": "0x1", "id": 7, ${fields} }`;
    const live = [
      line('"key": "live", "type": "gc_descriptor", "time": 1'),
      line('"key": "live", "type": "instance_type_data", "instance_type_name": "JS_OBJECT_TYPE", "overall": 64'),
    ];
    expect(lastLiveSection(live.join("\n"))).toBeNull();
    const whole = [
      ...live,
      line('"key": "dead", "type": "gc_descriptor", "time": 2'),
      "service output",
      line('"key": "dead", "type": "instance_type_data", "instance_type_na'),
    ];
    expect(lastLiveSection(whole.join("\n"))).toEqual(new Map([["JS_OBJECT_TYPE", 64]]));
    expect(() => lastLiveSection(line('"key": "live", "type": "instance_type_data", "overall": "64"'))).toThrow(/did not print as expected/);
  });
});
