// A debug hook for the soak benchmark (bench/soak.ts), off unless T3_FLEET_RESOURCE_REPORT names a
// file: on SIGUSR2 the service writes there what only it can see from inside (JS heap, the active
// handles and timers by kind). RSS and descriptors the benchmark reads from /proc itself.
import { renameSync, writeFileSync } from "node:fs";
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from "node:v8";
import { v8Collection } from "../fleet/heap-release";
import { type Holding, holdings } from "./holdings";

export const RESOURCE_REPORT_ENV = "T3_FLEET_RESOURCE_REPORT";
/**
 * Set to "1" beside RESOURCE_REPORT_ENV: V8 prints, on stdout, the live size of each of its instance
 * types at the report's plain full collection (`--trace-gc-object-stats`, on for that one collection
 * only: on for every collection it makes each one slow). bench/soak/object-stats.ts reads it.
 */
export const RESOURCE_REPORT_OBJECT_STATS_ENV = "T3_FLEET_RESOURCE_REPORT_OBJECT_STATS";

export interface ResourceReport {
  at: number;
  pid: number;
  rssBytes: number;
  heapUsedBytes: number;
  /** The heap still in use after a full collection: what the service holds, without garbage V8 has not collected yet. */
  heapLiveBytes: number | null;
  /**
   * Of the live heap, V8's compiled code of the service's own functions (bytecode, baseline and
   * optimized code, their metadata: the code and trusted spaces). It grows while V8 tiers up more of
   * the program as new code paths get hot, and is bounded by the program, not by what the fleet holds.
   */
  heapCodeBytes: number | null;
  /**
   * The same two after V8's memory-reducing collection (the one a heap snapshot makes first, and V8
   * makes under memory pressure), run right after the plain one: what a plain full collection leaves
   * beside the live objects (caches V8 gives back only then, space it does not compact) is not in it.
   */
  heapReducedBytes: number | null;
  heapReducedCodeBytes: number | null;
  heapTotalBytes: number;
  externalBytes: number;
  /**
   * What the process's memory is made of right after the memory-reducing collection, beside the RSS
   * the benchmark reads from /proc then: the pages V8's heap keeps, the buffers outside it
   * (ArrayBuffers and what else V8 is told of as external), and V8's own malloc. The rest of the
   * RSS is the binary's pages and the native side's malloc (Node, libuv, OpenSSL, ICU). Null without collections.
   */
  afterCollections: { heapCommittedBytes: number; externalBytes: number; arrayBuffersBytes: number; v8MallocedBytes: number } | null;
  /** process.getActiveResourcesInfo() counted by kind (TCPSocketWrap, Timeout, FSReqCallback, …). */
  activeResources: Record<string, number>;
  /** What the watched objects hold, by path (holdings.ts), walked after the heap is measured; empty when nothing is watched. */
  holdings: Holding[];
  /** How long the walk for `holdings` took, ms: the report's own cost to the service. */
  holdingsMs: number;
}

/** Names the objects whose holdings the report walks (the fleet service, once it exists). */
export interface ResourceWatch {
  hold(name: string, root: object): void;
}

export interface Collections {
  regular: () => void;
  reducing: () => void;
}

export function resourceReport(collect: Collections | null = null, watched: Record<string, object> = {}): ResourceReport {
  const memory = process.memoryUsage();
  collect?.regular();
  const heapLiveBytes = collect ? process.memoryUsage().heapUsed : null;
  const heapCodeBytes = collect ? compiledCodeBytes() : null;
  collect?.reducing();
  const heapReducedBytes = collect ? process.memoryUsage().heapUsed : null;
  const heapReducedCodeBytes = collect ? compiledCodeBytes() : null;
  const afterCollections = collect ? memoryMakeUp() : null;
  const activeResources: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) activeResources[kind] = (activeResources[kind] ?? 0) + 1;
  // Last: the walk allocates (its own garbage, gone by the next report's first collection).
  const walkStarted = performance.now();
  const held = holdings(watched);
  const holdingsMs = Math.round(performance.now() - walkStarted);
  return {
    at: Date.now(),
    pid: process.pid,
    rssBytes: memory.rss,
    heapUsedBytes: memory.heapUsed,
    heapLiveBytes,
    heapCodeBytes,
    heapReducedBytes,
    heapReducedCodeBytes,
    heapTotalBytes: memory.heapTotal,
    externalBytes: memory.external,
    afterCollections,
    activeResources,
    holdings: held,
    holdingsMs,
  };
}

function memoryMakeUp(): NonNullable<ResourceReport["afterCollections"]> {
  const memory = process.memoryUsage();
  const heap = getHeapStatistics();
  return {
    heapCommittedBytes: heap.total_physical_size,
    externalBytes: memory.external,
    arrayBuffersBytes: memory.arrayBuffers,
    v8MallocedBytes: heap.malloced_memory,
  };
}

const CODE_SPACES = new Set(["code_space", "code_large_object_space", "trusted_space", "trusted_large_object_space"]);

function compiledCodeBytes(): number {
  let bytes = 0;
  for (const space of getHeapSpaceStatistics()) if (CODE_SPACES.has(space.space_name)) bytes += space.space_used_size;
  return bytes;
}

function withObjectStats(collection: () => void): () => void {
  return () => {
    setFlagsFromString("--trace-gc-object-stats");
    try {
      collection();
    } finally {
      setFlagsFromString("--no-trace-gc-object-stats");
    }
  };
}

/** Installs the SIGUSR2 report when `env` names a file; null when it did not. */
export function installResourceReport(env: NodeJS.ProcessEnv): ResourceWatch | null {
  const path = env[RESOURCE_REPORT_ENV];
  if (!path) return null;
  const watched: Record<string, object> = {};
  const plain = v8Collection("regular");
  const regular = plain && env[RESOURCE_REPORT_OBJECT_STATS_ENV] === "1" ? withObjectStats(plain) : plain;
  const reducing = v8Collection("last-resort");
  const collect = regular && reducing && { regular, reducing };
  process.on("SIGUSR2", () => {
    // Written whole, then renamed: the reader never sees half a report.
    writeFileSync(`${path}.tmp`, JSON.stringify(resourceReport(collect, watched)));
    renameSync(`${path}.tmp`, path);
  });
  return {
    hold: (name, root) => {
      watched[name] = root;
    },
  };
}
