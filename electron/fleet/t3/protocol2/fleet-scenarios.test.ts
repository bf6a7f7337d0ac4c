// The fleet scenarios (fleet-scenarios.testkit.ts) against the protocol-2 simulator in its own
// process, one server and one paired fleet for the whole list, in order.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { NOT_PLAYED, type ScenarioContext, recoverServer, scenariosFor } from "../fleet-scenarios.testkit";
import { startFleet } from "../scenario-fleet.testkit";
import { Protocol2Machine } from "../server-under-test.testkit";

const stops: (() => unknown)[] = [];
let context: ScenarioContext;

beforeAll(async () => {
  const server = await Protocol2Machine.start();
  stops.push(() => server.stop());
  context = { server, fleet: await startFleet(server, undefined, stops), left: new Set() };
}, 60_000);

afterAll(async () => {
  while (stops.length) await stops.pop()!();
});

afterEach(() => recoverServer(context.server));

describe("the fleet against the protocol-2 simulator", () => {
  for (const scenario of scenariosFor(2)) it(scenario.name, () => scenario.play(context), 30_000);

  it("names each scenario it does not play in the table, with why", () => {
    expect(NOT_PLAYED.filter((entry) => entry.protocol === 2).map((entry) => entry.scenario)).toEqual([
      "shows a child sub.<parent>.<suffix> nested under its parent",
    ]);
  });
});
