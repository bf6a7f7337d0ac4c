// Diffs read when shown: one read per (agent, turn range), bounded, and honest about checkpoints without one.
import { describe, expect, it } from "vitest";
import type { TurnChanges } from "../../shared/fleet/facts";
import type { AgentView } from "../../shared/fleet/types";
import type { DiffScope } from "../../shared/t3/diff";
import { T3Error } from "../../shared/t3/errors";
import { AgentDiffs, filesOf } from "./diffs";

const turn = (
  turnCount: number,
  status: TurnChanges["status"] = "ready",
  files = [{ path: `f${turnCount}.ts`, kind: "modified", additions: 2, deletions: 1 }],
): TurnChanges => ({
  turnCount,
  runId: `turn-${turnCount}`,
  status,
  files,
  completedAt: null,
});

function rig(changes: TurnChanges[], answer: (scope: DiffScope) => Promise<string>, options: { online?: boolean; limit?: number; cacheEntries?: number } = {}) {
  const reads: { threadId: string; scope: DiffScope }[] = [];
  const agent = { key: "env/thread-1", changes } as AgentView;
  const diffs = new AgentDiffs({
    model: { agent: (key) => (key === agent.key ? agent : undefined) },
    session: () =>
      options.online === false
        ? undefined
        : {
            readDiff: (threadId, scope) => {
              reads.push({ threadId, scope });
              return answer(scope);
            },
          },
    ...(options.limit !== undefined && { limit: options.limit }),
    ...(options.cacheEntries !== undefined && { cacheEntries: options.cacheEntries }),
  });
  return { diffs, reads };
}

describe("agent diffs", () => {
  it("reads a turn's diff by its turn range once, then from the cache", async () => {
    const { diffs, reads } = rig([turn(1), turn(2)], async () => "diff --git a/f2.ts b/f2.ts\n");
    const first = await diffs.read("env/thread-1", { kind: "turn", turnCount: 2 });
    const second = await diffs.read("env/thread-1", { kind: "turn", turnCount: 2 });
    expect(first).toEqual({
      key: "env/thread-1",
      scope: "turn",
      fromTurnCount: 1,
      toTurnCount: 2,
      files: turn(2).files,
      state: "ready",
      text: "diff --git a/f2.ts b/f2.ts\n",
    });
    expect(second).toEqual(first);
    expect(reads).toEqual([{ threadId: "thread-1", scope: { kind: "turn", turnCount: 2 } }]);
  });

  it("reads the whole thread's diff up to its newest turn, offering every file once", async () => {
    const { diffs, reads } = rig([turn(1), turn(2, "ready", [{ path: "f1.ts", kind: "modified", additions: 5, deletions: 0 }])], async () => "x");
    const diff = await diffs.read("env/thread-1", { kind: "thread" });
    expect(reads[0]!.scope).toEqual({ kind: "thread", toTurnCount: 2 });
    expect(diff.files).toEqual([{ path: "f1.ts", kind: "modified", additions: 7, deletions: 1 }]);
    expect(diff).toMatchObject({ fromTurnCount: 0, toTurnCount: 2 });
  });

  it("says a missing or failed checkpoint has no diff, without asking T3", async () => {
    const { diffs, reads } = rig([turn(1, "missing", []), turn(2, "error", [])], async () => "x");
    const missing = await diffs.read("env/thread-1", { kind: "turn", turnCount: 1 });
    const failed = await diffs.read("env/thread-1", { kind: "turn", turnCount: 2 });
    expect(missing).toMatchObject({ state: "unavailable", reason: expect.stringContaining("no checkpoint") });
    expect(failed).toMatchObject({ state: "unavailable", reason: expect.stringContaining("could not capture") });
    expect(reads).toEqual([]);
  });

  it("does not send a diff over the limit: says its size and offers the file list", async () => {
    const { diffs } = rig([turn(1)], async () => "y".repeat(101), { limit: 100 });
    expect(await diffs.read("env/thread-1", { kind: "turn", turnCount: 1 })).toEqual({
      key: "env/thread-1",
      scope: "turn",
      fromTurnCount: 0,
      toTurnCount: 1,
      files: turn(1).files,
      state: "too-large",
      size: 101,
    });
  });

  it("says when the machine is not online, and asks T3 again after a failed read", async () => {
    let fail = true;
    const { diffs, reads } = rig([turn(1)], async () => {
      if (fail) throw new T3Error("server", "Checkpoint ref not found");
      return "ok";
    });
    expect(await diffs.read("env/thread-1", { kind: "turn", turnCount: 1 })).toMatchObject({
      state: "unavailable",
      reason: "T3 could not give the diff: Checkpoint ref not found",
    });
    fail = false;
    expect(await diffs.read("env/thread-1", { kind: "turn", turnCount: 1 })).toMatchObject({ state: "ready", text: "ok" });
    expect(reads).toHaveLength(2);
    const offline = rig([turn(1)], async () => "never", { online: false });
    // Marked as its machine's absence, so the window can name the machine as of when and ask again once it is back.
    expect(await offline.diffs.read("env/thread-1", { kind: "turn", turnCount: 1 })).toMatchObject({
      state: "unavailable",
      offline: true,
      reason: expect.stringContaining("not online"),
    });
    expect(await diffs.read("env/thread-1", { kind: "turn", turnCount: 1 })).not.toHaveProperty("offline");
  });

  it("keeps a bounded number of diffs, dropping the least recently used", async () => {
    const { diffs, reads } = rig([turn(1), turn(2), turn(3)], async (scope) => String(scope.kind === "turn" ? scope.turnCount : 0), { cacheEntries: 2 });
    await diffs.read("env/thread-1", { kind: "turn", turnCount: 1 });
    await diffs.read("env/thread-1", { kind: "turn", turnCount: 2 });
    await diffs.read("env/thread-1", { kind: "turn", turnCount: 1 });
    await diffs.read("env/thread-1", { kind: "turn", turnCount: 3 });
    await diffs.read("env/thread-1", { kind: "turn", turnCount: 1 });
    await diffs.read("env/thread-1", { kind: "turn", turnCount: 2 });
    expect(reads.map((read) => (read.scope.kind === "turn" ? read.scope.turnCount : 0))).toEqual([1, 2, 3, 2]);
  });

  it("refuses a turn T3 never reported, and an agent with no changes", async () => {
    const { diffs } = rig([turn(1)], async () => "x");
    await expect(diffs.read("env/thread-1", { kind: "turn", turnCount: 9 })).rejects.toThrow("no turn 9");
    await expect(rig([], async () => "x").diffs.read("env/thread-1", { kind: "thread" })).rejects.toThrow("no changes");
  });

  it("sums a file's counts over turns", () => {
    expect(filesOf([turn(1), turn(2, "ready", [{ path: "f1.ts", kind: "deleted", additions: 0, deletions: 9 }])])).toEqual([
      { path: "f1.ts", kind: "deleted", additions: 2, deletions: 10 },
    ]);
  });
});
