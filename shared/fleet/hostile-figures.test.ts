// Figures a hostile server sends (issue 43), from the wire to the words: each protocol's decoders
// keep a bad count as "not reported" and the rest of its checkpoint or report, sums never leave the
// exact range, and a context fill over the window or against a window of a few tokens is never
// shown as a fill.
import { describe, expect, it } from "vitest";
import { HOSTILE_FIGURES } from "../t3/hostile-text.testkit";
import { decodeWith, droppedOf } from "../t3/decode";
import { usageOfActivities } from "../t3/protocol1/changes";
import { Checkpoint, ShellSnapshot, ThreadActivity as ActivitySchema, ThreadMessage, ThreadShell, type ThreadActivity } from "../t3/protocol1/schemas";
import { turnChangesOfProjection, usageOfProjection } from "../t3/protocol2/changes";
import { CheckpointV2, ProviderTurn, Run, ShellSnapshotV2, TurnItemSchema } from "../t3/protocol2/schemas";
import {
  changesWords,
  contextPercent,
  contextReading,
  contextTotalWords,
  contextWords,
  latestChanges,
  nearContextLimit,
  totalWords,
  usageTotals,
} from "./changes-usage";
import { sumCounts } from "./counts";
import type { UsageFacts } from "./facts";
import type { AgentView } from "./types";

const { huge, negative, fraction, unsafe, maxSafe, word } = HOSTILE_FIGURES;
const HOSTILE_COUNTS = [huge, negative, fraction, unsafe, word, Infinity, Number.NaN, null, "12"];

const hostileFiles = [
  { path: "a.ts", kind: "modified", additions: huge, deletions: negative },
  { path: "b.ts", kind: "modified", additions: 3, deletions: fraction },
  { path: "c.ts", kind: "added", additions: unsafe, deletions: 2 },
];
const expectedFiles = [
  { path: "a.ts", kind: "modified", additions: null, deletions: null },
  { path: "b.ts", kind: "modified", additions: 3, deletions: null },
  { path: "c.ts", kind: "added", additions: null, deletions: 2 },
];

const usage = (fields: Partial<UsageFacts>): UsageFacts => ({
  contextUsed: 100_000,
  contextMax: 200_000,
  compactsAutomatically: false,
  lastTurn: null,
  thread: null,
  reportedAt: "2026-12-04T10:00:00.000Z",
  ...fields,
});

const agent = (key: string, facts: UsageFacts): AgentView =>
  ({ key, environmentId: "e", projectId: "p", projectTitle: "repo", workspaceRoot: null, usage: facts }) as AgentView;

const thread = (total: number | null) => ({ total, input: null, cachedInput: null, output: null, reasoning: null });

