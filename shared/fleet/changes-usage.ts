// Views of an agent's changes and token use (issue 24), from the neutral facts only: the latest
// turn's "3 files +40 −2", the context fill in words, the near-limit flag, and usage totals per
// machine, per project (as "By project" groups them, across machines) and for the fleet. A figure T3
// did not report is "not reported", never zero.
import { sumCounts } from "./counts";
import type { ChangedFile, TokenCounts, TurnChanges, TurnFileTotals, UsageFacts } from "./facts";
import type { AgentView } from "./types";
import { projectOf } from "./views";

/** Context fill at or above this share, on a provider that will not compact, flags an agent (settable). */
export const DEFAULT_CONTEXT_WARNING_PERCENT = 90;

export interface ChangesSummary {
  turnCount: number;
  status: TurnChanges["status"];
  files: number;
  /** Lines added and removed over the turn's files; null when a file's count was not reported. */
  additions: number | null;
  deletions: number | null;
}

/** Lines added and removed over files; a side any file did not report is not reported (never a partial sum). */
export function lineTotals(files: readonly ChangedFile[]): { additions: number | null; deletions: number | null } {
  return { additions: sumCounts(files.map((file) => file.additions)), deletions: sumCounts(files.map((file) => file.deletions)) };
}

/** The files a range of turns changed, each path once with its counts summed (what a diff's view lists). */
export function filesOf(turns: readonly TurnChanges[]): ChangedFile[] {
  const byPath = new Map<string, ChangedFile>();
  for (const turn of turns) {
    for (const file of turn.files) {
      const seen = byPath.get(file.path);
      // A count either turn did not report leaves the sum not reported.
      byPath.set(file.path, seen ? { ...file, ...lineTotals([seen, file]) } : file);
    }
  }
  return [...byPath.values()];
}

/** A turn's counts over all its files, the ones the fleet lists and the ones it only counted (TurnChanges.totals). */
export function turnTotals(turn: Pick<TurnChanges, "files" | "totals">): TurnFileTotals {
  return turn.totals ?? { files: turn.files.length, ...lineTotals(turn.files) };
}

/** Files T3 counted in these turns that their lists do not hold (each turn keeps TURN_FILES_KEPT, shared/t3/turn-files.ts). */
export function unlistedFilesOf(turns: readonly Pick<TurnChanges, "files" | "totals">[]): number {
  return turns.reduce((sum, turn) => sum + turnTotals(turn).files - turn.files.length, 0);
}

/** "and 99,900 more files" for files T3 counted and the fleet does not list, or null when every file is listed. */
export function moreFilesWords(unlisted: number): string | null {
  if (unlisted <= 0) return null;
  return `and ${unlisted.toLocaleString("en-US")} more ${unlisted === 1 ? "file" : "files"}`;
}

/** The latest turn's changes, or null when T3 reported none. */
export function latestChanges(agent: Pick<AgentView, "changes">): ChangesSummary | null {
  const turn = agent.changes?.at(-1);
  if (!turn) return null;
  return { turnCount: turn.turnCount, status: turn.status, ...turnTotals(turn) };
}

/** "3 files +40 −2", "1 file +3 −0", "no files changed", what became of the checkpoint, or which counts T3 did not report. */
export function changesWords(summary: Pick<ChangesSummary, "status" | "files" | "additions" | "deletions">): string {
  if (summary.status === "missing") return "no checkpoint";
  if (summary.status === "error") return "checkpoint failed";
  if (summary.files === 0) return "no files changed";
  const files = `${summary.files} ${summary.files === 1 ? "file" : "files"}`;
  if (summary.additions === null || summary.deletions === null)
    return `${files}; lines added ${summary.additions ?? "not reported"}, removed ${summary.deletions ?? "not reported"}`;
  return `${files} +${summary.additions} −${summary.deletions}`;
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

/** A window smaller than this is no model's context window: its fill is not shown (issue 43: a window of 1). */
export const MIN_CONTEXT_WINDOW = 1_000;

/**
 * The context fill as far as it is a fact: `fill` (0-100 %), `over` the window (T3 says more than
 * 100 %: shown as T3's claim, never as the fill), or not reported (a figure missing, or a window
 * under MIN_CONTEXT_WINDOW tokens, `window` then says what T3 sent).
 */
export type ContextReading = { kind: "fill"; percent: number } | { kind: "over"; percent: number } | { kind: "not-reported"; window: number | null };

export function contextReading(usage: UsageFacts | undefined | null): ContextReading {
  if (!usage || usage.contextUsed === null || usage.contextMax === null) return { kind: "not-reported", window: null };
  if (usage.contextMax < MIN_CONTEXT_WINDOW) return { kind: "not-reported", window: usage.contextMax };
  const percent = Math.round((usage.contextUsed / usage.contextMax) * 100);
  return usage.contextUsed > usage.contextMax ? { kind: "over", percent } : { kind: "fill", percent };
}

/** The context fill in percent (0-100), or null when it is not a fact (not reported, a window under 1,000 tokens, or over the window). */
export function contextPercent(usage: UsageFacts | undefined | null): number | null {
  const reading = contextReading(usage);
  return reading.kind === "fill" ? reading.percent : null;
}

/** "62 % of 258k; compacts automatically", "… ; will not compact", "over the window (T3 says 140 %)", or "context not reported". */
export function contextWords(usage: UsageFacts | undefined): string {
  const reading = contextReading(usage);
  if (reading.kind === "not-reported")
    return reading.window === null ? "context not reported" : `context not reported (T3 says a window of ${reading.window.toLocaleString("en-US")} tokens)`;
  if (reading.kind === "over") return `over the window (T3 says ${reading.percent.toLocaleString("en-US")} %)`;
  const compaction =
    usage!.compactsAutomatically === true ? "compacts automatically" : usage!.compactsAutomatically === false ? "will not compact" : "compaction not reported";
  return `${reading.percent} % of ${compactCount(usage!.contextMax!)}; ${compaction}`;
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
  // Only a fill that is a fact is summed, and only while the sum stays exact; an agent left out is not counted as reporting.
  const context = contextPercent(agent.usage) === null ? null : sumCounts([total.context, agent.usage!.contextUsed]);
  if (context !== null) {
    total.context = context;
    total.contextReported++;
  }
  const reported = sumCounts([total.tokens, agent.usage?.thread?.total ?? null]);
  if (reported === null) return;
  total.tokens = reported;
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

/** "finished: 3 files changed". */
export function finishedWords(agent: AgentView): string {
  const files = latestChanges(agent)?.files ?? 0;
  return `finished: ${files} ${files === 1 ? "file" : "files"} changed`;
}
