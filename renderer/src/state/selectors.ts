// Derived views of the store's facts, computed once per change: the visible fleet tree (by
// machine or by project, in triage order, with old idle agents folded), what `n` visits, counts.
// The rules themselves (who needs you, triage, counts) are shared with the tray: shared/fleet/views.ts.
import { type AgentView, type EnvironmentView, type RollupStatus, rollupStatus, type SubagentView, worstOf } from "../../../shared/fleet/types";
import { byTriage, fleetCounts, type FleetGlance, isOlder, needsYou, projectOf, triageRank } from "../../../shared/fleet/views";
import { type NeedsTally, tallyNeeds } from "../../../shared/fleet/needs";
import { activeSnooze } from "../../../shared/fleet/snooze";
import { DEFAULT_CONTEXT_WARNING_PERCENT } from "../../../shared/fleet/changes-usage";
import { subagentRollup } from "../../../shared/fleet/subagents";
import type { FactsSlice } from "./slices/facts";
import type { PaneView, Snooze, UiSlice } from "./slices/ui";
import type { Filters } from "./store";

export type Row =
  | {
      kind: "environment";
      id: string;
      env: EnvironmentView;
      shown: number;
      unknown: boolean;
      /** Failures the user acknowledged: counted apart from new ones. */
      seenFailures: number;
    }
  | {
      kind: "project";
      id: string;
      title: string;
      repository: string | null;
      branch: string | null;
      /** The machines the project's agents run on: one project by name across machines. */
      machines: string[];
      /** The agents of machines that are online; those of a machine away are in `away`, never counted as "unknown". */
      counts: Partial<Record<RollupStatus, number>>;
      /** Per machine not online (or every machine while the service is lost): how many of the project's agents it holds, as of its last confirmation. */
      away: { env: EnvironmentView; agents: number }[];
      /** The bridge to the fleet service is lost: what is away is the service, not the machines. */
      unknown: boolean;
      shown: number;
    }
  | {
      kind: "agent";
      id: string;
      agent: AgentView;
      depth: number;
      childCount: number;
      collapsed: boolean;
      /** The worst of its descendants and native subagents, stalled and held-up runs as themselves. */
      rollup: RollupStatus | null;
      /** The agent itself matches the search and filters (false: shown only as context for a matching descendant). */
      match: boolean;
    }
  | { kind: "subagent"; id: string; parentKey: string; subagent: SubagentView; depth: number }
  | { kind: "older"; id: string; groupId: string; count: number; open: boolean };

/** The facts and the view settings (the UI slice's own fields) the tree is built from. */
export interface TreeInput extends Pick<UiSlice, "filters" | "search" | "collapsed" | "grouping" | "olderThanMs" | "olderShown"> {
  agents: ReadonlyMap<string, AgentView>;
  environments: ReadonlyMap<string, EnvironmentView>;
  now: number;
  /** The bridge to the fleet service is lost: machines read "unknown". */
  bridgeLost: boolean;
}

export function providerOf(agent: AgentView): string {
  return agent.providerDriver ?? agent.providerInstanceId;
}

function matchesStatus(agent: AgentView, filters: Filters): boolean {
  const any = filters.needsMe || filters.failed || filters.running || filters.offline;
  if (!any) return true;
  return (
    (filters.needsMe && needsYou(agent)) ||
    (filters.failed && agent.status === "failed") ||
    (filters.running && (agent.status === "running" || agent.status === "starting")) ||
    (filters.offline && agent.status === "unknown")
  );
}

function matches(agent: AgentView, filters: Filters, search: string): boolean {
  if (filters.environmentId && agent.environmentId !== filters.environmentId) return false;
  if (filters.provider && providerOf(agent) !== filters.provider) return false;
  if (!matchesStatus(agent, filters)) return false;
  if (search) {
    const needle = search.toLowerCase();
    const project = projectOf(agent);
    const haystack = [agent.title, agent.threadId, project.title, project.repository ?? "", project.branch ?? ""];
    if (!haystack.some((text) => text.toLowerCase().includes(needle))) return false;
  }
  return true;
}

