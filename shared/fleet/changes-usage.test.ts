// Changes and usage views: words for rows and the agent view, the near-limit flag, and totals.
import { describe, expect, it } from "vitest";
import type { TurnChanges, UsageFacts } from "./facts";
import type { AgentView } from "./types";
import {
  changesWords,
  compactCount,
  contextTotalWords,
  contextWords,
  finishedWords,
  latestChanges,
  nearContextLimit,
  tokenWords,
  totalWords,
  usageTotals,
} from "./changes-usage";

const turn = (turnCount: number, status: TurnChanges["status"], files: [number, number][]): TurnChanges => ({
  turnCount,
  runId: null,
  status,
  files: files.map(([additions, deletions], index) => ({ path: `f${index}`, kind: "modified", additions, deletions })),
  completedAt: null,
});

const usage = (fields: Partial<UsageFacts>): UsageFacts => ({
  contextUsed: 160_208,
  contextMax: 258_400,
  compactsAutomatically: true,
  lastTurn: null,
  thread: { total: 160_208, input: 150_000, cachedInput: 20_000, output: 10_208, reasoning: 64 },
  reportedAt: "2026-12-01T10:00:00.000Z",
  ...fields,
});

const agent = (fields: Partial<AgentView>): AgentView =>
  ({ key: "e/t", environmentId: "e", projectId: "p", projectTitle: "t3-fleet", workspaceRoot: null, ...fields }) as AgentView;

describe("changes words", () => {
  it("sums the latest turn: 3 files +40 −2", () => {
    const summary = latestChanges({
      changes: [
        turn(1, "ready", [[1, 1]]),
        turn(2, "ready", [
          [30, 1],
          [8, 1],
          [2, 0],
        ]),
      ],
    })!;
    expect(summary).toEqual({ turnCount: 2, status: "ready", files: 3, additions: 40, deletions: 2 });
    expect(changesWords(summary)).toBe("3 files +40 −2");
  });

  it("says one file, none, and a missing or failed checkpoint", () => {
    expect(changesWords(latestChanges({ changes: [turn(1, "ready", [[3, 0]])] })!)).toBe("1 file +3 −0");
    expect(changesWords(latestChanges({ changes: [turn(1, "ready", [])] })!)).toBe("no files changed");
    expect(changesWords(latestChanges({ changes: [turn(1, "missing", [])] })!)).toBe("no checkpoint");
    expect(changesWords(latestChanges({ changes: [turn(1, "error", [])] })!)).toBe("checkpoint failed");
    expect(latestChanges({})).toBeNull();
  });
});

describe("usage words", () => {
  it("context fill with compaction, or not reported", () => {
    expect(contextWords(usage({}))).toBe("62 % of 258k; compacts automatically");
    expect(contextWords(usage({ compactsAutomatically: false }))).toBe("62 % of 258k; will not compact");
    expect(contextWords(usage({ compactsAutomatically: null }))).toBe("62 % of 258k; compaction not reported");
    expect(contextWords(usage({ contextMax: null }))).toBe("context not reported");
    expect(contextWords(undefined)).toBe("context not reported");
  });

  it("tokens with what was reported, never a zero for what was not", () => {
    expect(tokenWords({ total: 12_300, input: 10_000, cachedInput: 2_000, output: 1_250, reasoning: null })).toBe(
      "12.3k tokens (input 10k, cached 2k, output 1.3k)",
    );
    expect(tokenWords({ total: null, input: 900, cachedInput: null, output: null, reasoning: null })).toBe("total not reported (input 900)");
    expect(tokenWords(null)).toBe("not reported");
    expect(compactCount(2_400_000)).toBe("2.4M");
  });

  it("flags an agent near its limit only when it will not compact, at the set share", () => {
    expect(nearContextLimit({ usage: usage({ contextUsed: 245_480, compactsAutomatically: false }) })).toBe(true);
    expect(nearContextLimit({ usage: usage({ contextUsed: 245_480, compactsAutomatically: true }) })).toBe(false);
    expect(nearContextLimit({ usage: usage({ contextUsed: 245_480, compactsAutomatically: null }) })).toBe(false);
    expect(nearContextLimit({ usage: usage({ compactsAutomatically: false }) })).toBe(false);
    expect(nearContextLimit({ usage: usage({ compactsAutomatically: false }) }, 60)).toBe(true);
    expect(nearContextLimit({})).toBe(false);
  });
});

