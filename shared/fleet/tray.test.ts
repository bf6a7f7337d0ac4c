import { describe, expect, it } from "vitest";
import { TRAY_AGENT_LIMIT, trayModel, trayVariant } from "./tray";
import type { FleetCounts } from "./types";
import { agentView, environmentView } from "./views.testkit";

const counts = (patch: Partial<FleetCounts>): FleetCounts => ({ byStatus: {}, needsYou: 0, hostsDown: 0, environments: 1, agents: 0, ...patch });

describe("tray", () => {
  it.each([
    [counts({ environments: 0 }), "nothing-paired"],
    [counts({ byStatus: { failed: 1, running: 3 }, needsYou: 1, hostsDown: 1 }), "failed"],
    [counts({ byStatus: { "needs-input": 1 }, needsYou: 1, hostsDown: 1 }), "needs-you"],
    [counts({ byStatus: { unknown: 4 }, hostsDown: 1 }), "host-offline"],
    [counts({ byStatus: { running: 2, idle: 1 } }), "working"],
    [counts({ byStatus: { idle: 3 } }), "all-clear"],
  ] as const)("%o → %s", (value, variant) => {
    expect(trayVariant(value)).toBe(variant);
  });

  it("lists machines with counts, the agents that need you (each opens its thread), and the actions", () => {
    const env = environmentView({ counts: { running: 2, "needs-approval": 1 } });
    const agents = [agentView("a", "needs-approval", { title: "Migrate" }), agentView("b", "running")];
    const model = trayModel([env], agents, counts({ byStatus: { running: 1, "needs-approval": 1 }, needsYou: 1, agents: 2 }), false);
    expect(model.tooltip).toContain("1 needs you");
    expect(model.items).toContainEqual({ kind: "label", label: "studio: online · 2 running, 1 needs approval" });
    expect(model.items).toContainEqual({ kind: "agent", agentKey: "e/a", label: "Migrate (studio) — needs approval" });
    expect(model.items.filter((item) => item.kind === "action").map((item) => item.kind === "action" && item.action)).toEqual(["open", "pair", "pause", "quit"]);
  });

  it("caps the agents listed and says how many more", () => {
    const agents = Array.from({ length: TRAY_AGENT_LIMIT + 3 }, (_, i) => agentView(`t${String(i).padStart(2, "0")}`, "failed"));
    const model = trayModel([environmentView()], agents, counts({ byStatus: { failed: agents.length }, needsYou: agents.length }), true);
    expect(model.items.filter((item) => item.kind === "agent")).toHaveLength(TRAY_AGENT_LIMIT);
    expect(model.items).toContainEqual({ kind: "label", label: "…and 3 more" });
    expect(model.items).toContainEqual({ kind: "action", label: "Resume notifications", action: "resume" });
  });
});
