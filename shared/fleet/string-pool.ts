// Interning for values that thousands of rows repeat (runtime modes, providers, models, branches,
// project ids, the same timestamps after a server restart): a decoded row carries its own copy of
// each string, and facts that keep them would keep 10 × 5,000 copies of "full-access". Bounded:
// a full pool lets go of its oldest value for each new one, so unique values cannot grow it forever,
// and it stays full rather than emptying at once (a pool that started over read as a sawtooth in
// the soak's heap, bench/soak.ts).
export class StringPool {
  private readonly pool = new Map<string, string>();
  /** Values in the order they came in, grown as the pool fills: once full, the slot at `next` holds the oldest. */
  private readonly order: string[] = [];
  private next = 0;

  constructor(private readonly limit = 20_000) {}

  get size(): number {
    return this.pool.size;
  }

  intern<T extends string | null | undefined>(value: T): T {
    if (typeof value !== "string") return value;
    const known = this.pool.get(value);
    if (known !== undefined) return known as T;
    if (this.order.length < this.limit) this.order.push(value);
    else {
      this.pool.delete(this.order[this.next]!);
      this.order[this.next] = value;
      this.next = (this.next + 1) % this.limit;
    }
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
