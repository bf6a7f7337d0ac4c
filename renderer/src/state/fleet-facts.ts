// The facts as the window shows them, one object per change of the store's facts (derived.ts selectFacts).
import { type FleetFacts, selectFacts } from "./derived";
import { useFleet } from "./store";

export type { FleetFacts };

export function useFleetFacts(): FleetFacts {
  return useFleet(selectFacts);
}
