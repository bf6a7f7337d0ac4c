// Protocol 2: a thread's changes per turn and its token use, as neutral facts (shared/fleet/facts.ts).
// Changes come from the projection's checkpoints of app runs (`checkpoint.captured` events; a
// scope's baseline has no run ordinal and a `stale` one was rolled back, so neither is a turn's);
// usage from provider turns' `tokenUsage` (live context fill) and `turnTokenUsage` (one turn's
// tokens; the thread's are their sum)
// (docs/t3-protocols.md, "Changes and usage").
import { sumCounts } from "../../fleet/counts";
import type { CheckpointStatus, TokenCounts, TurnChanges, UsageFacts } from "../../fleet/facts";
import type { CheckpointV2, ProviderTurn, ThreadProjection, TurnTokenUsage } from "./schemas";

function checkpointStatus(status: CheckpointV2["status"]): CheckpointStatus {
  return status === "ready" || status === "missing" ? status : "error";
}

export function turnChangesOfProjection(projection: Pick<ThreadProjection, "checkpoints">): TurnChanges[] {
  const byTurn = new Map<number, TurnChanges>();
  for (const checkpoint of projection.checkpoints) {
    if (checkpoint.appRunOrdinal === null || checkpoint.status === "stale") continue;
    byTurn.set(checkpoint.appRunOrdinal, {
      turnCount: checkpoint.appRunOrdinal,
      runId: checkpoint.runId,
      status: checkpointStatus(checkpoint.status),
      files: checkpoint.files.map((file) => ({ path: file.path, kind: file.kind, additions: file.additions, deletions: file.deletions })),
      ...(checkpoint.fileTotals && { totals: checkpoint.fileTotals }),
      completedAt: checkpoint.capturedAt,
    });
  }
  return [...byTurn.values()].sort((a, b) => a.turnCount - b.turnCount);
}

function turnCounts(usage: TurnTokenUsage): TokenCounts | null {
  if (usage.usageStatus === "unavailable") return null;
  const input = usage.inputTokens ?? null;
  const output = usage.outputTokens ?? null;
  // Input includes cache reads and output includes reasoning (the contract's TurnTokenUsage), so their sum is the turn's total.
  const total = usage.usageStatus === "complete" ? sumCounts([input, output]) : null;
  const counts = { total, input, cachedInput: usage.cachedInputTokens ?? null, output, reasoning: usage.reasoningTokens ?? null };
  return Object.values(counts).every((value) => value === null) ? null : counts;
}

const COUNT_FIELDS = ["total", "input", "cachedInput", "output", "reasoning"] as const;

/** The thread's tokens: the sum of its turns' reports. */
function threadCounts(turns: readonly ProviderTurn[]): TokenCounts | null {
  const reported = turns.flatMap((turn) => (turn.turnTokenUsage ? [turnCounts(turn.turnTokenUsage)] : [])).filter((counts) => counts !== null);
  if (reported.length === 0) return null;
  const sum = Object.fromEntries(
    // A count some reporting turn lacks, or a sum past the exact range, is not reported.
    COUNT_FIELDS.map((field) => [field, sumCounts(reported.map((counts) => counts[field]))]),
  ) as unknown as TokenCounts;
  return sum;
}

function latest<T>(turns: readonly ProviderTurn[], read: (turn: ProviderTurn) => T | undefined): { turn: ProviderTurn; value: T } | undefined {
  let found: { turn: ProviderTurn; value: T; at: string } | undefined;
  for (const turn of turns) {
    const value = read(turn);
    if (value === undefined) continue;
    const at = turn.completedAt ?? turn.startedAt ?? "";
    if (!found || at >= found.at) found = { turn, value, at };
  }
  return found;
}

/** Usage from the newest provider turns that report it, or null when none does (not reported). */
export function usageOfProjection(projection: Pick<ThreadProjection, "providerTurns">): UsageFacts | null {
  const context = latest(projection.providerTurns, (turn) => turn.tokenUsage);
  const last = latest(projection.providerTurns, (turn) => turn.turnTokenUsage);
  if (!context && !last) return null;
  const live = context?.value;
  return {
    contextUsed: live?.usedTokens ?? null,
    contextMax: live?.maxTokens ?? null,
    // Protocol 2 does not say whether the provider compacts by itself.
    compactsAutomatically: null,
    lastTurn: last ? turnCounts(last.value) : null,
    thread: threadCounts(projection.providerTurns),
    reportedAt: live?.updatedAt ?? last?.turn.completedAt ?? last?.turn.startedAt ?? "",
  };
}
