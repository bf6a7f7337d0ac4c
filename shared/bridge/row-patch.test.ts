import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TurnChanges, UsageFacts } from "../fleet/facts";
import type { AgentView } from "../fleet/types";
import { agentView } from "../fleet/views.testkit";
import { applyRowPatch, rowPatch } from "./row-patch";

const usage = (contextUsed: number): UsageFacts => ({
  contextUsed,
  contextMax: 258_400,
  compactsAutomatically: true,
  lastTurn: { total: contextUsed, input: 1_000, cachedInput: 500, output: 200, reasoning: null },
  thread: { total: contextUsed * 3, input: 3_000, cachedInput: 1_500, output: 600, reasoning: null },
  reportedAt: "2026-12-05T02:00:00.000Z",
});

const changes = (turns: number): TurnChanges[] =>
  Array.from({ length: turns }, (_, index) => ({
    turnCount: index + 1,
    runId: `turn-${index + 1}`,
    status: "ready",
    files: Array.from({ length: 12 }, (_, file) => ({ path: `src/feature-${index}/module-${file}.ts`, kind: "modified", additions: 12, deletions: 3 })),
    completedAt: "2026-12-05T01:00:00.000Z",
  })) as TurnChanges[];

/** A row with its changes-and-usage summary, as a followed thread's row has it. */
const busy = (patch: Partial<AgentView> = {}) => agentView("t1", "running", { changes: changes(4), usage: usage(40_000), ...patch });

describe("a row update carries only the fields that changed", () => {
  it("applying the patch reproduces the new row, whatever changed, was added or went", () => {
    const field = fc.constantFrom<keyof AgentView>("title", "status", "reason", "stalled", "queuePosition", "lastActivityAt", "branch", "review");
    fc.assert(
      fc.property(fc.dictionary(field, fc.oneof(fc.string(), fc.boolean(), fc.constant(null))), fc.boolean(), fc.boolean(), (edits, dropUsage, moreChanges) => {
        const before = busy();
        const after = { ...before, ...edits } as AgentView;
        if (dropUsage) delete after.usage;
        if (moreChanges) after.changes = changes(5);
        const patch = rowPatch(before, after);
        if (patch === null) expect(after).toEqual(before);
        else expect(applyRowPatch(before, patch)).toEqual(after);
        // The old row is left as it was (the page's store may still show it this frame).
        expect(before).toEqual(busy());
      }),
    );
  });

  it("leaves the changes-and-usage summary out when it did not change, and says nothing when nothing did", () => {
    const before = busy();
    expect(rowPatch(before, busy({ changes: changes(4), usage: usage(40_000) }))).toBeNull();
    const patch = rowPatch(before, busy({ status: "idle", lastKnownStatus: "idle", activeRunId: null }))!;
    expect(Object.keys(patch.set).sort()).toEqual(["activeRunId", "lastKnownStatus", "status"]);
    expect(JSON.stringify(patch).length).toBeLessThan(JSON.stringify(before).length / 10);
  });

  it("a new usage report sends the usage, not the turns' changes", () => {
    const patch = rowPatch(busy(), busy({ usage: usage(41_000), lastActivityAt: "t2" }))!;
    expect(Object.keys(patch.set).sort()).toEqual(["lastActivityAt", "usage"]);
    expect(JSON.stringify(patch).length).toBeLessThan(512);
  });
});