describe("a checkpoint's counts", () => {
  it("protocol 1: each bad count is not reported, the checkpoint and its good counts kept", () => {
    const decoded = decodeWith(
      Checkpoint,
      { turnId: "turn-1", checkpointTurnCount: 1, checkpointRef: "r", status: "ready", files: hostileFiles, assistantMessageId: null, completedAt: "t" },
      "checkpoint",
    );
    expect(decoded.ok && decoded.value.files).toEqual(expectedFiles);
    // The turn a diff is read by is no figure to guess: a fractional one is refused with its path.
    const fractional = decodeWith(
      Checkpoint,
      { turnId: "t", checkpointTurnCount: 1.5, checkpointRef: "r", status: "ready", files: [], assistantMessageId: null, completedAt: "t" },
      "checkpoint",
    );
    expect(!fractional.ok && fractional.error.path).toBe("checkpointTurnCount");
  });

  it("protocol 2: each bad count is not reported, the checkpoint and its good counts kept", () => {
    const raw = { id: "c", runId: "r", appRunOrdinal: 1, status: "ready", files: hostileFiles, capturedAt: "t" };
    const decoded = decodeWith(CheckpointV2, raw, "checkpoint");
    expect(decoded.ok).toBe(true);
    expect(turnChangesOfProjection({ checkpoints: [decoded.ok ? decoded.value : raw] as never })[0]!.files).toEqual(expectedFiles);
  });

  it("every hostile count reads as not reported in a turn item (protocol 2's file change)", () => {
    for (const value of HOSTILE_COUNTS) {
      const item = {
        id: "i",
        threadId: "t",
        runId: null,
        nodeId: null,
        ordinal: 1,
        status: "completed",
        title: null,
        startedAt: null,
        completedAt: null,
        updatedAt: "t",
      };
      const decoded = decodeWith(TurnItemSchema, { ...item, type: "file_change", fileName: "a.ts", additions: value, deletions: 4 }, "item");
      expect(decoded.ok && decoded.value, String(value)).toMatchObject({ type: "file_change", additions: null, deletions: 4 });
    }
  });

  it("a queued run's place that is no count is not reported, the run kept (protocol 2)", () => {
    const run = { id: "r", ordinal: 2, userMessageId: "m", rootNodeId: null, status: "queued", requestedAt: "t", startedAt: null, completedAt: null };
    for (const value of [...HOSTILE_COUNTS, 0]) {
      const decoded = decodeWith(Run, { ...run, queuePosition: value, providerInstanceId: "codex", modelSelection: { model: "gpt" } }, "run");
      expect(decoded.ok && decoded.value.queuePosition, String(value)).toBeNull();
    }
  });

  it("protocol 1: an activity's order, an attachment's size or a plan's steps that are no count cost only themselves", () => {
    for (const value of HOSTILE_COUNTS) {
      const activity = decodeWith(
        ActivitySchema,
        { id: "a", tone: "info", kind: "k", summary: "s", payload: {}, turnId: null, sequence: value, createdAt: "t" },
        "activity",
      );
      expect(activity.ok && activity.value.sequence, String(value)).toBeUndefined();
      const message = decodeWith(
        ThreadMessage,
        {
          id: "m",
          role: "user",
          text: "hi",
          attachments: [{ type: "image", name: "a.png", mimeType: "image/png", sizeBytes: value }],
          turnId: null,
          streaming: false,
          createdAt: "t",
          updatedAt: "t",
        },
        "message",
      );
      expect(message.ok && message.value.attachments?.[0]?.sizeBytes, String(value)).toBeNull();
      const plan = ThreadShell.shape.planProgress.safeParse({ step: null, completedSteps: value, totalSteps: 3 });
      expect(plan.data, String(value)).toEqual({ step: null, completedSteps: null, totalSteps: 3 });
    }
  });

  it("the words say which counts T3 did not report, never a sum of what it did", () => {
    const summary = latestChanges({ changes: [{ turnCount: 1, runId: null, status: "ready", files: expectedFiles, completedAt: null }] })!;
    expect(summary).toMatchObject({ files: 3, additions: null, deletions: null });
    expect(changesWords(summary)).toBe("3 files; lines added not reported, removed not reported");
    expect(changesWords({ status: "ready", files: 1, additions: 3, deletions: null })).toBe("1 file; lines added 3, removed not reported");
    expect(changesWords({ status: "ready", files: 2, additions: 3, deletions: 1 })).toBe("2 files +3 −1");
    expect(
      latestChanges({
        changes: [{ turnCount: 1, runId: null, status: "ready", files: [expectedFiles[1]!, { ...expectedFiles[1]!, additions: maxSafe }], completedAt: null }],
      })!.additions,
    ).toBeNull();
  });
});

