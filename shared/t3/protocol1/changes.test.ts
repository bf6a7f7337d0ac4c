// Protocol 1: checkpoints and context-window activities → the neutral changes and usage facts.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { decodeWith } from "../decode";
import { ThreadStreamItemSchema } from "./schemas";
import { nextThreadEvent } from "./long-thread.testkit";
import { ThreadProjection } from "./thread-projection";

const fixtures = process.env.T3_FIXTURES_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../../../shared/fixtures");
/** Recorded in this project by integration/realt3/changes.real.test.ts (T3_RECORD_CHANGES=1). */
const projectFixtures = resolve(dirname(fileURLToPath(import.meta.url)), "../../../fixtures");

function recorded(name: string, folder = fixtures): ThreadProjection {
  const decoded = decodeWith(ThreadStreamItemSchema, JSON.parse(readFileSync(resolve(folder, name), "utf8")), name);
  if (!decoded.ok || decoded.value.kind !== "snapshot") throw new Error(`${name}: not a thread snapshot`);
  const projection = new ThreadProjection();
  projection.applySnapshot(decoded.value.snapshot);
  return projection;
}

function apply(projection: ThreadProjection, type: string, payload: object): void {
  projection.applyEvent(nextThreadEvent(projection, type, payload));
}

/** A `context-window.updated` activity with no turn id, as real 0.0.42 sends it. */
function reportUsage(projection: ThreadProjection, payload: object, createdAt: string): void {
  apply(projection, "thread.activity-appended", {
    activity: { id: "usage-2", tone: "info", kind: "context-window.updated", summary: "Context window updated", payload, turnId: null, createdAt },
  });
}

const checkpoint = (turnCount: number, status: string, files: object[]) => ({
  turnId: `turn-${turnCount}`,
  checkpointTurnCount: turnCount,
  checkpointRef: `refs/t3/checkpoints/t/turn/${turnCount}`,
  status,
  files,
  assistantMessageId: null,
  completedAt: `2026-11-30T00:3${turnCount}:00.000Z`,
});

