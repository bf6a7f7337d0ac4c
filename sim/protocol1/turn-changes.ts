// Protocol 1: what a finished simulated turn reports about its changes and tokens, the way T3 0.0.42
// does: a `context-window.updated` activity (thread totals, the last turn's figures, the window and
// whether the provider compacts; ../shared/fixtures/t3-0.0.42/thread-completed.json), and, in a git
// workspace, a `thread.turn-diff-completed` checkpoint per turn with its files. The simulated
// workspace becomes a git repository with its first edit (`#edit`, sim/changes.ts): a plain turn
// before that has no checkpoint, as recorded in a folder that is not one.
import { SIM_CONTEXT_WINDOW, type SimTurnChanges, simNearlyFull, simTurnChanges, simTurnUsage } from "../changes";
import type { ThreadState, WireCheckpoint } from "./model";

/** The payload of the turn's context-window activity, with the thread's totals so far. */
export function contextWindowPayload(thread: ThreadState, text: string, turnCount: number, changes: SimTurnChanges | undefined): Record<string, unknown> {
  const last = simTurnUsage(text, turnCount, changes);
  const previous = (thread.activities.findLast((activity) => activity.kind === "context-window.updated")?.payload ?? {}) as Record<string, number | undefined>;
  const total = (key: string, add: number) => (previous[key] ?? 0) + add;
  const nearlyFull = simNearlyFull(text);
  const input = total("inputTokens", last.input);
  const output = total("outputTokens", last.output);
  return {
    usedTokens: nearlyFull ? Math.floor(SIM_CONTEXT_WINDOW * 0.95) : input + output,
    maxTokens: SIM_CONTEXT_WINDOW,
    inputTokens: input,
    cachedInputTokens: total("cachedInputTokens", last.cachedInput),
    outputTokens: output,
    reasoningOutputTokens: total("reasoningOutputTokens", last.reasoning),
    lastUsedTokens: last.input + last.output,
    lastInputTokens: last.input,
    lastCachedInputTokens: last.cachedInput,
    lastOutputTokens: last.output,
    lastReasoningOutputTokens: last.reasoning,
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
