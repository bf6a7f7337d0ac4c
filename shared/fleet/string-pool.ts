// Interning for values that thousands of rows repeat (runtime modes, providers, models, branches,
// project ids, the same timestamps after a server restart): a decoded row carries its own copy of
// each string, and facts that keep them would keep 10 × 5,000 copies of "full-access". Bounded:
// a pool that fills up starts over, so unique values (e.g. most timestamps) cannot grow it forever.
export class StringPool {
  private readonly pool = new Map<string, string>();

  constructor(private readonly limit = 20_000) {}

  intern<T extends string | null | undefined>(value: T): T {
    if (typeof value !== "string") return value;
    const known = this.pool.get(value);
    if (known !== undefined) return known as T;
    if (this.pool.size >= this.limit) this.pool.clear();
    this.pool.set(value, value);
    return value;
  }
}