export function filtersActive(filters: Filters, search: string): boolean {
  return (
    Boolean(search) || filters.needsMe || filters.failed || filters.running || filters.offline || filters.environmentId !== null || filters.provider !== null
  );
}

/**
 * While the bridge to the fleet service is lost nothing shown is confirmed: every agent reads
 * "unknown" as of the moment it was lost, with its last known status.
 */
export function displayFacts(agents: Map<string, AgentView>, bridgeLostAt: string | null): Map<string, AgentView> {
  if (!bridgeLostAt) return agents;
  const shown = new Map<string, AgentView>();
  for (const [key, agent] of agents) shown.set(key, displayAgent(agent, bridgeLostAt));
  return shown;
}

export function displayAgent(agent: AgentView, bridgeLostAt: string | null): AgentView {
  if (!bridgeLostAt) return agent;
  return { ...agent, status: "unknown", asOf: agent.status === "unknown" ? agent.asOf : bridgeLostAt };
}

/**
 * The tree as flat rows for the virtualized list: group (machine, or project on a machine) →
 * threads → child threads (by `sub.<parent>.<suffix>`) → native subagents, each level in triage
 * order. Orphans sit at their group's top level. A parent stays visible when a descendant matches.
 */
export function buildRows(input: TreeInput): Row[] {
  const { agents, environments, filters, search, collapsed, grouping, olderThanMs, olderShown, now, bridgeLost } = input;
  const childrenOf = new Map<string, AgentView[]>();
  const roots = new Map<string, AgentView[]>();
  for (const agent of agents.values()) {
    const parentKey = agent.parentThreadId && !agent.orphaned ? `${agent.environmentId}/${agent.parentThreadId}` : null;
    const bucket = parentKey ? childrenOf : roots;
    const id = parentKey ?? agent.environmentId;
    let list = bucket.get(id);
    if (!list) bucket.set(id, (list = []));
    list.push(agent);
  }
  const filtering = filtersActive(filters, search);
  const seenFailures = new Map<string, number>();
  for (const agent of agents.values())
    if (agent.status === "failed" && agent.acknowledged) seenFailures.set(agent.environmentId, (seenFailures.get(agent.environmentId) ?? 0) + 1);

  // Bottom-up: worst status of descendants, best triage rank of the subtree, whether it has a match.
  const rollups = new Map<string, RollupStatus | null>();
  const ranks = new Map<string, number>();
  const visible = new Map<string, boolean>();
  const visit = (agent: AgentView): void => {
    const children = childrenOf.get(agent.key) ?? [];
    const statuses: RollupStatus[] = [];
    let anyVisible = matches(agent, filters, search);
    let rank: number = triageRank(agent);
    // Native subagents roll up too: a failed one is the parent's failure to look at (shared/fleet/subagents.ts).
    for (const subagent of agent.subagents) {
      const shown = subagentRollup(subagent);
      if (shown) statuses.push(shown);
    }
    for (const child of children) {
      visit(child);
      statuses.push(rollupStatus(child));
      const childRollup = rollups.get(child.key);
      if (childRollup) statuses.push(childRollup);
      anyVisible ||= visible.get(child.key) ?? false;
      rank = Math.min(rank, ranks.get(child.key)!);
    }
    rollups.set(agent.key, worstOf(statuses));
    ranks.set(agent.key, rank);
    visible.set(agent.key, anyVisible);
  };
  for (const list of roots.values()) list.forEach(visit);
  const order = byTriage((agent) => ranks.get(agent.key) ?? triageRank(agent));

  const rows: Row[] = [];
  const emit = (agent: AgentView, depth: number) => {
    if (!visible.get(agent.key)) return;
    const children = (childrenOf.get(agent.key) ?? []).sort(order);
    const isCollapsed = collapsed.has(agent.key) && !filtering;
    rows.push({
      kind: "agent",
      id: agent.key,
      agent,
      depth,
      childCount: children.length + agent.subagents.length,
      collapsed: isCollapsed,
      rollup: rollups.get(agent.key) ?? null,
      match: !filtering || matches(agent, filters, search),
    });
    if (isCollapsed) return;
    for (const subagent of agent.subagents) {
      rows.push({ kind: "subagent", id: `${agent.key}#${subagent.id}`, parentKey: agent.key, subagent, depth: depth + 1 });
    }
    for (const child of children) emit(child, depth + 1);
  };
  /** A group's agents, recent first, with old idle ones folded under "N older". */
  const emitGroup = (groupId: string, list: AgentView[]) => {
    const shownList = list.filter((agent) => visible.get(agent.key)).sort(order);
    const older = filtering ? [] : shownList.filter((agent) => (ranks.get(agent.key) ?? 2) === 2 && isOlder(agent, now, olderThanMs));
    const olderKeys = new Set(older.map((agent) => agent.key));
    for (const agent of shownList) if (!olderKeys.has(agent.key)) emit(agent, 1);
    if (older.length) {
      const open = olderShown.has(groupId);
      rows.push({ kind: "older", id: `older:${groupId}`, groupId, count: older.length, open });
      if (open) for (const agent of older) emit(agent, 1);
    }
  };

  const envs = [...environments.values()]
    .sort((a, b) => a.label.localeCompare(b.label))
    .filter((env) => !filters.environmentId || env.environmentId === filters.environmentId);
  if (grouping === "machine") {
    for (const env of envs) {
      const list = roots.get(env.environmentId) ?? [];
      const shown = list.filter((agent) => visible.get(agent.key)).length;
      if (filtering && shown === 0) continue;
      const groupId = `env:${env.environmentId}`;
      rows.push({ kind: "environment", id: groupId, env, shown, unknown: bridgeLost, seenFailures: seenFailures.get(env.environmentId) ?? 0 });
      if (!collapsed.has(groupId)) emitGroup(groupId, list);
    }
    return rows;
  }
  // By project: a project of the same name on several machines is one group (the cross-machine view).
  const byProject = new Map<string, { members: AgentView[]; machines: Set<string> }>();
  for (const env of envs) {
    for (const agent of roots.get(env.environmentId) ?? []) {
      const name = projectOf(agent).title.trim().toLowerCase();
      let bucket = byProject.get(name);
      if (!bucket) byProject.set(name, (bucket = { members: [], machines: new Set() }));
      bucket.members.push(agent);
      bucket.machines.add(env.label);
    }
  }
  const projects = [...byProject.entries()].map(([name, bucket]) => ({ name, ...bucket, info: projectOf(bucket.members[0]!) }));
  projects.sort((a, b) => a.info.title.localeCompare(b.info.title));
  for (const { name, members, machines, info } of projects) {
    const projectShown = members.filter((agent) => visible.get(agent.key)).length;
    if (filtering && projectShown === 0) continue;
    const groupId = `project:${name}`;
    const counts: Partial<Record<RollupStatus, number>> = {};
    const away = new Map<string, number>();
    for (const agent of members) {
      if (agent.status === "unknown") away.set(agent.environmentId, (away.get(agent.environmentId) ?? 0) + 1);
      else counts[rollupStatus(agent)] = (counts[rollupStatus(agent)] ?? 0) + 1;
    }
    rows.push({
      kind: "project",
      id: groupId,
      title: info.title,
      repository: info.repository,
      branch: info.branch,
      machines: [...machines].sort(),
      counts,
      away: [...away].flatMap(([environmentId, count]) => {
        const env = environments.get(environmentId);
        return env ? [{ env, agents: count }] : [];
      }),
      unknown: bridgeLost,
      shown: projectShown,
    });
    if (!collapsed.has(groupId)) emitGroup(groupId, members);
  }
  return rows;
}

