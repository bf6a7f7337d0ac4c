// The fleet scenarios (../fleet-scenarios.testkit.ts) against the protocol-2 simulator in its own
// process: one server and one paired fleet for the whole list, in order.
import { describe } from "vitest";
import { playScenarios } from "../fleet-scenarios.testkit";
import { Protocol2Machine } from "../server-under-test.testkit";

describe("the fleet against the protocol-2 simulator", () => {
  playScenarios(2, () => Protocol2Machine.start());
});
