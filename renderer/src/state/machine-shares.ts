// The fleet's facts by machine, for views built one machine at a time (derived.ts). The store's
// agents map is mutated in place with a version for the whole fleet (slices/facts.ts), so every
// change, even one streaming agent's activity time, used to rebuild 10,000 agents' rows and counts
// (13-40 ms of the frame that showed it: issue 44). Here each machine's share is a new object exactly
// when one of its agents or the machine itself changed, so a view kept per share rebuilds only the
// machines a change touched and hands back the others' parts by identity.
import type { AgentView, EnvironmentView } from "../../../shared/fleet/types";

export interface MachineShare {
  environmentId: string;
  /** Absent for agents whose machine the fleet no longer lists (no view shows a group for them). */
  env: EnvironmentView | undefined;
  /** The machine's agents by key; never mutated: a changed share gets a new map. */
  agents: ReadonlyMap<string, AgentView>;
}

/** Every machine with agents or listed, by environment id. */
export type MachineShares = ReadonlyMap<string, MachineShare>;

/**
 * A tracker of the shares: given the fleet's current maps (mutated in place between calls, or new
 * ones), the shares with each unchanged machine's object from the last call. Agents are compared by
 * identity (a patch makes a new view: shared/bridge/row-patch.ts applyRowPatch), so the scan is one
 * lookup per agent and only changed machines copy their map.
 */
export function machineSharesTracker(): (agents: ReadonlyMap<string, AgentView>, environments: ReadonlyMap<string, EnvironmentView>) => MachineShares {
  const seen = new Map<string, AgentView>();
  let shares = new Map<string, MachineShare>();
  return (agents, environments) => {
    // Per machine: the agents that came or changed (their view) and those that left it (null).
    const edits = new Map<string, Map<string, AgentView | null>>();
    const edit = (environmentId: string, key: string, agent: AgentView | null) => {
      let machine = edits.get(environmentId);
      if (!machine) edits.set(environmentId, (machine = new Map()));
      machine.set(key, agent);
    };
    for (const [key, agent] of agents) {
      const before = seen.get(key);
      if (before === agent) continue;
      if (before && before.environmentId !== agent.environmentId) edit(before.environmentId, key, null);
      edit(agent.environmentId, key, agent);
      seen.set(key, agent);
    }
    if (seen.size !== agents.size) {
      for (const [key, before] of seen) {
        if (agents.has(key)) continue;
        seen.delete(key);
        edit(before.environmentId, key, null);
      }
    }
    const next = new Map<string, MachineShare>();
    for (const environmentId of new Set([...environments.keys(), ...shares.keys(), ...edits.keys()])) {
      const before = shares.get(environmentId);
      const env = environments.get(environmentId);
      const changes = edits.get(environmentId);
      if (before && !changes && before.env === env) {
        if (env || before.agents.size > 0) next.set(environmentId, before);
        continue;
      }
      const machineAgents = new Map(before?.agents);
      for (const [key, agent] of changes ?? []) {
        if (agent) machineAgents.set(key, agent);
        else machineAgents.delete(key);
      }
      if (env || machineAgents.size > 0) next.set(environmentId, { environmentId, env, agents: machineAgents });
    }
    shares = next;
    return next;
  };
}

/**
 * A view kept per machine: `compute` runs for a share when the share changed, or when `keep` says
 * the part made last for it does not hold for these settings (by default: any setting changed, by
 * identity); it is given that part, to hand back when equal. While every part is kept, the same map
 * is handed back.
 */
export function perMachine<const Settings extends readonly unknown[], Part>(
  compute: (share: MachineShare, previous: Part | undefined, ...settings: Settings) => Part,
  keep?: (part: Part, ...settings: Settings) => boolean,
): (shares: MachineShares, ...settings: Settings) => ReadonlyMap<string, Part> {
  let lastSettings: Settings | null = null;
  let kept = new Map<string, { share: MachineShare; part: Part }>();
  let parts = new Map<string, Part>();
  return (shares, ...settings) => {
    const sameSettings = lastSettings !== null && settings.every((setting, index) => Object.is(setting, lastSettings![index]));
    lastSettings = settings;
    const holds = (part: Part) => (keep ? keep(part, ...settings) : sameSettings);
    const nextKept = new Map<string, { share: MachineShare; part: Part }>();
    const nextParts = new Map<string, Part>();
    let same = shares.size === parts.size;
    for (const [environmentId, share] of shares) {
      const before = kept.get(environmentId);
      const entry = before?.share === share && holds(before.part) ? before : { share, part: compute(share, before?.part, ...settings) };
      same &&= parts.get(environmentId) === entry.part;
      nextKept.set(environmentId, entry);
      nextParts.set(environmentId, entry.part);
    }
    kept = nextKept;
    if (!same) parts = nextParts;
    return parts;
  };
}
