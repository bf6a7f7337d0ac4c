// A protocol-2 thread the fleet starts following is cut to its tail at once (issue 43): a thread
// (re)followed holds no more than it does after its next trim, whatever its age, so the details the
// fleet keeps of the threads it followed do not grow with their age (the soak's heap did).
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { FOLLOWED_TAIL, OPEN_VIEW_TAIL } from "../../../../shared/fleet/transcript-tail";
import { Thread } from "../../../../shared/t3/protocol2/long-thread.testkit";
import { retainLimits } from "../../../../shared/t3/protocol2/retention";
import { V2Thread } from "./followed-thread";

const fixtures = process.env.T3_FIXTURES_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../../../../shared/fixtures");
const recording = (name: string) => JSON.parse(readFileSync(resolve(fixtures, `t3-v2dev/${name}`), "utf8")) as unknown;

describe("a followed protocol-2 thread's snapshot", () => {
  it("is cut to the followed tail at once: 15 runs of history hold what the tail holds, and the facts read alike", () => {
    // The thread's history as T3 keeps it: 15 whole runs, every list held (an open view's tail).
    const history = new Thread({ plain: recording("02-turn-plain.json"), approval: recording("03-approval.json"), failed: recording("05-fail.json") });
    retainLimits(history.carried, OPEN_VIEW_TAIL);
    for (let index = 1; index <= 15; index++) history.run(index);
    expect(history.projection.runs.length).toBeGreaterThanOrEqual(15);

    const followed = new V2Thread("thread");
    followed.retain(FOLLOWED_TAIL);
    followed.takeSnapshot(structuredClone(history.projection));
    const held = followed.projection!;
    expect(held.runs.length).toBeLessThanOrEqual(FOLLOWED_TAIL.settledEntries);
    expect(held.messages.length).toBeLessThanOrEqual(FOLLOWED_TAIL.settledEntries);
    expect(held.providerTurns.length).toBeLessThanOrEqual(FOLLOWED_TAIL.settledEntries);
    expect(held.checkpoints.length).toBeLessThanOrEqual(FOLLOWED_TAIL.checkpoints);
    expect(held.turnItems.length).toBeLessThanOrEqual(FOLLOWED_TAIL.items);

    const { facts } = followed.detail();
    expect(facts.changes?.length).toBeLessThanOrEqual(FOLLOWED_TAIL.checkpoints);
    expect(facts.changes?.at(-1)).toMatchObject({ turnCount: 15 });
    expect(facts.messageOutcomes?.["msg-15"]).toEqual({ runId: "run-15", how: "started", queuePosition: null });
    expect(facts.messageOutcomes?.["msg-3"]).toEqual({ runId: "run-3", how: "started", queuePosition: null });
    expect(facts.usage?.thread).toEqual({ total: 15 * 15, input: 15 * 10, cachedInput: 15 * 2, output: 15 * 5, reasoning: 15 });
  });
});
