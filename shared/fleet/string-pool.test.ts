import { describe, expect, it } from "vitest";
import { StringPool, TIMESTAMP_POOL_LIMIT } from "./string-pool";

describe("StringPool", () => {
  it("holds one entry for a value thousands of rows repeat", () => {
    const pool = new StringPool(TIMESTAMP_POOL_LIMIT);
    for (let row = 0; row < 5_000; row++) expect(pool.intern(["2026-12-02T21:00:00", "000Z"].join("."))).toBe("2026-12-02T21:00:00.000Z");
    expect(pool.intern(null)).toBeNull();
    expect(pool.size).toBe(1);
  });

  it("an hour of unique row timestamps never holds more than its limit", () => {
    const pool = new StringPool(TIMESTAMP_POOL_LIMIT);
    const start = Date.parse("2026-12-02T21:00:00.000Z");
    let largest = 0;
    // One update every 50 ms for an hour: 72,000 timestamps, as many as the soak's rows write.
    for (let ms = 0; ms < 3_600_000; ms += 50) {
      pool.intern(new Date(start + ms).toISOString());
      largest = Math.max(largest, pool.size);
    }
    expect(largest).toBe(TIMESTAMP_POOL_LIMIT);
  });

  it("a full pool lets go of its oldest value for each new one, and keeps sharing the newest", () => {
    const pool = new StringPool(4);
    for (const value of ["a", "b", "c", "d", "e"]) pool.intern(value);
    expect(pool.size).toBe(4);
    // "e" pushed "a" out: "b" to "e" are still shared, "a" comes back as the copy it is given.
    const b = ["b"].join("");
    expect(pool.intern(b)).toBe("b");
    const a = ["a"].join("");
    expect(pool.intern(a)).toBe(a);
    expect(pool.size).toBe(4);
  });

  it("stays full once filled, rather than emptying and filling again", () => {
    const pool = new StringPool(TIMESTAMP_POOL_LIMIT);
    const start = Date.parse("2026-12-02T21:00:00.000Z");
    let smallestOnceFull = Infinity;
    for (let ms = 0; ms < 10 * TIMESTAMP_POOL_LIMIT; ms++) {
      pool.intern(new Date(start + ms).toISOString());
      if (ms >= TIMESTAMP_POOL_LIMIT) smallestOnceFull = Math.min(smallestOnceFull, pool.size);
    }
    expect(smallestOnceFull).toBe(TIMESTAMP_POOL_LIMIT);
  });
});
