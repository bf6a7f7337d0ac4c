// One machine's group of the tree by machine (its header, then its agents), kept per machine
// (machine-shares.ts): built from that machine's agents alone, as buildRows builds every group, so a
// change rebuilds only the machines it touched, and the minute clock only those where an idle agent
// folds under "N older" (issue 44: a full rebuild of 10,000 agents took 13-40 ms of a frame).
import { triageRank } from "../../../shared/fleet/views";
import type { AgentView } from "../../../shared/fleet/types";
import { type MachineShare, perMachine } from "./machine-shares";
import { buildRows, type Row, type TreeInput } from "./selectors";

/** The view settings a machine's rows are built with (the tree's, grouping by machine). */
export type MachineRowSettings = Omit<TreeInput, "agents" | "environments" | "grouping" | "now">;

interface MachineRows {
  rows: Row[];
  settings: MachineRowSettings;
  builtAt: number;
  /** The rows hold until the clock passes this: the first moment one of its idle agents folds. */
  foldsAt: number;
}

/** A tracker of each machine's rows: `now` is the fold clock; settings are compared field by field, by identity. */
export function machineRowsTracker(): (shares: ReadonlyMap<string, MachineShare>, settings: MachineRowSettings, now: number) => ReadonlyMap<string, Row[]> {
  const parts = perMachine(
    (share, _previous: MachineRows | undefined, settings: MachineRowSettings, now: number): MachineRows => ({
      rows: share.env
        ? buildRows({ ...settings, agents: share.agents, environments: new Map([[share.environmentId, share.env]]), grouping: "machine", now })
        : [],
      settings,
      builtAt: now,
      foldsAt: nextFold(share.agents.values(), now, settings.olderThanMs),
    }),
    (part, settings, now) => sameSettings(part.settings, settings) && now >= part.builtAt && now <= part.foldsAt,
  );
  let rowsOf = new Map<string, Row[]>();
  let lastParts: ReadonlyMap<string, MachineRows> | null = null;
  return (shares, settings, now) => {
    const next = parts(shares, settings, now);
    if (next !== lastParts) rowsOf = new Map([...next].map(([environmentId, part]) => [environmentId, part.rows]));
    lastParts = next;
    return rowsOf;
  };
}

/** When the first of `agents` not yet folded would fold (shared/fleet/views.ts isOlder, with one parse per agent); Infinity when none can. */
function nextFold(agents: Iterable<AgentView>, now: number, olderThanMs: number): number {
  let soonest = Infinity;
  for (const agent of agents) {
    if (triageRank(agent) !== 2) continue;
    // Not folded yet (isOlder: folded once `now - at > olderThanMs`): it folds just after at + olderThanMs.
    const at = Date.parse(agent.lastActivityAt);
    if (Number.isFinite(at) && now - at <= olderThanMs) soonest = Math.min(soonest, at + olderThanMs);
  }
  return soonest;
}

function sameSettings(a: MachineRowSettings, b: MachineRowSettings): boolean {
  return (
    a.filters === b.filters &&
    a.search === b.search &&
    a.collapsed === b.collapsed &&
    a.olderThanMs === b.olderThanMs &&
    a.olderShown === b.olderShown &&
    a.bridgeLost === b.bridgeLost
  );
}
