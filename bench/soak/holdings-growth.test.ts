import { describe, expect, it } from "vitest";
import type { Holding } from "../../electron/serve/holdings";
import { heldLine, holdingsGrowth, holdingsGrowthText } from "./holdings-growth";

const held = (path: string, objects: number, entries = 0, chars = 0): Holding => ({ path, objects, entries, chars });

describe("what the service holds that grew", () => {
  it("names the stores that rose, most first, and leaves out those that held or fell", () => {
    const start = [
      held("service.model.agents", 1, 200),
      held("service.model.agents[*]", 200, 0, 40_000),
      held("service.pool", 1, 500),
      held("service.tails", 1, 90),
    ];
    const end = [
      held("service.model.agents", 1, 200),
      held("service.model.agents[*]", 200, 0, 40_000),
      held("service.pool", 1, 2_500),
      held("service.tails", 1, 50),
      held("service.left", 30, 0, 9_000),
    ];
    const { byCount, byChars } = holdingsGrowth(start, end);
    expect(byCount).toEqual([
      { path: "service.pool", count: [501, 2_501], chars: [0, 0] },
      { path: "service.left", count: [0, 30], chars: [0, 9_000] },
    ]);
    expect(byChars.map((change) => change.path)).toEqual(["service.left"]);
    expect(holdingsGrowthText(start, end)).toBe(
      "what the service holds that grew after warm-up: objects and entries service.pool 501 → 2501, service.left 0 → 30; characters service.left 0 → 9000",
    );
  });

  it("says when the service reported nothing", () => {
    expect(holdingsGrowthText([], [])).toBe("what the service holds: not reported");
  });

  it("logs only the large paths, the largest first", () => {
    expect(heldLine([held("a", 10), held("b", 900, 300), held("c", 1, 0, 200_000), held("d", 5_000)], 42)).toBe(
      "held (walked in 42 ms): d 5000/0/0; b 900/300/0; c 1/0/200000",
    );
    expect(heldLine([], 0)).toBe("held (walked in 0 ms): nothing watched");
  });
});
