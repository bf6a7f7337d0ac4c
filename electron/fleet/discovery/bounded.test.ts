import { describe, expect, it } from "vitest";
import { mapBounded } from "./bounded";

describe("mapBounded", () => {
  it("keeps at most `limit` tasks in flight and returns results in input order", async () => {
    let inFlight = 0;
    let most = 0;
    const gates: (() => void)[] = [];
    const running = mapBounded([1, 2, 3, 4, 5, 6, 7], 3, async (item) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((open) => gates.push(open));
      inFlight--;
      return item * 10;
    });
    // Release the tasks one at a time, as they queue up.
    for (let released = 0; released < 7; released++) {
      while (gates.length === 0) await Promise.resolve();
      gates.shift()!();
    }
    expect(await running).toEqual([10, 20, 30, 40, 50, 60, 70]);
    expect(most).toBe(3);
  });
});
