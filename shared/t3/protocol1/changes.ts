// Protocol 1: a thread's changes per turn and its token use, as neutral facts (shared/fleet/facts.ts).
// Changes come from the thread's `checkpoints[]` and `thread.turn-diff-completed` events; usage from
// the newest `context-window.updated` activity (docs/t3-protocols.md, "Changes and usage").
import { z } from "zod";
import { sumCounts } from "../../fleet/counts";
import type { CheckpointStatus, TokenCounts, TurnChanges, UsageFacts } from "../../fleet/facts";
import type { Checkpoint, ThreadActivity } from "./schemas";

/** A checkpoint upserted by turn, as T3's projector does: a `missing` placeholder never replaces a real checkpoint. */
export function upsertCheckpoint(checkpoints: Checkpoint[], checkpoint: Checkpoint): Checkpoint[] {
  const index = checkpoints.findIndex((existing) => existing.turnId === checkpoint.turnId);
  if (index === -1) return [...checkpoints, checkpoint].sort((a, b) => a.checkpointTurnCount - b.checkpointTurnCount);
  if (checkpoint.status === "missing" && checkpoints[index]!.status !== "missing") return checkpoints;
  const next = checkpoints.slice();
  next[index] = checkpoint;
  return next;
}

/** `thread.reverted {turnCount}`: the checkpoints of later turns are gone. */
export function revertCheckpoints(checkpoints: Checkpoint[], turnCount: number): Checkpoint[] {
  return checkpoints.filter((checkpoint) => checkpoint.checkpointTurnCount <= turnCount);
}

function checkpointStatus(status: Checkpoint["status"]): CheckpointStatus {
  // A status this fleet does not know cannot promise a readable diff.
  return status === "unknown" ? "error" : status;
}

export function turnChangesOf(checkpoints: readonly Checkpoint[]): TurnChanges[] {
  return checkpoints.map((checkpoint) => ({
    turnCount: checkpoint.checkpointTurnCount,
    runId: checkpoint.turnId,
    status: checkpointStatus(checkpoint.status),
    files: checkpoint.files.map((file) => ({ path: file.path, kind: file.kind, additions: file.additions, deletions: file.deletions })),
    ...(checkpoint.fileTotals && { totals: checkpoint.fileTotals }),
    completedAt: checkpoint.completedAt,
  }));
}

const Count = z.number().int().nonnegative().nullable().optional().catch(null);

/** The payload of a `context-window.updated` activity; every field optional, a bad field reads as not reported. */
const ContextWindowPayload = z.object({
  usedTokens: Count,
  maxTokens: Count,
  inputTokens: Count,
  cachedInputTokens: Count,
  outputTokens: Count,
  reasoningOutputTokens: Count,
  lastUsedTokens: Count,
  lastInputTokens: Count,
  lastCachedInputTokens: Count,
  lastOutputTokens: Count,
  lastReasoningOutputTokens: Count,
  /** Claude's threads under 0.0.42: the thread's processed tokens, where `usedTokens` is the context alone. */
  totalProcessedTokens: Count,
  compactsAutomatically: z.boolean().nullable().optional().catch(null),
});

function counts(
  total: number | null | undefined,
  input: number | null | undefined,
  cached: number | null | undefined,
  output: number | null | undefined,
  reasoning: number | null | undefined,
): TokenCounts | null {
  const result = { total: total ?? null, input: input ?? null, cachedInput: cached ?? null, output: output ?? null, reasoning: reasoning ?? null };
  return Object.values(result).every((value) => value === null) ? null : result;
}

/**
 * The newer of two reports by a total order (time, then sequence, then id), so the newest is the same
 * whatever order the activities are held in (an incremental projection and a rebuilt one may differ:
 * T3's activity order mixes sequences and times, thread-projection.ts `byActivityOrder`).
 */
function newerReport(a: ThreadActivity, b: ThreadActivity): ThreadActivity {
  if (a.createdAt !== b.createdAt) return a.createdAt > b.createdAt ? a : b;
  const sequenceA = a.sequence ?? -1;
  const sequenceB = b.sequence ?? -1;
  if (sequenceA !== sequenceB) return sequenceA > sequenceB ? a : b;
  return a.id >= b.id ? a : b;
}

/**
 * Usage from the `context-window.updated` activities, or null when the thread has none (not reported).
 * Real 0.0.42 (Codex 0.169, Claude Code 2.1.328; docs/t3-protocols.md, "Changes and usage"): every
 * report's `usedTokens` is the context fill, never use, and its `inputTokens`… are the newest model
 * request's. `totalProcessedTokens` is what was processed so far: a report with a turn id (Claude's)
 * counts its turn alone, one with none (Codex's) the whole provider session. So the thread's tokens
 * are the newest turnless report's plus each turn's newest; the last turn's are its newest report's
 * where it has a turn, else only the newest request's figures are known, and said as such.
 */
export function usageOfActivities(activities: readonly ThreadActivity[]): UsageFacts | null {
  const newestByTurn = new Map<string | null, ThreadActivity>();
  let newest: ThreadActivity | undefined;
  for (const candidate of activities) {
    if (candidate.kind !== "context-window.updated") continue;
    newest = newest ? newerReport(newest, candidate) : candidate;
    const known = newestByTurn.get(candidate.turnId);
    newestByTurn.set(candidate.turnId, known ? newerReport(known, candidate) : candidate);
  }
  if (!newest) return null;
  const decoded = ContextWindowPayload.safeParse(newest.payload);
  if (!decoded.success) return null;
  const p = decoded.data;
  const processed = [...newestByTurn.values()].flatMap((report) => ContextWindowPayload.safeParse(report.payload).data?.totalProcessedTokens ?? []);
  // A sum past the exact range is no figure at all (shared/fleet/counts.ts).
  const threadTotal = processed.length ? sumCounts(processed) : null;
  const turnProcessed = newest.turnId !== null ? (p.totalProcessedTokens ?? null) : null;
  return {
    contextUsed: p.usedTokens ?? null,
    contextMax: p.maxTokens ?? null,
    compactsAutomatically: p.compactsAutomatically ?? null,
    ...(turnProcessed !== null
      ? { lastTurn: counts(turnProcessed, null, null, null, null), lastScope: "turn" as const }
      : {
          lastTurn: counts(
            p.lastUsedTokens,
            p.lastInputTokens ?? p.inputTokens,
            p.lastCachedInputTokens ?? p.cachedInputTokens,
            p.lastOutputTokens ?? p.outputTokens,
            p.lastReasoningOutputTokens ?? p.reasoningOutputTokens,
          ),
          lastScope: "request" as const,
        }),
    thread: counts(threadTotal, null, null, null, null),
    reportedAt: newest.createdAt,
  };
}
