// `npx tsx bench/soak/heap-types.ts TRACE SOAK_LOG [--from MIN] [--to MIN]`: what rose in the fleet
// service's live heap, by V8 instance type, in a soak run with `--heap-types TRACE` (bench/soak.ts).
// The service's V8 prints the live size of every instance type at each full collection; this takes
// the collection each sample forced (the last service process only: a SIGKILLed one starts again),
// groups the types into the fleet's objects and V8's own bookkeeping (code, feedback, function
// metadata, hidden classes), and prints each group's line over the window, in MB an hour, with the
// types that rose most. The soak's heap bound leaves out only V8's code spaces; this names the rest.
import { createReadStream, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { z } from "zod";
import { fitLine } from "./bounds";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { from: { type: "string", default: "0" }, to: { type: "string", default: "1e9" } },
});
const [tracePath, logPath] = positionals;
if (!tracePath || !logPath) throw new Error("usage: heap-types.ts TRACE SOAK_LOG [--from MIN] [--to MIN]");
const fromMinute = Number(values.from);
const toMinute = Number(values.to);

// V8's trace lines (Node 22, V8 12.4): one per collection, then one per instance type.
const TraceLine = z.discriminatedUnion("type", [
  z.object({ type: z.literal("gc_descriptor"), key: z.string(), id: z.number(), time: z.number() }),
  z.object({ type: z.literal("instance_type_data"), key: z.string(), instance_type_name: z.string(), overall: z.number() }),
  z.object({ type: z.enum(["bucket_sizes", "field_data"]) }),
]);

interface Collection {
  id: number;
  /** ms since the process's isolate started. */
  time: number;
  bytes: Map<string, number>;
}

/** Lines cut short: the one a running soak's service is still writing, or one a SIGKILL cut. */
let tornLines = 0;

function json(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    tornLines++;
    return null;
  }
}

/** The live figures of each collection, by process (a collection's id starting again is a new process). */
async function readTrace(path: string): Promise<Collection[][]> {
  const processes: Collection[][] = [];
  for await (const line of createInterface({ input: createReadStream(path) })) {
    // The service's own output shares the file; only V8's lines start so.
    if (!line.startsWith('{ "isolate"')) continue;
    const value = json(line);
    if (value === null) continue;
    const parsed = TraceLine.safeParse(value);
    if (!parsed.success) throw new Error(`${path}: a trace line V8 did not print as expected: ${line.slice(0, 200)}`);
    const entry = parsed.data;
    if (!("key" in entry) || entry.key !== "live") continue;
    const current = processes.at(-1);
    if (entry.type === "gc_descriptor") {
      const last = current?.at(-1);
      if (!current || (last && entry.id < last.id)) processes.push([]);
      processes.at(-1)!.push({ id: entry.id, time: entry.time, bytes: new Map() });
    } else if (entry.overall > 0) current?.at(-1)?.bytes.set(entry.instance_type_name, entry.overall);
  }
  return processes;
}

const GROUPS: [string, RegExp][] = [
  ["V8 feedback", /FEEDBACK|ALLOCATION_SITE|LOAD_HANDLER|STORE_HANDLER/],
  ["V8 code", /^(BASELINE|TURBOFAN|MAGLEV|INTERPRETED|CODE|BYTECODE|SOURCE_POSITION|RELOC|DEOPT|TRUSTED|EMBEDDED|BYTE_ARRAY|OPTIMIZED_CODE)/],
  [
    "V8 functions",
    /SCOPE_INFO|SHARED_FUNCTION_INFO|UNCOMPILED|PREPARSE|SCRIPT|BOILERPLATE|CLASS_POSITIONS|FUNCTION_TEMPLATE|SOURCE_TEXT_MODULE|MODULE_REQUEST|WEAK_ARRAY_LIST|WEAK_FIXED_ARRAY|TRANSITION_ARRAY|PROTOTYPE_INFO|ACCESSOR_INFO/,
  ],
  ["V8 hidden classes", /^MAP_|DESCRIPTOR_ARRAY|ENUM_/],
  ["strings", /STRING/],
  ["closures' contexts", /CONTEXT/],
];
const groupOf = (type: string) => GROUPS.find(([, pattern]) => pattern.test(type))?.[0] ?? "objects";

const log = readFileSync(logPath, "utf8");
const secondsOf = (pattern: RegExp) => [...log.matchAll(pattern)].map((match) => Number(match[1]));
const sampleSeconds = secondsOf(/^\[\s*([\d.]+) s\] sample:/gm);
// The last service process started when the last SIGKILL restarted it.
const startedAt = secondsOf(/^\[\s*([\d.]+) s\] fleet service SIGKILLed/gm).at(-1) ?? 0;
const collections = (await readTrace(tracePath)).at(-1) ?? [];
// A sample's line is logged a few seconds after the collections it forced (bench/soak.ts).
const samples = sampleSeconds
  .filter((seconds) => seconds / 60 >= fromMinute && seconds / 60 <= toMinute && seconds > startedAt + 5)
  .flatMap((seconds) => {
    const forced = collections.find((collection) => Math.abs(seconds - 3.5 - (collection.time / 1000 + startedAt)) < 4.5);
    return forced ? [{ minute: seconds / 60, bytes: forced.bytes }] : [];
  });
if (samples.length < 3)
  throw new Error(`only ${samples.length} samples matched a collection of the last service process between minutes ${fromMinute} and ${toMinute}`);

// MB an hour.
const lineOf = (bytesOf: (bytes: Map<string, number>) => number) =>
  fitLine(samples.map((sample) => ({ x: sample.minute / 60, y: bytesOf(sample.bytes) / 1e6 }))).slope;
const groupBytes = (bytes: Map<string, number>, group: string) => [...bytes].reduce((sum, [type, size]) => (groupOf(type) === group ? sum + size : sum), 0);
const first = samples[0]!;
const last = samples.at(-1)!;
if (tornLines > 0) console.log(`${tornLines} trace line(s) cut short (a SIGKILLed service's last, or one still being written) left out`);
console.log(`${samples.length} samples from minute ${first.minute.toFixed(1)} to ${last.minute.toFixed(1)} (service process started at ${startedAt} s)`);
console.log("live bytes by group: first → last sample, and the line over all samples");
for (const group of [...GROUPS.map(([name]) => name), "objects"]) {
  const before = groupBytes(first.bytes, group) / 1e6;
  const after = groupBytes(last.bytes, group) / 1e6;
  console.log(`  ${group.padEnd(20)} ${before.toFixed(3)} → ${after.toFixed(3)} MB, line ${lineOf((bytes) => groupBytes(bytes, group)).toFixed(3)} MB an hour`);
}
const types = new Set(samples.flatMap((sample) => [...sample.bytes.keys()]));
const rising = [...types].map((type) => ({ type, line: lineOf((bytes) => bytes.get(type) ?? 0) })).sort((a, b) => b.line - a.line);
console.log("types whose line rose most (MB an hour):");
for (const { type, line } of rising.slice(0, 15)) console.log(`  ${line.toFixed(3).padStart(7)}  ${type} (${groupOf(type)})`);
