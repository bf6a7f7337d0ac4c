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
});