export function providers(agents: ReadonlyMap<string, AgentView>): string[] {
  return [...new Set([...agents.values()].map(providerOf))].sort();
}

export interface Glance {
  /** The fleet's counts; `needsYou` is the one "needs you" count (shared/fleet/needs.ts), over the whole fleet. */
  counts: FleetGlance;
  /** Every agent that needs the user now, most urgent first (snoozed ones apart): the count and what `n` visits. */
  needYou: AgentView[];
}

/** The one "needs you" count of this window: the top bar, the Inbox badge, the tab's title and icon. Never filtered. */
export function glance(
  agents: Map<string, AgentView>,
  environments: Map<string, EnvironmentView>,
  snoozed: Map<string, Snooze> = new Map(),
  now = Date.now(),
): Glance {
  const snoozedNow = (agent: AgentView) => snoozeHolds(snoozed.get(agent.key), agent, now);
  return { counts: fleetCounts(environments.values(), agents.values(), snoozedNow), needYou: tallyNeeds(agents.values(), snoozedNow).needYou };
}

/** The agent `n` opens after `fromKey`: the next in the need-you list, wrapping around. */
export function nextNeedingYou(needYou: AgentView[], fromKey: string | null): string | null {
  if (needYou.length === 0) return null;
  const index = fromKey ? needYou.findIndex((agent) => agent.key === fromKey) : -1;
  return needYou[(index + 1) % needYou.length]!.key;
}