describe("usage totals", () => {
  it("per machine, per project across machines (as By project groups them) and for the fleet, with the span of the reports", () => {
    const totals = usageTotals(
      [
        agent({
          key: "a/1",
          environmentId: "a",
          usage: usage({ thread: { total: 1_000, input: null, cachedInput: null, output: null, reasoning: null }, reportedAt: "2026-12-01T09:00:00.000Z" }),
        }),
        agent({
          key: "b/1",
          environmentId: "b",
          projectTitle: "T3-Fleet ",
          usage: usage({ thread: { total: 500, input: null, cachedInput: null, output: null, reasoning: null }, reportedAt: "2026-12-01T11:00:00.000Z" }),
        }),
        agent({ key: "b/2", environmentId: "b", projectTitle: "docs" }),
      ],
      (id) => `machine ${id}`,
    );
    expect(totals.fleet).toEqual({
      id: "fleet",
      label: "Fleet",
      tokens: 1_500,
      reported: 2,
      agents: 3,
      context: 320_416,
      contextReported: 2,
      from: "2026-12-01T09:00:00.000Z",
      to: "2026-12-01T11:00:00.000Z",
    });
    expect(totals.machines.map((machine) => [machine.label, machine.tokens, machine.reported, machine.agents])).toEqual([
      ["machine a", 1_000, 1, 1],
      ["machine b", 500, 1, 2],
    ]);
    expect(totals.projects.map((project) => [project.id, project.tokens, project.reported])).toEqual([
      ["t3-fleet", 1_500, 2],
      ["docs", 0, 0],
    ]);
    expect(totalWords(totals.fleet)).toBe("1.5k tokens T3 reported over 2 of 3 agents");
    expect(contextTotalWords(totals.fleet)).toBe("context now 320k over 2 of 3 agents");
    expect(totalWords(totals.projects[1]!)).toBe("T3 reported no tokens for the agent");
    expect(contextTotalWords(totals.projects[1]!)).toBe("no context fill reported");
  });

  it("sums the tokens T3 reported, never a context size (issue 39: a 95 % fill was summed as 245k tokens used)", () => {
    const nearlyFull = agent({
      key: "a/full",
      usage: usage({ contextUsed: 245_480, thread: { total: 2_700, input: null, cachedInput: null, output: null, reasoning: null } }),
    });
    const contextOnly = agent({ key: "a/ctx", usage: usage({ contextUsed: 12_000, thread: null }) });
    const quiet = agent({ key: "a/none" });
    const { fleet } = usageTotals([nearlyFull, contextOnly, quiet], () => "studio");
    expect(fleet).toMatchObject({ tokens: 2_700, reported: 1, agents: 3, context: 257_480, contextReported: 2 });
    expect(totalWords(fleet)).toBe("2.7k tokens T3 reported over 1 of 3 agents");
    expect(totalWords(usageTotals([quiet, contextOnly], () => "studio").fleet)).toBe("T3 reported no tokens for any of 2 agents");
  });
});

describe("finished with changes", () => {
  it("names how many files the latest turn changed", () => {
    expect(
      finishedWords(
        agent({
          status: "idle",
          changes: [
            turn(1, "ready", [[1, 0]]),
            turn(2, "ready", [
              [3, 1],
              [2, 2],
              [1, 0],
            ]),
          ],
        }),
      ),
    ).toBe("finished: 3 files changed");
  });
});
