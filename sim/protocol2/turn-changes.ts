// Protocol 2: what a finished simulated run reports about its changes and tokens. Its checkpoint is
// `missing` with no files in a folder that is not a git repository (as the real V2 engine recorded,
// ../shared/fixtures/t3-v2dev/02-turn-plain.json), and `ready` with the run's files once the simulated
// workspace is a repository (from its first `#edit`, sim/changes.ts). The provider turn carries the
// contract's `tokenUsage` (live context) and `turnTokenUsage` (the turn's tokens).
import { SIM_CONTEXT_WINDOW, simNearlyFull, simTurnChanges, simTurnUsage } from "../changes";
import type { ThreadState } from "./engine-types";
import type { Checkpoint, ProviderTurn } from "./model";

/** The checkpoint fields a run's changes decide, with its diff kept for getTurnDiff. */
export function runCheckpoint(state: ThreadState, text: string, turnCount: number): Pick<Checkpoint, "status" | "files"> {
  const changes = simTurnChanges(text, turnCount);
  const repository = changes !== undefined || state.checkpoints.some((checkpoint) => checkpoint.status === "ready");
  if (!repository) return { status: "missing", files: [] };
  (state.diffs ??= new Map()).set(turnCount, changes?.diff ?? "");
  return { status: "ready", files: changes?.files ?? [] };
}

/** The baseline a thread's first run captures: `ready` with no files in a repository (the real engine in a git workspace), else `missing`. */
export function baselineCheckpoint(text: string): Pick<Checkpoint, "status" | "files"> {
  return { status: simTurnChanges(text, 1) ? "ready" : "missing", files: [] };
}

/** The provider turn's token figures when it ends. */
export function providerTurnUsage(state: ThreadState, text: string, turnCount: number): Pick<ProviderTurn, "tokenUsage" | "turnTokenUsage"> {
  const turn = simTurnUsage(text, turnCount, simTurnChanges(text, turnCount));
  const before = state.providerTurns.findLast((candidate) => candidate.tokenUsage)?.tokenUsage;
  const input = (before?.inputTokens ?? 0) + turn.input;
  const output = (before?.outputTokens ?? 0) + turn.output;
  return {
    tokenUsage: {
      usedTokens: simNearlyFull(text) ? Math.floor(SIM_CONTEXT_WINDOW * 0.95) : input + output,
      maxTokens: SIM_CONTEXT_WINDOW,
      inputTokens: input,
      cachedInputTokens: (before?.cachedInputTokens ?? 0) + turn.cachedInput,
      outputTokens: output,
      reasoningOutputTokens: (before?.reasoningOutputTokens ?? 0) + turn.reasoning,
      updatedAt: new Date().toISOString(),
    },
    turnTokenUsage: {
      usageScope: "main_agent",
      usageStatus: "complete",
      inputTokens: turn.input,
      outputTokens: turn.output,
      cachedInputTokens: turn.cachedInput,
      reasoningTokens: turn.reasoning,
      hasSubagents: false,
    },
  };
}
