// Protocol 1: checkpoints and context-window activities → the neutral changes and usage facts.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { decodeWith } from "../decode";
import { OrchestrationEventSchema, ThreadStreamItemSchema } from "./schemas";
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
  const sequence = projection.lastSequence + 1;
  const threadId = projection.thread!.id;
  const decoded = decodeWith(
    OrchestrationEventSchema,
    {
      sequence,
      eventId: `e-${sequence}`,
      aggregateKind: "thread",
      aggregateId: threadId,
      type,
      occurredAt: "2026-11-30T00:30:00.000Z",
      commandId: null,
      payload: { threadId, ...payload },
    },
    type,
  );
  if (!decoded.ok) throw new Error(decoded.error.message);
  projection.applyEvent(decoded.value);
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
  it("reads the recorded 0.0.42 figures: context fill, thread and last turn, compaction", () => {
    const usage = recorded("t3-0.0.42/thread-completed.json").facts().usage;
    expect(usage).toEqual({
      contextUsed: 10,
      contextMax: 258400,
      compactsAutomatically: true,
      lastTurn: { total: 10, input: 7, cachedInput: 0, output: 3, reasoning: 0 },
      thread: { total: 10, input: 7, cachedInput: 0, output: 3, reasoning: 0 },
      reportedAt: "2026-11-30T00:23:08.104Z",
    });
  });

  it("takes the newest report, and a figure the server leaves out stays not reported", () => {
    const projection = recorded("t3-0.0.42/thread-completed.json");
    reportUsage(projection, { usedTokens: 5000, maxTokens: 200000, inputTokens: 4000, outputTokens: "lots" }, "2026-11-30T00:40:00.000Z");
    const usage = projection.facts().usage!;
    expect(usage.contextUsed).toBe(5000);
    expect(usage.compactsAutomatically).toBeNull();
    expect(usage.lastTurn).toBeNull();
    expect(usage.thread).toEqual({ total: 5000, input: 4000, cachedInput: null, output: null, reasoning: null });
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
      lastTurn: { total: 1336, input: null, cachedInput: null, output: null, reasoning: null },
      thread: { total: 2699, input: 1335, cachedInput: null, output: 1, reasoning: null },
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
