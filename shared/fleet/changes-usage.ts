// Views of an agent's changes and token use (issue 24), from the neutral facts only: the latest
// turn's "3 files +40 −2", the context fill in words, the near-limit flag, and usage totals per
// machine, per project (as "By project" groups them, across machines) and for the fleet. A figure T3
// did not report is "not reported", never zero.
import type { TokenCounts, TurnChanges, UsageFacts } from "./facts";
import type { AgentView } from "./types";
import { projectOf } from "./views";

/** Context fill at or above this share, on a provider that will not compact, flags an agent (settable). */
export const DEFAULT_CONTEXT_WARNING_PERCENT = 90;

export interface ChangesSummary {
  turnCount: number;
  status: TurnChanges["status"];
  files: number;
  additions: number;
  deletions: number;
}

/** The latest turn's changes, or null when T3 reported none. */
export function latestChanges(agent: Pick<AgentView, "changes">): ChangesSummary | null {
  const turn = agent.changes?.at(-1);
  if (!turn) return null;
  let additions = 0;
  let deletions = 0;
  for (const file of turn.files) {
    additions += file.additions;
    deletions += file.deletions;
  }
  return { turnCount: turn.turnCount, status: turn.status, files: turn.files.length, additions, deletions };
}

/** "3 files +40 −2", "1 file +3 −0", "no files changed", or what became of the checkpoint. */
export function changesWords(summary: Pick<ChangesSummary, "status" | "files" | "additions" | "deletions">): string {
  if (summary.status === "missing") return "no checkpoint";
  if (summary.status === "error") return "checkpoint failed";
  if (summary.files === 0) return "no files changed";
  return `${summary.files} ${summary.files === 1 ? "file" : "files"} +${summary.additions} −${summary.deletions}`;
}

/** 258400 → "258k", 1250 → "1.3k", 12 → "12", 2_400_000 → "2.4M". */
export function compactCount(value: number): string {
  if (value >= 1_000_000) return `${trimmed(value / 1_000_000)}M`;
  if (value >= 1_000) return `${trimmed(value / 1_000)}k`;
  return String(value);
}

function trimmed(value: number): string {
  return value >= 100 ? String(Math.round(value)) : value.toFixed(1).replace(/\.0$/, "");
}

/** The context fill in percent (0-100, may exceed 100 if the server says so), or null when either figure is not reported. */
export function contextPercent(usage: UsageFacts | undefined): number | null {
  if (!usage || usage.contextUsed === null || usage.contextMax === null || usage.contextMax === 0) return null;
  return Math.round((usage.contextUsed / usage.contextMax) * 100);
}

/** "62 % of 258k; compacts automatically", "… ; will not compact", or "context not reported". */
export function contextWords(usage: UsageFacts | undefined): string {
  const percent = contextPercent(usage);
  if (percent === null || !usage) return "context not reported";
  const compaction =
    usage.compactsAutomatically === true ? "compacts automatically" : usage.compactsAutomatically === false ? "will not compact" : "compaction not reported";
  return `${percent} % of ${compactCount(usage.contextMax!)}; ${compaction}`;
}

/** Near its context limit and will not compact: the agent is flagged. */
export function nearContextLimit(agent: Pick<AgentView, "usage">, warningPercent = DEFAULT_CONTEXT_WARNING_PERCENT): boolean {
  const percent = contextPercent(agent.usage);
  return percent !== null && percent >= warningPercent && agent.usage?.compactsAutomatically === false;
}

/** "12.3k tokens (input 10k, cached 2k, output 1.2k, reasoning 64)", or "not reported". */
export function tokenWords(counts: TokenCounts | null | undefined): string {
  if (!counts) return "not reported";
  const parts = (
    [
      ["input", counts.input],
      ["cached", counts.cachedInput],
      ["output", counts.output],
      ["reasoning", counts.reasoning],
    ] as const
  ).flatMap(([label, value]) => (value === null ? [] : [`${label} ${compactCount(value)}`]));
  const total = counts.total === null ? "total not reported" : `${compactCount(counts.total)} tokens`;
  return parts.length ? `${total} (${parts.join(", ")})` : total;
}

export interface UsageTotal {
  /** Machine id, project key, or "fleet". */
  id: string;
  label: string;
  /** Sum of the thread figures T3 reported (tokens processed); a context size is never added here. */
  tokens: number;
  /** Agents whose thread figure T3 reported, of all the agents counted. */
  reported: number;
  agents: number;
  /** Sum of the context fills reported now (what the windows hold), apart from use, and how many agents reported one. */
  context: number;
  contextReported: number;
  /** The span of the token reports summed (server times, ISO), null when none. */
  from: string | null;
  to: string | null;
}

