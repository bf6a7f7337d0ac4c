// The fleet scenarios (../fleet-scenarios.testkit.ts) against the protocol-1 simulator in its own
// process: one server and one paired fleet for the whole list, in order.
import { describe } from "vitest";
import { playScenarios } from "../fleet-scenarios.testkit";
import { Protocol1Machine } from "../server-under-test.testkit";

describe("the fleet against the protocol-1 simulator", () => {
  playScenarios(1, () => Protocol1Machine.start());
});