describe("protocol 1: usage from context-window activities", () => {
  it("reads the recorded 0.0.42 figures: context fill, the last request's tokens, compaction; no thread total where T3 sent none", () => {
    const usage = recorded("t3-0.0.42/thread-completed.json").facts().usage;
    expect(usage).toEqual({
      contextUsed: 10,
      contextMax: 258400,
      compactsAutomatically: true,
      lastTurn: { total: 10, input: 7, cachedInput: 0, output: 3, reasoning: 0 },
      lastScope: "request",
      thread: null,
      reportedAt: "2026-11-30T00:23:08.104Z",
    });
  });

  it("takes the newest report, and a figure the server leaves out stays not reported", () => {
    const projection = recorded("t3-0.0.42/thread-completed.json");
    reportUsage(projection, { usedTokens: 5000, maxTokens: 200000, inputTokens: 4000, outputTokens: "lots" }, "2026-11-30T00:40:00.000Z");
    const usage = projection.facts().usage!;
    expect(usage.contextUsed).toBe(5000);
    expect(usage.compactsAutomatically).toBeNull();
    expect(usage.lastTurn).toEqual({ total: null, input: 4000, cachedInput: null, output: null, reasoning: null });
  });

  it("never counts the context fill as the thread's tokens (issue 39: a 95 % fill read as 245k tokens used)", () => {
    const projection = recorded("t3-0.0.42/thread-completed.json");
    reportUsage(
      projection,
      { usedTokens: 245_480, maxTokens: 258_400, inputTokens: 2_500, outputTokens: 200, compactsAutomatically: false },
      "2026-11-30T00:40:00.000Z",
    );
    expect(projection.facts().usage).toMatchObject({ contextUsed: 245_480, thread: null });
    reportUsage(projection, { usedTokens: 245_480, maxTokens: 258_400, totalProcessedTokens: 251_000 }, "2026-11-30T00:41:00.000Z");
    expect(projection.facts().usage!.thread).toEqual({ total: 251_000, input: null, cachedInput: null, output: null, reasoning: null });
  });

  it("sums what each turn processed where reports carry a turn (Claude's: 1312, 2710, 1352 over three turns); a turnless report is the session's so far (Codex's)", () => {
    const claude = recorded("t3-0.0.42/thread-completed.json");
    const report = (projection: ThreadProjection, id: string, turnId: string | null, payload: object, createdAt: string) =>
      apply(projection, "thread.activity-appended", {
        activity: { id, tone: "info", kind: "context-window.updated", summary: "Context window updated", payload, turnId, createdAt },
      });
    report(
      claude,
      "u-1",
      "turn-a",
      { usedTokens: 1_307, lastUsedTokens: 1_307, totalProcessedTokens: 1_312, inputTokens: 1_306, outputTokens: 1 },
      "2026-11-30T00:40:00.000Z",
    );
    report(
      claude,
      "u-2",
      "turn-b",
      { usedTokens: 1_342, lastUsedTokens: 1_342, totalProcessedTokens: 2_710, inputTokens: 1_341, outputTokens: 1 },
      "2026-11-30T00:40:01.000Z",
    );
    report(
      claude,
      "u-3",
      "turn-c",
      { usedTokens: 1_347, lastUsedTokens: 1_347, totalProcessedTokens: 1_352, inputTokens: 1_346, outputTokens: 1 },
      "2026-11-30T00:40:02.000Z",
    );
    expect(claude.facts().usage).toMatchObject({
      contextUsed: 1_347,
      lastTurn: { total: 1_352, input: null, cachedInput: null, output: null, reasoning: null },
      lastScope: "turn",
      thread: { total: 1_312 + 2_710 + 1_352, input: null, cachedInput: null, output: null, reasoning: null },
    });
    const codex = recorded("t3-0.0.42/thread-completed.json");
    const codexReport = (id: string, processed: number, at: string) =>
      report(
        codex,
        id,
        null,
        {
          usedTokens: 1_261,
          totalProcessedTokens: processed,
          inputTokens: 1_255,
          outputTokens: 6,
          lastUsedTokens: 1_261,
          lastInputTokens: 1_255,
          lastOutputTokens: 6,
        },
        at,
      );
    codexReport("c-1", 1_211, "2026-11-30T00:40:00.000Z");
    codexReport("c-2", 2_429, "2026-11-30T00:40:01.000Z");
    codexReport("c-3", 6_220, "2026-11-30T00:40:02.000Z");
    expect(codex.facts().usage).toMatchObject({
      lastTurn: { total: 1_261, input: 1_255, output: 6 },
      lastScope: "request",
      thread: { total: 6_220, input: null, cachedInput: null, output: null, reasoning: null },
    });
  });

  it("is not reported where the thread has no such activity (0.0.24 sends none)", () => {
    expect(recorded("t3-0.0.24/thread-completed.json").facts().usage).toBeNull();
  });
});

describe("protocol 1: changes from checkpoints", () => {
  it("has none in the recorded snapshot, then one per turn-diff-completed event, in turn order", () => {
    const projection = recorded("t3-0.0.42/thread-completed.json");
    expect(projection.facts().changes).toEqual([]);
    apply(projection, "thread.turn-diff-completed", checkpoint(2, "ready", [{ path: "b.ts", kind: "added", additions: 3, deletions: 0 }]));
    apply(projection, "thread.turn-diff-completed", checkpoint(1, "ready", [{ path: "a.ts", kind: "modified", additions: 40, deletions: 2 }]));
    expect(projection.facts().changes).toEqual([
      {
        turnCount: 1,
        runId: "turn-1",
        status: "ready",
        files: [{ path: "a.ts", kind: "modified", additions: 40, deletions: 2 }],
        completedAt: "2026-11-30T00:31:00.000Z",
      },
      {
        turnCount: 2,
        runId: "turn-2",
        status: "ready",
        files: [{ path: "b.ts", kind: "added", additions: 3, deletions: 0 }],
        completedAt: "2026-11-30T00:32:00.000Z",
      },
    ]);
  });

  it("keeps a real checkpoint over a later missing placeholder of the same turn, as T3's projector does", () => {
    const projection = recorded("t3-0.0.42/thread-completed.json");
    apply(projection, "thread.turn-diff-completed", checkpoint(1, "ready", [{ path: "a.ts", kind: "modified", additions: 1, deletions: 1 }]));
    apply(projection, "thread.turn-diff-completed", checkpoint(1, "missing", []));
    expect(projection.facts().changes!.map((turn) => turn.status)).toEqual(["ready"]);
  });

  it("says missing and error, and a status it does not know as error", () => {
    const projection = recorded("t3-0.0.42/thread-completed.json");
    apply(projection, "thread.turn-diff-completed", checkpoint(1, "missing", []));
    apply(projection, "thread.turn-diff-completed", checkpoint(2, "error", []));
    apply(projection, "thread.turn-diff-completed", checkpoint(3, "partial", []));
    expect(projection.facts().changes!.map((turn) => turn.status)).toEqual(["missing", "error", "error"]);
  });

  it("drops the checkpoints of turns a revert removed", () => {
    const projection = recorded("t3-0.0.42/thread-completed.json");
    apply(projection, "thread.turn-diff-completed", checkpoint(1, "ready", []));
    apply(projection, "thread.turn-diff-completed", checkpoint(2, "ready", []));
    apply(projection, "thread.reverted", { turnCount: 1 });
    expect(projection.facts().changes!.map((turn) => turn.turnCount)).toEqual([1]);
  });
});

