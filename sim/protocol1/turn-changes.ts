// Protocol 1: what a finished simulated turn reports about its changes and tokens, the way T3 0.0.42
// does with the real Codex: a `context-window.updated` activity with no turn id whose `usedTokens`
// is the context fill, `totalProcessedTokens` the thread's processed tokens so far, and whose input
// and output figures (and `last*`) are the turn's last model request's (here one request per turn;
// docs/t3-protocols.md, "Changes and usage"), and, in a git workspace, a `thread.turn-diff-completed`
// checkpoint per turn with its files. The simulated workspace becomes a git repository with its first
// edit (`#edit`, sim/changes.ts): a plain turn before that has no checkpoint, as recorded in a folder
// that is not one.
import { SIM_CONTEXT_WINDOW, type SimTurnChanges, simNearlyFull, simTurnChanges, simTurnUsage } from "../changes";
import type { ThreadState, WireCheckpoint } from "./model";

/**
 * The payload of the turn's context-window activity. Its one request sends the context so far with
 * the turn's new words: the context grows by the turn's tokens (`#nearfull`: to 95 % of the window,
 * sent whole), and the thread's processed tokens grow by the whole request.
 */
export function contextWindowPayload(thread: ThreadState, text: string, turnCount: number, changes: SimTurnChanges | undefined): Record<string, unknown> {
  const turn = simTurnUsage(text, turnCount, changes);
  const previous = (thread.activities.findLast((activity) => activity.kind === "context-window.updated")?.payload ?? {}) as Record<string, number | undefined>;
  const nearlyFull = simNearlyFull(text);
  const full = Math.floor(SIM_CONTEXT_WINDOW * 0.95);
  const context = nearlyFull ? full : Math.min(full, (previous.usedTokens ?? 0) + turn.input + turn.output);
  const input = context - turn.output;
  const cachedInput = Math.min(turn.cachedInput, input);
  return {
    usedTokens: context,
    maxTokens: SIM_CONTEXT_WINDOW,
    totalProcessedTokens: (previous.totalProcessedTokens ?? 0) + context,
    inputTokens: input,
    cachedInputTokens: cachedInput,
    outputTokens: turn.output,
    reasoningOutputTokens: turn.reasoning,
    lastUsedTokens: context,
    lastInputTokens: input,
    lastCachedInputTokens: cachedInput,
    lastOutputTokens: turn.output,
    lastReasoningOutputTokens: turn.reasoning,
    compactsAutomatically: !nearlyFull,
  };
}

/** The turn's checkpoint once the workspace is a git repository, with its diff kept for getTurnDiff. */
export function turnCheckpoint(thread: ThreadState, text: string, turnId: string, turnCount: number, completedAt: string): WireCheckpoint | undefined {
  const changes = simTurnChanges(text, turnCount);
  if (!changes && (thread.checkpoints ?? []).length === 0) return undefined;
  (thread.diffs ??= new Map()).set(turnCount, changes?.diff ?? "");
  return {
    turnId,
    checkpointTurnCount: turnCount,
    checkpointRef: `refs/t3/checkpoints/${Buffer.from(thread.id).toString("base64url")}/turn/${turnCount}`,
    status: "ready",
    files: changes?.files ?? [],
    assistantMessageId: thread.messages.findLast((message) => message.role === "assistant")?.id ?? null,
    completedAt,
  };
}
