// Reading a thread's diff from T3: `orchestration.getTurnDiff {threadId, fromTurnCount, toTurnCount}`
// for one turn and `orchestration.getFullThreadDiff {threadId, toTurnCount}` for the whole thread.
// Both protocols have the two methods under these names, with the same input and result (T3's
// `checkpointDiff.ts`; ../shared/t3-protocol.md §5.4 and §16.3), so each adapter calls them the same way.
import { z } from "zod";

/** Which diff: one turn (by its turn count) or the whole thread up to a turn. */
export type DiffScope = { kind: "turn"; turnCount: number } | { kind: "thread"; toTurnCount: number };

/** The RPC call that reads a scope's diff. */
export function diffCall(threadId: string, scope: DiffScope): { method: string; payload: Record<string, unknown> } {
  return scope.kind === "turn"
    ? { method: "orchestration.getTurnDiff", payload: { threadId, fromTurnCount: scope.turnCount - 1, toTurnCount: scope.turnCount } }
    : { method: "orchestration.getFullThreadDiff", payload: { threadId, toTurnCount: scope.toTurnCount } };
}

/** The result of either call: a unified diff as text (git's `diff --git` format). */
export const ThreadDiffResult = z.object({
  threadId: z.string(),
  fromTurnCount: z.number().int().nonnegative(),
  toTurnCount: z.number().int().nonnegative(),
  diff: z.string(),
});
export type ThreadDiffResult = z.infer<typeof ThreadDiffResult>;
