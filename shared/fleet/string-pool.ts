// Interning for values that thousands of rows repeat (runtime modes, providers, models, branches,
// project ids, the same timestamps after a server restart): a decoded row carries its own copy of
// each string, and facts that keep them would keep 10 × 5,000 copies of "full-access". Bounded:
// a pool that fills up starts over, so unique values cannot grow it forever.
export class StringPool {
  private readonly pool = new Map<string, string>();

  constructor(private readonly limit = 20_000) {}

  get size(): number {
    return this.pool.size;
  }

  intern<T extends string | null | undefined>(value: T): T {
    if (typeof value !== "string") return value;
    const known = this.pool.get(value);
    if (known !== undefined) return known as T;
    if (this.pool.size >= this.limit) this.pool.clear();
    this.pool.set(value, value);
    return value;
  }
}

/**
 * Timestamps repeat only among rows written together (a snapshot after a server restart); most are
 * unique, one per row update. A small pool keeps that sharing without holding thousands of spent
 * timestamps: a 20,000-entry pool took an hour of updates to fill, and read as a slow leak
 * (the live heap of the hour-long `npm run soak`).
 */
export const TIMESTAMP_POOL_LIMIT = 1_024;
