// V8's object stats (`--trace-gc-object-stats`, Node 22's V8 12.4): at a full collection V8 prints
// one JSON line per instance type with its live size, then the same for what died. The service
// prints them for the one collection of each resource report (electron/serve/resource-report.ts);
// the soak reads each sample's (bench/soak.ts), bench/soak/heap-types.ts a whole run's. The types
// are grouped into the fleet's own objects and V8's bookkeeping for the program's functions.
import { z } from "zod";

/** Only V8's trace lines start so; the service's own output shares the file. */
export const TRACE_LINE_PREFIX = '{ "isolate"';

// One descriptor line per collection and section ("live", "dead"), then one per instance type.
const TraceLine = z.discriminatedUnion("type", [
  z.object({ type: z.literal("gc_descriptor"), isolate: z.string(), key: z.string(), id: z.number(), time: z.number() }),
  z.object({ type: z.literal("instance_type_data"), key: z.string(), instance_type_name: z.string(), overall: z.number() }),
  z.object({ type: z.enum(["bucket_sizes", "field_data"]) }),
]);
export type TraceEntry = z.infer<typeof TraceLine>;

/**
 * One of V8's trace lines decoded; null for a line cut short (one still being written, or the last
 * of a SIGKILLed process). A whole line V8 did not print as expected is an error: the groups below
 * would be wrong.
 */
export function traceEntry(line: string): TraceEntry | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  const parsed = TraceLine.safeParse(value);
  if (!parsed.success) throw new Error(`a trace line V8 did not print as expected: ${line.slice(0, 200)}`);
  return parsed.data;
}

/**
 * V8's own groups first: compiled code and its metadata, feedback, function metadata (scope infos,
 * shared function infos, the dependent-code weak lists) and hidden classes. They grow while V8 still
 * optimizes more of the program hours in, bounded by the program. What is left is the fleet's.
 */
const GROUPS: { name: string; v8: boolean; pattern: RegExp }[] = [
  { name: "V8 feedback", v8: true, pattern: /FEEDBACK|ALLOCATION_SITE|LOAD_HANDLER|STORE_HANDLER/ },
  {
    name: "V8 code",
    v8: true,
    pattern: /^(BASELINE|TURBOFAN|MAGLEV|INTERPRETED|CODE|BYTECODE|SOURCE_POSITION|RELOC|DEOPT|TRUSTED|EMBEDDED|BYTE_ARRAY|OPTIMIZED_CODE)/,
  },
  {
    name: "V8 functions",
    v8: true,
    pattern:
      /SCOPE_INFO|SHARED_FUNCTION_INFO|UNCOMPILED|PREPARSE|SCRIPT|BOILERPLATE|CLASS_POSITIONS|FUNCTION_TEMPLATE|SOURCE_TEXT_MODULE|MODULE_REQUEST|WEAK_ARRAY_LIST|WEAK_FIXED_ARRAY|TRANSITION_ARRAY|PROTOTYPE_INFO|ACCESSOR_INFO/,
  },
  { name: "V8 hidden classes", v8: true, pattern: /^MAP_|DESCRIPTOR_ARRAY|ENUM_/ },
  { name: "strings", v8: false, pattern: /STRING/ },
  { name: "closures' contexts", v8: false, pattern: /CONTEXT/ },
];
const OBJECTS = "objects";
export const GROUP_NAMES = [...GROUPS.map((group) => group.name), OBJECTS];
export const groupOf = (type: string) => GROUPS.find((group) => group.pattern.test(type))?.name ?? OBJECTS;
const isV8Group = (name: string) => GROUPS.some((group) => group.name === name && group.v8);

/** One collection's live bytes: by group, and the two sums. */
export interface ObjectStats {
  groups: Record<string, number>;
  /** The fleet's objects, strings and closures' contexts. */
  fleetBytes: number;
  /** V8's code, feedback, function metadata and hidden classes. */
  v8Bytes: number;
}

export function objectStats(bytesByType: Map<string, number>): ObjectStats {
  const groups = Object.fromEntries(GROUP_NAMES.map((name) => [name, 0]));
  for (const [type, bytes] of bytesByType) groups[groupOf(type)]! += bytes;
  let fleetBytes = 0;
  let v8Bytes = 0;
  for (const [name, bytes] of Object.entries(groups))
    if (isV8Group(name)) v8Bytes += bytes;
    else fleetBytes += bytes;
  return { groups, fleetBytes, v8Bytes };
}

/**
 * The live sizes by type of the last collection in `text` whose live section is whole: its dead
 * section has begun (V8 prints it after the live one in the same collection, and its bytes push the
 * live ones out of C's stdio buffer into the file). Null when there is none.
 */
export function lastLiveSection(text: string): Map<string, number> | null {
  let complete: Map<string, number> | null = null;
  let current: { id: number; bytes: Map<string, number> } | null = null;
  for (const line of text.split("\n")) {
    if (!line.startsWith(TRACE_LINE_PREFIX)) continue;
    const entry = traceEntry(line);
    if (entry?.type === "gc_descriptor") {
      if (entry.key === "live") current = { id: entry.id, bytes: new Map() };
      else if (current?.id === entry.id) [complete, current] = [current.bytes, null];
    } else if (entry?.type === "instance_type_data" && entry.key === "live" && entry.overall > 0) current?.bytes.set(entry.instance_type_name, entry.overall);
  }
  return complete;
}
