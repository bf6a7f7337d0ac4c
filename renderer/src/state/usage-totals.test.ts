// The token totals against the real store: summed again when an agent's usage, machine or project
// changes, or agents come and go, and not for a patch of activity times alone (issue 44).
import { beforeEach, describe, expect, it } from "vitest";
import type { UsageFacts } from "../../../shared/fleet/facts";
import type { AgentView } from "../../../shared/fleet/types";
import { agentView, environmentView } from "../../../shared/fleet/views.testkit";
import type { FleetDelta } from "./slices/facts";
import { useFleet } from "./store";
import { selectUsageTotals } from "./usage-totals";

const store = useFleet.getState;
const totals = () => selectUsageTotals(store());
const usage = (tokens: number): UsageFacts => ({
  contextUsed: null,
  contextMax: null,
  compactsAutomatically: null,
  lastTurn: null,
  thread: { total: tokens, input: null, cachedInput: null, output: null, reasoning: null },
  reportedAt: "2026-12-05T06:00:00.000Z",
});
const delta = (change: Partial<FleetDelta>): FleetDelta => ({ agents: [], removed: [], environments: [], removedEnvironments: [], ...change });
const patch = (key: string, set: Partial<AgentView>) => store().applyDeltas([delta({ patches: [{ key, set }] })]);

beforeEach(() => {
  useFleet.setState({ agents: new Map(), environments: new Map() });
  store().applyDeltas([
    delta({
      environments: [environmentView()],
      agents: [agentView("a", "running", { usage: usage(1_000) }), agentView("b", "idle", { usage: usage(500) }), agentView("c", "idle")],
    }),
  ]);
});

describe("the fleet's token totals", () => {
  it("sum what T3 reported over the fleet's agents", () => {
    expect(totals().fleet).toMatchObject({ tokens: 1_500, reported: 2, agents: 3 });
    expect(totals().machines).toMatchObject([{ label: "studio", tokens: 1_500 }]);
  });

  it("are not summed again for a patch of activity times alone", () => {
    const before = totals();
    patch("e/a", { lastActivityAt: "2026-12-05T06:00:05.000Z", updatedAt: "2026-12-05T06:00:05.000Z" });
    expect(store().agents.get("e/a")?.lastActivityAt, "the patch is applied").toBe("2026-12-05T06:00:05.000Z");
    expect(totals()).toBe(before);
  });

  it("are not summed again when a machine's connection or counts change", () => {
    const before = totals();
    store().applyDeltas([
      delta({
        environments: [
          environmentView({ connection: { phase: "connecting", since: "2026-12-05T06:00:05.000Z", lastConfirmedAt: null }, counts: { running: 1 } }),
        ],
      }),
    ]);
    expect(store().environments.get("e")?.connection.phase, "the change is applied").toBe("connecting");
    expect(totals()).toBe(before);
  });

  it("follow a usage patch, an agent's project, a new or gone agent, and a renamed machine", () => {
    patch("e/a", { usage: usage(3_000) });
    expect(totals().fleet.tokens).toBe(3_500);
    patch("e/c", { projectTitle: "Other project" });
    expect(totals().projects.map((project) => project.label)).toContain("Other project");
    store().applyDeltas([delta({ agents: [agentView("d", "idle", { usage: usage(100) })] })]);
    expect(totals().fleet).toMatchObject({ tokens: 3_600, agents: 4 });
    store().applyDeltas([delta({ removed: ["e/a"] })]);
    expect(totals().fleet).toMatchObject({ tokens: 600, agents: 3 });
    store().applyDeltas([delta({ environments: [environmentView({ label: "renamed" })] })]);
    expect(totals().machines[0]?.label).toBe("renamed");
  });
});