describe("usage reports", () => {
  const activity = (payload: object, turnId: string | null = null, id = "u1"): ThreadActivity => ({
    id,
    tone: "info",
    kind: "context-window.updated",
    summary: "Context window updated",
    payload,
    turnId,
    createdAt: `2026-12-04T10:00:0${id.slice(1)}.000Z`,
  });

  it("protocol 1: a bad figure costs that figure; two totals past the exact range are no total", () => {
    const facts = usageOfActivities([activity({ usedTokens: maxSafe, maxTokens: 1, inputTokens: word, outputTokens: 12, totalProcessedTokens: negative })])!;
    expect(facts).toMatchObject({ contextUsed: maxSafe, contextMax: 1, lastTurn: { input: null, output: 12 }, thread: null });
    const summed = usageOfActivities([
      activity({ totalProcessedTokens: maxSafe }, "turn-1", "u1"),
      activity({ totalProcessedTokens: maxSafe }, "turn-2", "u2"),
    ])!;
    expect(summed.thread).toBeNull();
  });

  it("protocol 2: a bad figure costs that figure; the turn's total and the thread's sum stay exact or are not reported", () => {
    const turn = (id: string, tokens: object) =>
      ProviderTurn.parse({
        id,
        status: "completed",
        completedAt: `2026-12-04T10:00:0${id}.000Z`,
        tokenUsage: { usedTokens: maxSafe, maxTokens: 1, inputTokens: huge, updatedAt: "2026-12-04T10:00:00.000Z" },
        turnTokenUsage: { usageStatus: "complete", ...tokens },
      });
    const one = usageOfProjection({ providerTurns: [turn("1", { inputTokens: unsafe, outputTokens: 12 })] })!;
    expect(one).toMatchObject({ contextUsed: maxSafe, contextMax: 1, lastTurn: { total: null, input: null, output: 12 } });
    const two = usageOfProjection({
      providerTurns: [turn("1", { inputTokens: maxSafe, outputTokens: 0 }), turn("2", { inputTokens: maxSafe, outputTokens: 0 })],
    })!;
    expect(two.lastTurn).toMatchObject({ total: maxSafe, input: maxSafe });
    expect(two.thread).toMatchObject({ total: null, input: null, output: 0 });
  });

  it("a fill over the window, or against a window under 1,000 tokens, is never shown as a fill (issue 43: 'context 900719925474099100 %')", () => {
    const tiny = usage({ contextUsed: maxSafe, contextMax: 1 });
    expect(contextReading(tiny)).toEqual({ kind: "not-reported", window: 1 });
    expect(contextWords(tiny)).toBe("context not reported (T3 says a window of 1 tokens)");
    expect(contextPercent(tiny)).toBeNull();
    const over = usage({ contextUsed: 300_000, contextMax: 200_000 });
    expect(contextWords(over)).toBe("over the window (T3 says 150 %)");
    expect(contextPercent(over)).toBeNull();
    // Neither is a fill the near-limit flag or its notification may quote.
    expect(nearContextLimit({ usage: over })).toBe(false);
    expect(nearContextLimit({ usage: tiny })).toBe(false);
    expect(nearContextLimit({ usage: usage({ contextUsed: 190_000 }) })).toBe(true);
    expect(contextWords(usage({ contextUsed: 200_000 }))).toBe("100 % of 200k; will not compact");
  });

  it("totals stay exact: an agent whose figure would take a sum past the exact range is not counted (issue 43: '18014398509M tokens')", () => {
    const agents = [
      agent("e/a", usage({ thread: thread(maxSafe) })),
      agent("e/b", usage({ thread: thread(maxSafe) })),
      agent("e/c", usage({ contextUsed: maxSafe, contextMax: 1, thread: thread(2_700) })),
    ];
    const { fleet } = usageTotals(agents, () => "studio");
    expect(fleet).toMatchObject({ tokens: maxSafe, reported: 1, agents: 3, context: 200_000, contextReported: 2 });
    expect(totalWords(fleet)).toBe("9007199255M tokens T3 reported over 1 of 3 agents");
    expect(contextTotalWords(fleet)).toBe("context now 200k over 2 of 3 agents");
  });

  it("sums of counts: exact, or not reported", () => {
    expect(sumCounts([1, 2, 3])).toBe(6);
    expect(sumCounts([])).toBe(0);
    expect(sumCounts([1, null])).toBeNull();
    expect(sumCounts([maxSafe, 1])).toBeNull();
  });
});

describe("a list's element that does not decode", () => {
  it("is left out and reported with its place, never failing the snapshot it is in (both protocols' shell snapshots)", () => {
    const one = decodeWith(ShellSnapshot, { snapshotSequence: 3, projects: [], threads: [{ id: 42 }] }, "shell snapshot");
    expect(one).toMatchObject({ ok: true, value: { threads: [] }, dropped: [{ what: "shell row", path: "[0].id" }] });
    const two = decodeWith(ShellSnapshotV2, { schemaVersion: 1, snapshotSequence: 3, projects: [], threads: [{ id: 42 }] }, "shell snapshot");
    expect(two).toMatchObject({ ok: true, value: { threads: [] }, dropped: [{ what: "shell row", path: "[0].id" }] });
    // Also on the value, for callers that pass only the value on.
    expect(droppedOf(two.ok && two.value)).toHaveLength(1);
    expect(droppedOf(decodeWith(ShellSnapshot, { snapshotSequence: 3, projects: [], threads: [] }, "shell snapshot"))).toEqual([]);
  });
});
