import { describe, expect, it } from "vitest";
import { planSoak } from "./schedule";

const MINUTE = 60_000;
const machines = [
  { label: "upstream", protocol: 1 as const },
  { label: "upstream-2", protocol: 1 as const },
  { label: "fork", protocol: 1 as const },
  { label: "v2", protocol: 2 as const },
];

function upgradesOf(seed: number, durationMs: number) {
  const plan = planSoak({ seed, durationMs, machines });
  return { plan, upgrades: plan.actions.filter(({ action }) => action.kind === "upgrade") };
}

describe("the soak's schedule", () => {
  it("upgrades every protocol-1 machine before the warm-up in runs of an hour or more, so the heap's bound compares the same fleet at both ends", () => {
    for (let seed = 1; seed <= 50; seed++) {
      for (const minutes of [60, 120]) {
        const { plan, upgrades } = upgradesOf(seed, minutes * MINUTE);
        expect(upgrades.map(({ action }) => ("machine" in action ? action.machine : "")).sort()).toEqual(["fork", "upstream", "upstream-2"]);
        const lastServiceFault = Math.max(...plan.actions.filter(({ action }) => action.kind.startsWith("service-")).map(({ atMs }) => atMs));
        for (const { atMs } of upgrades) {
          expect(atMs).toBeLessThanOrEqual(plan.steadyFromMs - 10 * MINUTE);
          expect(atMs).toBeGreaterThanOrEqual(0.05 * minutes * MINUTE);
        }
        expect(lastServiceFault).toBeLessThan(plan.steadyFromMs);
      }
    }
  });

  it("in a two-hour run, restarts the service and upgrades machines in the first quarter hour, and measures growth over the second hour", () => {
    for (let seed = 1; seed <= 50; seed++) {
      const { plan, upgrades } = upgradesOf(seed, 120 * MINUTE);
      const lastChange = Math.max(
        ...upgrades.map(({ atMs }) => atMs),
        ...plan.actions.filter(({ action }) => action.kind.startsWith("service-")).map(({ atMs, action }) => atMs + ("forMs" in action ? action.forMs : 0)),
      );
      expect(lastChange).toBeLessThanOrEqual(15 * MINUTE);
      // What the fleet holds within bounds took about 50 minutes to fill at the soak's pace (bench/soak/schedule.ts).
      expect(plan.steadyFromMs - lastChange).toBeGreaterThanOrEqual(45 * MINUTE);
      expect(plan.steadyFromMs).toBe(60 * MINUTE);
    }
  });

  it("upgrades one machine somewhere in the middle of a short run", () => {
    for (let seed = 1; seed <= 50; seed++) {
      const { upgrades } = upgradesOf(seed, 3 * MINUTE);
      expect(upgrades).toHaveLength(1);
      expect(upgrades[0]!.atMs).toBeGreaterThanOrEqual(0.2 * 3 * MINUTE);
      expect(upgrades[0]!.atMs).toBeLessThanOrEqual(0.6 * 3 * MINUTE);
    }
  });
});
