import { describe, expect, it } from "vitest";
import type { BridgeEvent } from "../../shared/bridge/contract";
import type { AgentStatus, ConnectionPhase, EnvironmentView } from "../../shared/fleet/types";
import { ONLINE, agentView, environmentView } from "../../shared/fleet/views.testkit";
import { NeedsTruth, type Seen, explain, expected } from "./verdict";

const OFFLINE: ConnectionPhase = { phase: "offline", since: "t", lastConfirmedAt: "t", nextAttemptAt: "t", attempt: 1, error: "refused" };
const env = (connection: ConnectionPhase): EnvironmentView => environmentView({ connection });
const agent = (id: string, status: AgentStatus, patch: Parameters<typeof agentView>[2] = {}) => agentView(id, status, patch);
const delta = (patch: Partial<Extract<BridgeEvent, { type: "fleet.delta" }>>): BridgeEvent => ({
  type: "fleet.delta",
  agents: [],
  removed: [],
  environments: [],
  removedEnvironments: [],
  ...patch,
});

describe("the truth: the service's needs by the one rule, an outage no news", () => {
  it("counts by the rule and says which need changed", () => {
    const truth = new NeedsTruth({ environments: [env(ONLINE)], agents: [agent("a", "running"), agent("b", "needs-approval")] });
    expect(truth.state()).toEqual({ count: 1, variant: "needs-you" });
    const changes = truth.apply(delta({ agents: [agent("a", "failed", { reason: "boom" })] }));
    expect(changes).toEqual([{ key: "e/a", title: "Agent a", machine: "studio", before: "nothing (running)", after: "needs you (failed, boom)" }]);
    expect(truth.state()).toEqual({ count: 2, variant: "failed" });
  });

  it("keeps what an agent was judged while its machine is away, whatever the service shows then", () => {
    const truth = new NeedsTruth({ environments: [env(ONLINE)], agents: [agent("a", "running", { stalled: true }), agent("b", "idle")] });
    expect(truth.state().count).toBe(1);
    // Away, and a view that (wrongly) lost the stall: the truth does not follow it.
    expect(truth.apply(delta({ environments: [env(OFFLINE)], agents: [agent("a", "running", { status: "unknown", lastKnownStatus: "running" })] }))).toEqual(
      [],
    );
    expect(truth.state().count).toBe(1);
    // Back, and the service's view is the truth again.
    const back = truth.apply(delta({ environments: [env(ONLINE)], agents: [agent("a", "running")] }));
    expect(back.map((change) => change.after)).toEqual(["nothing (running)"]);
    expect(truth.state().count).toBe(0);
  });

  it("names what each surface shows for a truth in the page's words", () => {
    expect(expected("top bar", { count: 2, variant: "failed" })).toBe("2");
    expect(expected("tab title", { count: 1, variant: "needs-you" })).toBe("1 needs you — T3 Fleet");
    expect(expected("favicon", { count: 0, variant: "all-clear" })).toBe("all-clear 0");
  });
});

describe("the verdict: each change of a surface shows a change of the truth", () => {
  const seen = (seq: number, value: string, at = seq * 100): Seen => ({ seq, at, value });

  it("explains changes that follow the truth, in order, and counts truth changes never shown", () => {
    const truth = [seen(0, "3"), seen(2, "4"), seen(4, "5"), seen(5, "4")];
    const readings = [seen(1, "3"), seen(3, "4"), seen(6, "4")];
    const { changes, notShown } = explain(truth, readings, 10_000);
    expect(changes.map((change) => [change.from, change.reading.value, change.by?.seq])).toEqual([["3", "4", 2]]);
    expect(notShown).toBe(2);
  });

  it("flags a count that dips with a flap while the truth holds", () => {
    const truth = [seen(0, "3"), seen(10, "4")];
    const readings = [seen(1, "3"), seen(3, "2"), seen(5, "3"), seen(11, "4")];
    const { changes } = explain(truth, readings, 10_000);
    expect(changes.map((change) => [change.from, change.reading.value, change.by?.seq ?? null])).toEqual([
      ["3", "2", null],
      ["2", "3", null],
      ["3", "4", 10],
    ]);
  });

  it("never explains a change by a truth change seen after it, or one too long before", () => {
    expect(explain([seen(0, "1"), seen(3, "2")], [seen(1, "1"), seen(2, "2")], 10_000).changes[0]!.by).toBeNull();
    expect(explain([seen(0, "1"), seen(2, "2", 100)], [seen(1, "1", 0), seen(3, "2", 20_000)], 10_000).changes[0]!.by).toBeNull();
    // A page opened after the truth last changed shows it as soon as it has loaded.
    expect(explain([seen(0, "1", 0), seen(1, "2", 100)], [seen(2, "0", 30_000), seen(3, "2", 30_500)], 10_000).changes[0]!.by?.seq).toBe(1);
  });
});
