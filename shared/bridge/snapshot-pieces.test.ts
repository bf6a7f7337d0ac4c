import { describe, expect, it } from "vitest";
import type { AgentView } from "../fleet/types";
import type { BridgeEvent, FleetSnapshot } from "./contract";
import { snapshotEvents } from "./snapshot-pieces";

function agents(environmentId: string, count: number, titleBytes = 1_000): AgentView[] {
  return Array.from(
    { length: count },
    (_, i) => ({ key: `${environmentId}/t${i}`, environmentId, threadId: `t${i}`, title: "x".repeat(titleBytes) }) as unknown as AgentView,
  );
}

function fleet(agentList: AgentView[]): FleetSnapshot {
  return {
    environments: [{ environmentId: "flood" }, { environmentId: "a" }],
    agents: agentList,
    deliveries: [],
    settings: {},
    notices: ["n"],
  } as unknown as FleetSnapshot;
}

describe("a snapshot as bridge events (Electron IPC)", () => {
  it("is a fleet.snapshot with the small machines' agents, then bounded deltas that add every other agent once", () => {
    const pieceBytes = 32 * 1024;
    const events: BridgeEvent[] = [...snapshotEvents(fleet([...agents("flood", 2_000), ...agents("a", 3)]), pieceBytes)];
    const [first, ...rest] = events;
    expect(first?.type).toBe("fleet.snapshot");
    const head = (first as Extract<BridgeEvent, { type: "fleet.snapshot" }>).snapshot;
    expect(head.environments).toHaveLength(2);
    expect(head.notices).toEqual(["n"]);
    expect(head.agents.filter((agent) => agent.environmentId === "a")).toHaveLength(3);
    const deltas = rest as Extract<BridgeEvent, { type: "fleet.delta" }>[];
    expect(deltas.every((event) => event.type === "fleet.delta" && event.removed.length === 0 && event.environments.length === 0)).toBe(true);
    for (const event of events) expect(JSON.stringify(event).length).toBeLessThan(pieceBytes + 2_000);
    const keys = [...head.agents, ...deltas.flatMap((event) => event.agents)].map((agent) => agent.key);
    expect(keys).toHaveLength(2_003);
    expect(new Set(keys).size).toBe(2_003);
  });

  it("keeps an agent larger than a piece whole, in a piece of its own", () => {
    const events = [...snapshotEvents(fleet([...agents("a", 1, 10), ...agents("flood", 2, 50_000)]), 16 * 1024)];
    expect(
      events.map((event) => (event.type === "fleet.snapshot" ? event.snapshot.agents.length : event.type === "fleet.delta" ? event.agents.length : -1)),
    ).toEqual([1, 1, 1]);
  });

  it("an empty fleet is the snapshot alone", () => {
    const snapshot = fleet([]);
    expect([...snapshotEvents(snapshot, 1024)]).toEqual([{ type: "fleet.snapshot", snapshot }]);
  });
});
