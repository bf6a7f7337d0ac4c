// The agents and environments maps are mutated in place (10,000 agents are not copied per event)
// and `version` marks each change. A view that read the maps alone would never see a change; this
// hook hands out one object per version, so a memo or effect that depends on it recomputes when
// the facts change, and no reader has to remember the counter.
import { useMemo } from "react";
import type { AgentView, EnvironmentView } from "../../../shared/fleet/types";
import { displayFacts } from "./selectors";
import { useFleet } from "./store";

export interface FleetFacts {
  /** As the window shows them: every agent "unknown" while the bridge is lost. */
  agents: Map<string, AgentView>;
  environments: Map<string, EnvironmentView>;
  /** The store's change counter this object was made for. */
  version: number;
}

export function useFleetFacts(): FleetFacts {
  const version = useFleet((s) => s.version);
  const rawAgents = useFleet((s) => s.agents);
  const environments = useFleet((s) => s.environments);
  const bridgeLostAt = useFleet((s) => s.bridgeLostAt);
  return useMemo(() => ({ agents: displayFacts(rawAgents, bridgeLostAt), environments, version }), [rawAgents, environments, bridgeLostAt, version]);
}
