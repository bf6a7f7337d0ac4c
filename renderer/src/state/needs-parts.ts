// The glance and the inbox's tally from per-machine parts (derived.ts): a machine's part is counted
// again only when that machine changed, and the fleet's is their sum, the same as counting the
// whole fleet at once (selectors.ts glance, shared/fleet/needs.ts tallyNeeds).
import { byUrgency, type NeedsTally, tallyNeeds } from "../../../shared/fleet/needs";
import type { FleetGlance } from "../../../shared/fleet/views";
import type { AgentView, DisplayStatus, EnvironmentView } from "../../../shared/fleet/types";
import type { Snooze } from "./slices/ui";
import { snoozeHolds } from "./selectors";

/** What the glance counts of some agents (a machine's, or the whole fleet's). */
export interface NeedsPart {
  byStatus: Partial<Record<DisplayStatus, number>>;
  tally: NeedsTally;
  agents: number;
  /** Machines listed among them, and of those the ones not online. */
  environments: number;
  hostsDown: number;
  /** Some snooze among them was judged by the clock (a later clock may judge it differently). */
  readsClock: boolean;
}

/**
 * The part of `agents` on machine `env` (undefined: agents whose machine is not listed). `previous`,
 * the part made before for the same machine, is handed back when nothing counted differs, so an
 * activity time moving on a running agent changes no count and no list (issue 44).
 */
export function needsPart(
  env: EnvironmentView | undefined,
  agents: Iterable<AgentView>,
  snoozed: ReadonlyMap<string, Snooze>,
  now: number,
  previous?: NeedsPart,
): NeedsPart {
  const byStatus: Partial<Record<DisplayStatus, number>> = {};
  let count = 0;
  const list: AgentView[] = [];
  for (const agent of agents) {
    byStatus[agent.status] = (byStatus[agent.status] ?? 0) + 1;
    count++;
    list.push(agent);
  }
  let readsClock = false;
  const tally = tallyNeeds(list, (agent) => {
    const own = snoozed.get(agent.key);
    readsClock ||= own !== undefined || agent.fleetSnooze !== undefined || Boolean(agent.snoozedUntil);
    return snoozeHolds(own, agent, now);
  });
  const part: NeedsPart = {
    byStatus,
    tally,
    agents: count,
    environments: env ? 1 : 0,
    hostsDown: env && env.connection.phase !== "online" ? 1 : 0,
    readsClock,
  };
  return previous && samePart(previous, part) ? previous : part;
}

/** The parts together: counts summed, lists merged in the one urgency order. */
export function mergeNeeds(parts: Iterable<NeedsPart>): NeedsPart {
  const merged: NeedsPart = {
    byStatus: {},
    tally: { needYou: [], snoozed: [], acknowledged: 0, asOf: 0, failed: 0 },
    agents: 0,
    environments: 0,
    hostsDown: 0,
    readsClock: false,
  };
  for (const part of parts) {
    for (const [status, count] of Object.entries(part.byStatus) as [DisplayStatus, number][]) merged.byStatus[status] = (merged.byStatus[status] ?? 0) + count;
    merged.tally.needYou.push(...part.tally.needYou);
    merged.tally.snoozed.push(...part.tally.snoozed);
    merged.tally.acknowledged += part.tally.acknowledged;
    merged.tally.asOf += part.tally.asOf;
    merged.tally.failed += part.tally.failed;
    merged.agents += part.agents;
    merged.environments += part.environments;
    merged.hostsDown += part.hostsDown;
    merged.readsClock ||= part.readsClock;
  }
  merged.tally.needYou.sort(byUrgency);
  merged.tally.snoozed.sort(byUrgency);
  return merged;
}

/** The fleet's counts as shared/fleet/views.ts fleetCounts gives them, from the fleet's part. */
export function countsOf(part: NeedsPart): FleetGlance {
  return {
    byStatus: part.byStatus,
    needsYou: part.tally.needYou.length,
    failedNeedingYou: part.tally.failed,
    snoozed: part.tally.snoozed.length,
    acknowledged: part.tally.acknowledged,
    hostsDown: part.hostsDown,
    environments: part.environments,
    agents: part.agents,
  };
}

function samePart(a: NeedsPart, b: NeedsPart): boolean {
  return (
    a.agents === b.agents &&
    a.environments === b.environments &&
    a.hostsDown === b.hostsDown &&
    a.readsClock === b.readsClock &&
    a.tally.acknowledged === b.tally.acknowledged &&
    a.tally.asOf === b.tally.asOf &&
    a.tally.failed === b.tally.failed &&
    sameList(a.tally.needYou, b.tally.needYou) &&
    sameList(a.tally.snoozed, b.tally.snoozed) &&
    sameCounts(a.byStatus, b.byStatus)
  );
}

function sameList(a: readonly AgentView[], b: readonly AgentView[]): boolean {
  return a.length === b.length && a.every((agent, index) => agent === b[index]);
}

function sameCounts(a: Partial<Record<DisplayStatus, number>>, b: Partial<Record<DisplayStatus, number>>): boolean {
  const keys = Object.keys(a) as DisplayStatus[];
  return keys.length === Object.keys(b).length && keys.every((status) => a[status] === b[status]);
}