export type AgentRow = Extract<Row, { kind: "agent" }>;

/**
 * The rows the selection moves through: every agent, or while a search or filter is on only the
 * agents that match it (parents kept for context are skipped, so ↓ and Enter reach a match).
 */
export function selectableRows(rows: Row[]): AgentRow[] {
  return rows.filter((row): row is AgentRow => row.kind === "agent" && row.match);
}

/** Where `needle` occurs in `text` (case-insensitive), as alternating plain and matched parts. */
export function matchParts(text: string, needle: string): { text: string; match: boolean }[] {
  const wanted = needle.toLowerCase();
  if (!wanted) return [{ text, match: false }];
  const parts: { text: string; match: boolean }[] = [];
  const lower = text.toLowerCase();
  let from = 0;
  for (let at = lower.indexOf(wanted); at >= 0; at = lower.indexOf(wanted, from)) {
    if (at > from) parts.push({ text: text.slice(from, at), match: false });
    parts.push({ text: text.slice(at, at + wanted.length), match: true });
    from = at + wanted.length;
  }
  if (from < text.length) parts.push({ text: text.slice(from), match: false });
  return parts;
}

/** A snooze still holds: this window's or T3's own (shared/fleet/snooze.ts). */
export function snoozeHolds(snooze: Snooze | undefined, agent: AgentView, now: number): boolean {
  return activeSnooze(agent, snooze, now) !== null;
}

export interface Inbox {
  /** What needs the user now, within the machine, provider and search filters, most urgent first. */
  items: AgentView[];
  /** Everything that needs the user now, filters aside: the count the top bar and the badge show. */
  total: number;
  /** Needs the user but snoozed (counted apart, never in the count). */
  snoozed: number;
}

/**
 * The inbox: what needs you (shared/fleet/needs.ts), in urgency order. The machine, provider and
 * search filters narrow the list, never the count: `total - items.length` are hidden by them.
 */
export function inbox(agents: Map<string, AgentView>, filters: Filters, search: string, snoozed: Map<string, Snooze>, now: number): Inbox {
  return inboxOf(
    tallyNeeds(agents.values(), (agent) => snoozeHolds(snoozed.get(agent.key), agent, now)),
    filters,
    search,
  );
}

/** The inbox from the fleet's tally of needs (derived.ts sums it per machine). */
export function inboxOf(tally: Pick<NeedsTally, "needYou" | "snoozed">, filters: Filters, search: string): Inbox {
  const scope: Filters = { ...filters, needsMe: false, failed: false, running: false, offline: false };
  return { items: tally.needYou.filter((agent) => matches(agent, scope, search)), total: tally.needYou.length, snoozed: tally.snoozed.length };
}

/** The pane shown: the user's choice, else the inbox while anything needs them. */
export function paneView(choice: PaneView | null, needYou: number): PaneView {
  return choice ?? (needYou > 0 ? "inbox" : "fleet");
}

// The changes and usage settings are the service's (Settings); until it has said, its defaults.

/** Context fill (percent) at which an agent that will not compact is flagged. */
export const contextWarningPercent = (state: Pick<FactsSlice, "settings">): number => state.settings?.contextWarningPercent ?? DEFAULT_CONTEXT_WARNING_PERCENT;
