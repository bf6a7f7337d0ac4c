// The fleet scenarios (fleet-scenarios.testkit.ts) against the protocol-1 simulator in its own
// process, one server and one paired fleet for the whole list, in order.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { NOT_PLAYED, type ScenarioContext, recoverServer, scenariosFor } from "../fleet-scenarios.testkit";
import { startFleet } from "../scenario-fleet.testkit";
import { Protocol1Machine } from "../server-under-test.testkit";

const stops: (() => unknown)[] = [];
let context: ScenarioContext;

beforeAll(async () => {
  const server = await Protocol1Machine.start();
  stops.push(() => server.stop());
  context = { server, fleet: await startFleet(server, undefined, stops), left: new Set() };
}, 60_000);

afterAll(async () => {
  while (stops.length) await stops.pop()!();
});

afterEach(() => recoverServer(context.server));

describe("the fleet against the protocol-1 simulator", () => {
  for (const scenario of scenariosFor(1)) it(scenario.name, () => scenario.play(context), 30_000);

  it("names each scenario it does not play in the table, with why", () => {
    expect(NOT_PLAYED.filter((entry) => entry.protocol === 1).map((entry) => entry.scenario)).toEqual([
      "nests a fork under the thread it was forked from (lineage, not the id)",
      "shows a subagent delegated from a running turn on its parent; its child thread is not in the server's shell and has no row",
    ]);
  });
});
