// Derived views, computed from the store's facts: the visible fleet tree, counts, navigation order.
import { type AgentView, type DisplayStatus, type EnvironmentView, type SubagentView, needsYouNow, worstOf } from "../../../shared/fleet/types";
import type { Filters } from "./store";

export type Row =
  | { kind: "environment"; id: string; env: EnvironmentView; shown: number }
  | { kind: "agent"; id: string; agent: AgentView; depth: number; childCount: number; collapsed: boolean; rollup: DisplayStatus | null }
  | { kind: "subagent"; id: string; parentKey: string; subagent: SubagentView; depth: number };

export function providerOf(agent: AgentView): string {
  return agent.providerDriver ?? agent.providerInstanceId;
}

function matchesStatus(agent: AgentView, filters: Filters): boolean {
  const any = filters.needsMe || filters.failed || filters.running || filters.offline;
  if (!any) return true;
  return (
    (filters.needsMe && needsYouNow(agent)) ||
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
    if (!agent.title.toLowerCase().includes(needle) && !agent.threadId.toLowerCase().includes(needle)) return false;
  }
  return true;
}

export function filtersActive(filters: Filters, search: string): boolean {
  return Boolean(search) || filters.needsMe || filters.failed || filters.running || filters.offline || filters.environmentId !== null || filters.provider !== null;
}

/**
 * The tree as flat rows for the virtualized list: environment → threads → child threads (by
 * `sub.<parent>.<suffix>`) → native subagents. Orphans sit at their environment's top level.
 * A parent stays visible when a descendant matches, so matches keep their context.
 */
export function buildRows(agents: Map<string, AgentView>, environments: Map<string, EnvironmentView>, filters: Filters, search: string, collapsed: Set<string>): Row[] {
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
  const byTitle = (a: AgentView, b: AgentView) => a.title.localeCompare(b.title) || a.threadId.localeCompare(b.threadId);
  const filtering = filtersActive(filters, search);

  // Bottom-up: worst status of descendants, and whether a subtree has a match.
  const rollups = new Map<string, DisplayStatus | null>();
  const visible = new Map<string, boolean>();
  const visit = (agent: AgentView): void => {
    const children = childrenOf.get(agent.key) ?? [];
    const statuses: DisplayStatus[] = [];
    let anyVisible = matches(agent, filters, search);
    for (const child of children) {
      visit(child);
      statuses.push(child.status);
      const childRollup = rollups.get(child.key);
      if (childRollup) statuses.push(childRollup);
      anyVisible ||= visible.get(child.key) ?? false;
    }
    rollups.set(agent.key, worstOf(statuses));
    visible.set(agent.key, anyVisible);
  };
  for (const list of roots.values()) list.forEach(visit);

  const rows: Row[] = [];
  const emit = (agent: AgentView, depth: number) => {
    if (!visible.get(agent.key)) return;
    const children = (childrenOf.get(agent.key) ?? []).sort(byTitle);
    const isCollapsed = collapsed.has(agent.key) && !filtering;
    rows.push({ kind: "agent", id: agent.key, agent, depth, childCount: children.length + agent.subagents.length, collapsed: isCollapsed, rollup: rollups.get(agent.key) ?? null });
    if (isCollapsed) return;
    for (const subagent of agent.subagents) {
      rows.push({ kind: "subagent", id: `${agent.key}#${subagent.id}`, parentKey: agent.key, subagent, depth: depth + 1 });
    }
    for (const child of children) emit(child, depth + 1);
  };
  const envs = [...environments.values()].sort((a, b) => a.label.localeCompare(b.label));
  for (const env of envs) {
    if (filters.environmentId && env.environmentId !== filters.environmentId) continue;
    const list = (roots.get(env.environmentId) ?? []).sort(byTitle);
    const shown = list.filter((agent) => visible.get(agent.key)).length;
    if (filtering && shown === 0) continue;
    rows.push({ kind: "environment", id: `env:${env.environmentId}`, env, shown });
    if (collapsed.has(`env:${env.environmentId}`)) continue;
    for (const agent of list) emit(agent, 1);
  }
  return rows;
}

export function providers(agents: Map<string, AgentView>): string[] {
  return [...new Set([...agents.values()].map(providerOf))].sort();
}

/** The next agent that needs the user after `fromKey`, in tree order, wrapping around. */
export function nextNeedingYou(rows: Row[], fromKey: string | null): string | null {
  const candidates = rows.flatMap((row) => (row.kind === "agent" && needsYouNow(row.agent) ? [row.id] : []));
  if (candidates.length === 0) return null;
  const index = fromKey ? rows.findIndex((row) => row.id === fromKey) : -1;
  const after = rows.slice(index + 1).find((row) => row.kind === "agent" && needsYouNow(row.agent));
  return after?.id ?? candidates[0]!;
}
