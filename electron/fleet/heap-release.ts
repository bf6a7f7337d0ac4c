// Giving memory back after a burst of fleet snapshots (a cold start, machines reconnecting
// together). A snapshot's frame text, parsed JSON and decoded rows live only until the model has
// taken the facts, but V8 keeps the pages they used, pooled, and its young generation fully grown,
// until it runs a memory-reducing collection, which it does only under memory pressure or when its
// idle heuristics happen to fire. At 10 × 5,000 agents that is ~60 MB of resident memory the fleet
// does not use (`BENCH_MEMORY_DETAIL=1 npm run bench -- fleet-memory` shows where it goes). So once
// the snapshots have stopped for a moment, the service asks V8 for that collection, once per burst.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * The collection runs once the fleet has been quiet this long after a burst (no snapshot, no agent
 * change), so its pause does not land in the middle of a stream of events...
 */
export const HEAP_RELEASE_QUIET_MS = 1_000;
/** ...but no later than this after the burst's first snapshot, on a fleet that is never quiet. */
export const HEAP_RELEASE_MAX_WAIT_MS = 30_000;

export type MemoryReducingCollection = () => void;

type GcFunction = (options: { type: "major"; execution: "sync"; flavor?: "last-resort" }) => void;

/**
 * V8's own memory-reducing full collection ("last resort": it also gives back pooled pages and
 * shrinks the young generation), or with `flavor: "regular"` a plain full collection. Node only
 * exposes `gc` behind a flag; the flag is set for the one context that fetches it and cleared
 * again, so no other code sees a `gc` global. Null where the runtime refuses (the burst is then
 * simply left to V8's own heuristics).
 */
export function v8Collection(flavor: "last-resort" | "regular" = "last-resort"): MemoryReducingCollection | null {
  try {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as GcFunction;
    return () => gc({ type: "major", execution: "sync", ...(flavor === "last-resort" && { flavor }) });
  } catch {
    return null;
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
}

export interface HeapReleaseOptions {
  quietMs?: number;
  maxWaitMs?: number;
  now?: () => number;
  /** Replaces V8's collection (tests). */
  collection?: MemoryReducingCollection;
}

export class HeapRelease {
  private timer: NodeJS.Timeout | undefined;
  /** When the pending collection must run at the latest; undefined when none is pending. */
  private dueAt: number | undefined;
  private collection: MemoryReducingCollection | null | undefined;
  private readonly quietMs: number;
  private readonly maxWaitMs: number;
  private readonly now: () => number;

  constructor(options: HeapReleaseOptions = {}) {
    this.quietMs = options.quietMs ?? HEAP_RELEASE_QUIET_MS;
    this.maxWaitMs = options.maxWaitMs ?? HEAP_RELEASE_MAX_WAIT_MS;
    this.now = options.now ?? Date.now;
    this.collection = options.collection;
  }

  /** A fleet snapshot was applied: collect once the burst it belongs to is over. */
  snapshotApplied(): void {
    this.dueAt ??= this.now() + this.maxWaitMs;
    this.arm();
  }

  /** Agents changed: a pending collection waits for a quiet moment (up to its deadline). */
  activity(): void {
    if (this.dueAt !== undefined) this.arm();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.dueAt = undefined;
  }

  private arm(): void {
    clearTimeout(this.timer);
    const wait = Math.max(0, Math.min(this.quietMs, this.dueAt! - this.now()));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.dueAt = undefined;
      if (this.collection === undefined) this.collection = v8Collection();
      this.collection?.();
    }, wait);
    this.timer.unref?.();
  }
}
