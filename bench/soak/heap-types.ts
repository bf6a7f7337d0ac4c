// `npx tsx bench/soak/heap-types.ts TRACE SOAK_LOG [--from MIN] [--to MIN]`: what rose in the fleet
// service's live heap, by V8 instance type, in a soak run with `--heap-types TRACE` (bench/soak.ts).
// The service's V8 prints the live size of every instance type at each sample's full collection
// (bench/soak/object-stats.ts); this takes them (the last service process only: a SIGKILLed one
// starts again), and prints each group's line over the window, in MB an hour, with the types that
// rose most: the soak's log has the groups of each sample, this names the types within them.
import { createReadStream, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { fitLine } from "./bounds";
import { GROUP_NAMES, groupOf, objectStats, TRACE_LINE_PREFIX, traceEntry } from "./object-stats";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { from: { type: "string", default: "0" }, to: { type: "string", default: "1e9" } },
});
const [tracePath, logPath] = positionals;
if (!tracePath || !logPath) throw new Error("usage: heap-types.ts TRACE SOAK_LOG [--from MIN] [--to MIN]");
const fromMinute = Number(values.from);
const toMinute = Number(values.to);

interface Collection {
  /** V8's isolate's address: another one is another process. */
  isolate: string;
  id: number;
  bytes: Map<string, number>;
}

/** Lines cut short: the one a running soak's service is still writing, or one a SIGKILL cut. */
let tornLines = 0;

/** The live figures of each collection, by process (a collection's id starting again is a new process). */
async function readTrace(path: string): Promise<Collection[][]> {
  const processes: Collection[][] = [];
  for await (const line of createInterface({ input: createReadStream(path) })) {
    if (!line.startsWith(TRACE_LINE_PREFIX)) continue;
    const entry = traceEntry(line);
    if (entry === null) tornLines++;
    if (entry === null || !("key" in entry) || entry.key !== "live") continue;
    const current = processes.at(-1);
    if (entry.type === "gc_descriptor") {
      const last = current?.at(-1);
      if (!current || (last && (entry.id < last.id || entry.isolate !== last.isolate))) processes.push([]);
      processes.at(-1)!.push({ isolate: entry.isolate, id: entry.id, bytes: new Map() });
    } else if (entry.overall > 0) current?.at(-1)?.bytes.set(entry.instance_type_name, entry.overall);
  }
  return processes;
}

const log = readFileSync(logPath, "utf8");
const secondsOf = (pattern: RegExp) => [...log.matchAll(pattern)].map((match) => Number(match[1]));
const sampleSeconds = secondsOf(/^\[\s*([\d.]+) s\] sample:/gm);
const killedAt = secondsOf(/^\[\s*([\d.]+) s\] fleet service SIGKILLed/gm);
// The samples of each service process that made any (a SIGKILL starts the next), and the trace's
// processes, each of which traced one collection per sample, in order (electron/serve/resource-report.ts).
const sampledProcesses = [0, ...killedAt]
  .map((from, index) => sampleSeconds.filter((seconds) => seconds > from && seconds <= (killedAt[index] ?? Infinity)))
  .filter((seconds) => seconds.length > 0);
const lastSampled = sampledProcesses.at(-1) ?? [];
const collections = (await readTrace(tracePath)).at(-1) ?? [];
if (lastSampled.length !== collections.length)
  throw new Error(`the last sampled service process has ${lastSampled.length} samples in the log but ${collections.length} traced collections`);
const samples = lastSampled
  .map((seconds, index) => ({ minute: seconds / 60, bytes: collections[index]!.bytes }))
  .filter((sample) => sample.minute >= fromMinute && sample.minute <= toMinute);
if (samples.length < 2) throw new Error(`only ${samples.length} samples of the last sampled service process between minutes ${fromMinute} and ${toMinute}`);

// MB an hour.
const lineOf = (bytesOf: (bytes: Map<string, number>) => number) =>
  fitLine(samples.map((sample) => ({ x: sample.minute / 60, y: bytesOf(sample.bytes) / 1e6 }))).slope;
const groupBytes = (bytes: Map<string, number>, group: string) => objectStats(bytes).groups[group]!;
const first = samples[0]!;
const last = samples.at(-1)!;
if (tornLines > 0) console.log(`${tornLines} trace line(s) cut short (a SIGKILLed service's last, or one still being written) left out`);
console.log(`${samples.length} samples from minute ${first.minute.toFixed(1)} to ${last.minute.toFixed(1)} (the last sampled service process)`);
console.log("live bytes by group: first → last sample, and the line over all samples");
for (const group of GROUP_NAMES) {
  const before = groupBytes(first.bytes, group) / 1e6;
  const after = groupBytes(last.bytes, group) / 1e6;
  console.log(`  ${group.padEnd(20)} ${before.toFixed(3)} → ${after.toFixed(3)} MB, line ${lineOf((bytes) => groupBytes(bytes, group)).toFixed(3)} MB an hour`);
}
const types = new Set(samples.flatMap((sample) => [...sample.bytes.keys()]));
const rising = [...types].map((type) => ({ type, line: lineOf((bytes) => bytes.get(type) ?? 0) })).sort((a, b) => b.line - a.line);
console.log("types whose line rose most (MB an hour):");
for (const { type, line } of rising.slice(0, 15)) console.log(`  ${line.toFixed(3).padStart(7)}  ${type} (${groupOf(type)})`);
