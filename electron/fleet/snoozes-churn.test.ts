// What Snoozes (./snoozes.ts) keeps per agent goes when the agent leaves the fleet: 1,000 agents
// snoozed in T3 and then gone leave nothing behind (issue 43 point 1, the service's heap under churn).
import { describe, expect, it } from "vitest";
import type { Environments } from "./environments";
import { oneMachine } from "./one-machine.testkit";
import type { Registry } from "./registry";
import { Snoozes } from "./snoozes";

/**
 * Snoozes on one machine online whose T3 takes every snooze (`execute`, when given, answers it
 * instead), with a registry that saves nothing, told of the model's changes as the service tells it
 * (./service.ts).
 */
function snoozesAt(clock: () => number, execute: () => Promise<void> = async () => {}) {
  const { model, row } = oneMachine(clock());
  const environments = { get: () => ({ supervisor: { activeConnection: { execute } } }) } as unknown as Environments;
  const registry = { snoozes: new Map(), setSnooze: async () => {} } as unknown as Registry;
  const snoozes = new Snoozes(model, environments, registry, clock);
  model.subscribe((change) => {
    change.agents.forEach((agent) => snoozes.agentChanged(agent));
    change.removed.forEach((key) => snoozes.removed(key));
  });
  return { model, snoozes, snoozable: (threadId: string) => ({ ...row, threadId, capabilities: { ...row.capabilities, snooze: true } }) };
}

describe("Snoozes under churn", () => {
  it("1,000 agents snoozed in T3 that then left keep no wake time", async () => {
    const clock = new Date(2026, 10, 29, 10, 7).getTime();
    const { model, snoozes, snoozable } = snoozesAt(() => clock);
    const staying = snoozable("staying");
    model.applyFleetSnapshot("env-a", [staying]);
    const inAnHour = new Date(clock + 3_600_000).toISOString();
    expect(await snoozes.snooze("env-a/staying", inAnHour)).toMatchObject({ onServer: "snoozed" });
    const before = snoozes.wakeTimesKept;
    for (let index = 0; index < 1_000; index++) {
      const threadId = `churned-${index}`;
      model.applyFleetSnapshot("env-a", [staying, { ...staying, threadId }]);
      expect(await snoozes.snooze(`env-a/${threadId}`, inAnHour)).toMatchObject({ onServer: "snoozed" });
      model.applyFleetSnapshot("env-a", [staying]);
    }
    expect(snoozes.wakeTimesKept).toBe(before);
    // The agent that stayed is still T3's to wake.
    expect(await snoozes.unsnooze("env-a/staying")).toMatchObject({ onServer: "unsnoozed" });
  });

  it("a wake time that passed is not kept for as long as the agent lives", async () => {
    let clock = new Date(2026, 10, 29, 10, 7).getTime();
    const { model, snoozes, snoozable } = snoozesAt(() => clock);
    const staying = snoozable("staying");
    model.applyFleetSnapshot("env-a", [staying]);
    expect(await snoozes.snooze("env-a/staying", new Date(clock + 60_000).toISOString())).toMatchObject({ onServer: "snoozed" });
    expect(snoozes.wakeTimesKept).toBe(1);
    // A minute on, the row changes (its snooze ended in T3, or anything else).
    clock += 61_000;
    model.applyFleetSnapshot("env-a", [{ ...staying, title: "Renamed" }]);
    expect(snoozes.wakeTimesKept).toBe(0);
  });

  it("an agent that leaves while T3 is asked to snooze it keeps no wake time", async () => {
    const clock = new Date(2026, 10, 29, 10, 7).getTime();
    // T3 answers the snooze only once the agent has left the fleet.
    let answer: (() => void) | undefined;
    const asked = new Promise<void>((resolve) => (answer = resolve));
    let reached: (() => void) | undefined;
    const reachedT3 = new Promise<void>((resolve) => (reached = resolve));
    const execute = async () => {
      reached!();
      await asked;
    };
    const { model, snoozes, snoozable } = snoozesAt(() => clock, execute);
    const leaving = snoozable("leaving");
    model.applyFleetSnapshot("env-a", [leaving]);

    const snoozing = snoozes.snooze("env-a/leaving", new Date(clock + 3_600_000).toISOString());
    await reachedT3;
    model.applyFleetSnapshot("env-a", []);
    answer!();
    await snoozing;
    expect(model.agent("env-a/leaving")).toBeUndefined();
    expect(snoozes.wakeTimesKept).toBe(0);
  });
});
