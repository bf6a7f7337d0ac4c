// What a process holds, by where (for the soak benchmark's resource report, resource-report.ts): a
// walk from named roots over own properties, Map and Set entries and array elements, breadth first
// and each object once, so each is counted under its shortest path. Counts are summed by the path's
// pattern: every entry of one Map, Set, array or many-keyed record shares one `[*]`, so the paths
// name stores (`service.model.envs[*].agents`), not items, and a store that grows reads as one path.
// What only closures hold is out of its reach.

export interface Holding {
  path: string;
  /** Objects reached under this path. */
  objects: number;
  /** Entries of the Maps, Sets, arrays and many-keyed records under this path. */
  entries: number;
  /** Characters of the strings held directly by objects under this path (bytes of binary buffers). */
  chars: number;
}

export interface HoldingsOptions {
  /** Stop after this many objects (the report says so with a `…` path). */
  maxObjects: number;
  /** Paths smaller than this (objects + entries), holding fewer chars than `minChars`, are left out. */
  minCount: number;
  minChars: number;
}

const DEFAULTS: HoldingsOptions = { maxObjects: 2_000_000, minCount: 20, minChars: 10_000 };

/** A plain object with more keys than this is a record keyed by data (ids): its values share one path. */
const RECORD_KEYS = 64;

export function holdings(roots: Record<string, unknown>, options: Partial<HoldingsOptions> = {}): Holding[] {
  const { maxObjects, minCount, minChars } = { ...DEFAULTS, ...options };
  const seen = new Set<object>();
  const byPath = new Map<string, Holding>();
  const at = (path: string) => {
    let holding = byPath.get(path);
    if (!holding) byPath.set(path, (holding = { path, objects: 0, entries: 0, chars: 0 }));
    return holding;
  };
  // Two arrays rather than an array of pairs: the walk's own garbage stays small.
  let queue: unknown[] = [];
  let paths: string[] = [];
  for (const [name, root] of Object.entries(roots)) {
    queue.push(root);
    paths.push(name);
  }
  while (queue.length > 0) {
    const nextQueue: unknown[] = [];
    const nextPaths: string[] = [];
    const visit = (value: unknown, path: string, holder: Holding) => {
      if (typeof value === "string") holder.chars += value.length;
      else if (value !== null && typeof value === "object" && !seen.has(value)) {
        nextQueue.push(value);
        nextPaths.push(path);
      }
    };
    for (let index = 0; index < queue.length; index++) {
      const value = queue[index] as object;
      const path = paths[index]!;
      if (seen.has(value)) continue;
      if (seen.size >= maxObjects) {
        at("…").objects++;
        continue;
      }
      seen.add(value);
      const holding = at(path);
      holding.objects++;
      if (ArrayBuffer.isView(value)) holding.chars += value.byteLength;
      else if (value instanceof ArrayBuffer) holding.chars += value.byteLength;
      else if (value instanceof Map) {
        holding.entries += value.size;
        for (const [key, entry] of value) {
          visit(key, `${path}[*]`, holding);
          visit(entry, `${path}[*]`, holding);
        }
      } else if (value instanceof Set || Array.isArray(value)) {
        holding.entries += value instanceof Set ? value.size : value.length;
        for (const entry of value) visit(entry, `${path}[*]`, holding);
      } else if (!(value instanceof WeakMap || value instanceof WeakSet || value instanceof Promise)) {
        const keys = Object.keys(value);
        const record = keys.length > RECORD_KEYS;
        if (record) holding.entries += keys.length;
        for (const key of keys) {
          // Own data properties only: a getter is code, and running it could change what it reads.
          const descriptor = Object.getOwnPropertyDescriptor(value, key);
          if (!descriptor || !("value" in descriptor)) continue;
          if (record) holding.chars += key.length;
          visit(descriptor.value, record ? `${path}[*]` : `${path}.${key}`, holding);
        }
      }
    }
    queue = nextQueue;
    paths = nextPaths;
  }
  return [...byPath.values()].filter((holding) => holding.objects + holding.entries >= minCount || holding.chars >= minChars);
}