function emptyTotal(id: string, label: string): UsageTotal {
  return { id, label, tokens: 0, reported: 0, agents: 0, context: 0, contextReported: 0, from: null, to: null };
}

function add(total: UsageTotal, agent: AgentView): void {
  total.agents++;
  const context = agent.usage?.contextUsed;
  if (context !== undefined && context !== null) {
    total.context += context;
    total.contextReported++;
  }
  const reported = agent.usage?.thread?.total;
  if (reported === undefined || reported === null) return;
  total.tokens += reported;
  total.reported++;
  const at = agent.usage!.reportedAt;
  if (at && (total.from === null || at < total.from)) total.from = at;
  if (at && (total.to === null || at > total.to)) total.to = at;
}

/** Usage totals over the agents the fleet has seen: per machine, per project and for the whole fleet. */
export function usageTotals(
  agents: Iterable<AgentView>,
  machineLabel: (environmentId: string) => string,
): { fleet: UsageTotal; machines: UsageTotal[]; projects: UsageTotal[] } {
  const fleet = emptyTotal("fleet", "Fleet");
  const machines = new Map<string, UsageTotal>();
  const projects = new Map<string, UsageTotal>();
  for (const agent of agents) {
    add(fleet, agent);
    let machine = machines.get(agent.environmentId);
    if (!machine) machines.set(agent.environmentId, (machine = emptyTotal(agent.environmentId, machineLabel(agent.environmentId))));
    add(machine, agent);
    // As "By project" groups them: one project per title across machines (renderer/src/state/selectors.ts).
    const title = projectOf(agent).title;
    const projectKey = title.trim().toLowerCase();
    let projectTotal = projects.get(projectKey);
    if (!projectTotal) projects.set(projectKey, (projectTotal = emptyTotal(projectKey, title)));
    add(projectTotal, agent);
  }
  const byTokens = (a: UsageTotal, b: UsageTotal) => b.tokens - a.tokens || a.label.localeCompare(b.label);
  return { fleet, machines: [...machines.values()].sort(byTokens), projects: [...projects.values()].sort(byTokens) };
}

const agentWords = (count: number) => `${count} ${count === 1 ? "agent" : "agents"}`;

/** "1.2M tokens T3 reported over 3 of 15 agents": what it adds up and for how many agents it knows a figure. */
export function totalWords(total: UsageTotal): string {
  if (total.reported === 0) return `T3 reported no tokens for ${total.agents === 1 ? "the agent" : `any of ${agentWords(total.agents)}`}`;
  return `${compactCount(total.tokens)} tokens T3 reported over ${total.reported} of ${agentWords(total.agents)}`;
}

/** "context now 245k over 2 of 15 agents": the windows' fill, summed apart from use. */
export function contextTotalWords(total: UsageTotal): string {
  if (total.contextReported === 0) return "no context fill reported";
  return `context now ${compactCount(total.context)} over ${total.contextReported} of ${agentWords(total.agents)}`;
}

/** Statuses in which an agent's turn has ended (nothing runs, starts or waits for it). */
const TURN_ENDED = new Set<AgentView["status"]>(["idle", "interrupted", "ended"]);

/**
 * An agent whose latest turn ended with changed files the user has not looked at (opened its diff
 * or acknowledged) since: `seenTurnCount` is the latest turn they looked at.
 */
export function finishedWithChanges(agent: AgentView, seenTurnCount: number | undefined): boolean {
  const latest = latestChanges(agent);
  return latest !== null && latest.status === "ready" && latest.files > 0 && TURN_ENDED.has(agent.status) && latest.turnCount > (seenTurnCount ?? 0);
}

/** "finished: 3 files changed". */
export function finishedWords(agent: AgentView): string {
  const files = latestChanges(agent)?.files ?? 0;
  return `finished: ${files} ${files === 1 ? "file" : "files"} changed`;
}

/** The inbox items, then (when the setting is on) agents finished with changes not looked at yet, newest first. */
export function withFinishedChanges<T extends { items: AgentView[] }>(
  inbox: T,
  agents: Iterable<AgentView>,
  seen: ReadonlyMap<string, number>,
  on: boolean,
  accept: (agent: AgentView) => boolean = () => true,
): T {
  if (!on) return inbox;
  const listed = new Set(inbox.items.map((agent) => agent.key));
  const finished = [...agents]
    .filter((agent) => !listed.has(agent.key) && accept(agent) && finishedWithChanges(agent, seen.get(agent.key)))
    .sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
  return finished.length ? { ...inbox, items: [...inbox.items, ...finished] } : inbox;
}