describe("protocol 1: a turn that changed a file in a git workspace, as real 0.0.42 with Claude Code sent it", () => {
  const projection = recorded("t3-0.0.42-changes/thread-with-checkpoint.json", projectFixtures);

  it("has the turn's checkpoint with its file (a new file reads 'modified', as T3 says)", () => {
    expect(projection.facts().changes).toEqual([
      {
        turnCount: 1,
        runId: "9fe1acd9-5f9b-44b7-8a68-dd4af1027b64",
        status: "ready",
        files: [{ path: "scripted-change.txt", kind: "modified", additions: 1, deletions: 0 }],
        completedAt: "2026-12-02T07:56:55.336Z",
      },
    ]);
  });

  it("reads Claude's context-window report: the context alone in usedTokens, the thread's processed total, no compaction figure", () => {
    expect(projection.facts().usage).toMatchObject({
      contextUsed: 1336,
      contextMax: 200000,
      compactsAutomatically: null,
      // Its input and output are the newest request's (1335 + 1 = 1336): neither the turn's nor the thread's.
      lastTurn: { total: 2699, input: null, cachedInput: null, output: null, reasoning: null },
      lastScope: "turn",
      thread: { total: 2699, input: null, cachedInput: null, output: null, reasoning: null },
    });
  });
});

describe("protocol 1: whether the last turn is fully reported (its stream can be let go after the turn)", () => {
  it("is, in real 0.0.42's git workspace with Claude Code: the turn's checkpoint and its token report are in", () => {
    expect(recorded("t3-0.0.42-changes/thread-with-checkpoint.json", projectFixtures).facts().lastTurnReported).toBe(true);
  });

  it("is not while a checkpointed workspace's newest turn has no checkpoint yet", () => {
    const projection = recorded("t3-0.0.42-changes/thread-with-checkpoint.json", projectFixtures);
    apply(projection, "thread.session-set", {
      session: { ...projection.thread!.session!, status: "running", activeTurnId: "turn-2", updatedAt: "2026-12-02T08:00:00.000Z" },
    });
    expect(projection.facts().lastTurnReported).toBe(false);
    apply(projection, "thread.message-sent", {
      messageId: "answer-2",
      role: "assistant",
      text: "Done",
      turnId: "turn-2",
      streaming: false,
      createdAt: "2026-12-02T08:00:01.000Z",
      updatedAt: "2026-12-02T08:00:01.000Z",
    });
    apply(projection, "thread.session-set", {
      session: { ...projection.thread!.session!, status: "ready", activeTurnId: null, updatedAt: "2026-12-02T08:00:01.000Z" },
    });
    reportUsage(projection, { usedTokens: 9 }, "2026-12-02T08:00:01.000Z");
    expect(projection.facts().lastTurnReported).toBe(false);
    apply(projection, "thread.turn-diff-completed", { ...checkpoint(2, "ready", []), turnId: "turn-2" });
    expect(projection.facts().lastTurnReported).toBe(true);
  });

  it("is not after the first turn of a workspace with no checkpoint (real 0.0.42, not a git repository): one may still come", () => {
    expect(recorded("t3-0.0.42/thread-completed.json").facts().lastTurnReported).toBe(false);
  });
});
