// A review mark made for an agent that leaves while the mark is being saved is not kept (issue 43
// point 1: nothing is held for an agent that is gone): the save finishes after `removed` ran, so
// the mark would otherwise stay in the model and on disk for as long as the service runs.
import { describe, expect, it } from "vitest";
import { oneMachine } from "./one-machine.testkit";
import type { Registry } from "./registry";
import { Reviews } from "./reviews";

describe("a review mark while its agent leaves", () => {
  it("is refused and leaves no mark in the model or the registry", async () => {
    const clock = new Date(2026, 10, 29, 10, 7).getTime();
    const { model, row: base } = oneMachine(clock);
    model.setReviewsListed(true);
    model.applyFleetSnapshot("env-a", [{ ...base, threadId: "leaving" }]);
    // Its thread read: the turn that ended changed a file.
    const file = { path: "src/parser.ts", kind: "modified", additions: 3, deletions: 1 } as const;
    model.setThreadDetail("env-a", "leaving", {
      pending: [],
      lastErrorText: null,
      hiddenFailure: null,
      subagents: [],
      activeRunId: null,
      run: null,
      lastEventAt: null,
      changes: [{ turnCount: 1, runId: null, status: "ready", files: [file], completedAt: base.updatedAt }],
    });
    expect(model.agent("env-a/leaving")?.review).toBe(true);

    // A registry whose save of the mark finishes only after the agent has left, as a slow disk would.
    const marks = new Map<string, number>();
    let finishSave: (() => void) | undefined;
    const saved = new Promise<void>((resolve) => (finishSave = resolve));
    let saving: (() => void) | undefined;
    const savingStarted = new Promise<void>((resolve) => (saving = resolve));
    const registry = {
      reviews: marks,
      setReviewed: async (agentKey: string, turnCount: number | null) => {
        if (turnCount === null) return void marks.delete(agentKey);
        marks.set(agentKey, turnCount);
        saving!();
        await saved;
      },
    } as unknown as Registry;
    const reviews = new Reviews(model, registry);
    // As the service tells it (./service.ts).
    model.subscribe((change) => change.removed.forEach((key) => reviews.removed(key)));

    const marking = reviews.review("env-a/leaving");
    await savingStarted;
    model.applyFleetSnapshot("env-a", []);
    finishSave!();

    await expect(marking).rejects.toMatchObject({ kind: "not-found" });
    expect(model.reviewedTurn("env-a/leaving")).toBeNull();
    expect(marks.has("env-a/leaving")).toBe(false);
  });
});
