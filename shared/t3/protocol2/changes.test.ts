// Protocol 2: checkpoints and provider turns → the neutral changes and usage facts.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { decodeWith } from "../decode";
import type { CheckpointV2, ProviderTurn } from "./schemas";
import { CheckpointV2 as CheckpointSchema, ProviderTurn as ProviderTurnSchema, ThreadProjection } from "./schemas";
import { turnChangesOfProjection, usageOfProjection } from "./changes";
import { detailFactsOf } from "./facts";

const checkpoint = (fields: Partial<Record<keyof CheckpointV2, unknown>>): CheckpointV2 =>
  CheckpointSchema.parse({
    id: `checkpoint-${String(fields.appRunOrdinal)}`,
    threadId: "t",
    scopeId: "scope",
    runId: fields.appRunOrdinal ? `run-${String(fields.appRunOrdinal)}` : null,
    nodeId: "node",
    parentCheckpointId: null,
    ordinalWithinScope: 0,
    appRunOrdinal: null,
    ref: "refs/t3/orchestration-v2/checkpoints/x/ordinal/0",
    status: "ready",
    files: [],
    capturedAt: "2026-12-01T10:42:16.055Z",
    ...fields,
  });

const providerTurn = (fields: Record<string, unknown>): ProviderTurn =>
  ProviderTurnSchema.parse({
    id: "turn",
    providerThreadId: "pt",
    nodeId: "n",
    runAttemptId: null,
    ordinal: 1,
    status: "completed",
    startedAt: null,
    completedAt: null,
    ...fields,
  });

describe("protocol 2: changes from checkpoints", () => {
  it("counts only app runs' checkpoints (not a scope's baseline, not a rolled-back one), in turn order", () => {
    const changes = turnChangesOfProjection({
      checkpoints: [
        checkpoint({ appRunOrdinal: null, status: "missing" }),
        checkpoint({ appRunOrdinal: 2, files: [{ path: "src/b.ts", kind: "added", additions: 5, deletions: 0 }] }),
        checkpoint({ appRunOrdinal: 1, status: "missing" }),
        checkpoint({ appRunOrdinal: 3, status: "stale" }),
      ],
    });
    expect(changes).toEqual([
      { turnCount: 1, runId: "run-1", status: "missing", files: [], completedAt: "2026-12-01T10:42:16.055Z" },
      {
        turnCount: 2,
        runId: "run-2",
        status: "ready",
        files: [{ path: "src/b.ts", kind: "added", additions: 5, deletions: 0 }],
        completedAt: "2026-12-01T10:42:16.055Z",
      },
    ]);
  });

  it("reads an error checkpoint as error", () => {
    expect(turnChangesOfProjection({ checkpoints: [checkpoint({ appRunOrdinal: 1, status: "error" })] })[0]!.status).toBe("error");
  });
});

describe("protocol 2: usage from provider turns", () => {
  it("is not reported when no provider turn reports tokens (the recorded engine predates them)", () => {
    expect(usageOfProjection({ providerTurns: [providerTurn({})] })).toBeNull();
  });

  it("takes the context fill from the newest live report, the last turn's tokens, and sums the thread's", () => {
    const usage = usageOfProjection({
      providerTurns: [
        providerTurn({
          id: "p1",
          completedAt: "2026-12-01T10:00:00.000Z",
          tokenUsage: { usedTokens: 1000, maxTokens: 258400, inputTokens: 900, outputTokens: 100, updatedAt: "2026-12-01T10:00:00.000Z" },
          turnTokenUsage: { usageScope: "main_agent", usageStatus: "complete", inputTokens: 900, outputTokens: 100, cachedInputTokens: 0, hasSubagents: false },
        }),
        providerTurn({
          id: "p2",
          completedAt: "2026-12-01T11:00:00.000Z",
          tokenUsage: { usedTokens: 3000, maxTokens: 258400, updatedAt: "2026-12-01T11:00:00.000Z" },
          turnTokenUsage: { usageScope: "main_agent", usageStatus: "complete", inputTokens: 1800, outputTokens: 200, hasSubagents: false },
        }),
      ],
    });
    expect(usage).toEqual({
      contextUsed: 3000,
      contextMax: 258400,
      compactsAutomatically: null,
      lastTurn: { total: 2000, input: 1800, cachedInput: null, output: 200, reasoning: null },
      thread: { total: 3000, input: 2700, cachedInput: null, output: 300, reasoning: null },
      reportedAt: "2026-12-01T11:00:00.000Z",
    });
  });

  it("reads a figure that does not decode as not reported, without losing the provider turn", () => {
    const turn = providerTurn({ tokenUsage: { usedTokens: -5 }, status: "running" });
    expect(turn.status).toBe("running");
    expect(usageOfProjection({ providerTurns: [turn] })).toBeNull();
  });
});

describe("protocol 2: a run that changed a file in a git workspace, as T3's real V2 engine with Codex sent it", () => {
  // Recorded in this project by integration/realt3/changes.v2.real.test.ts (T3_RECORD_CHANGES=1).
  const file = resolve(dirname(fileURLToPath(import.meta.url)), "../../../fixtures/t3-v2dev-changes/projection-with-checkpoint.json");
  const decoded = decodeWith(ThreadProjection, JSON.parse(readFileSync(file, "utf8")), "projection");
  if (!decoded.ok) throw new Error(decoded.error.message);
  const projection = decoded.value;

  it("has the run's checkpoint with its file; the baseline (ready, no run) is not a turn's", () => {
    expect(turnChangesOfProjection(projection)).toEqual([
      {
        turnCount: 1,
        runId: "run:thread:thread-de051b07-085f-4f02-8b19-9e0dbf222f5e:ordinal:1",
        status: "ready",
        files: [{ path: "scripted-change.txt", kind: "modified", additions: 1, deletions: 0 }],
        completedAt: "2026-12-02T07:58:23.484Z",
      },
    ]);
  });

  it("reports no token figures (the engine predates them): not reported", () => {
    expect(usageOfProjection(projection)).toBeNull();
  });

  it("has its last turn fully reported once its run completed (a run leaves waiting after its checkpoint), and not while it waits", () => {
    expect(detailFactsOf(projection, new Set(), null).lastTurnReported).toBe(true);
    const waiting = { ...projection, runs: projection.runs.map((run) => ({ ...run, status: "waiting" as const })) };
    expect(detailFactsOf(waiting, new Set(), null).lastTurnReported).toBe(false);
  });
});
