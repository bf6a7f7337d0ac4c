// A followed thread holds a bounded tail of its transcript, whatever its age (issue 43): thousands
// of turns leave the projection's held items and bytes bounded, while the facts read from the
// whole history (pending requests, how requests ended, subagents, capacity warnings, usage, the
// last turn's report) stay as they were, and a sent message can still be found by id.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { FOLLOWED_TAIL, OPEN_VIEW_TAIL, type TailLimits } from "../../fleet/transcript-tail";
import { heldBytes, longThread, recordedSnapshot } from "./long-thread.testkit";
import { ThreadProjection } from "./thread-projection";

const fixtures = process.env.T3_FIXTURES_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../../../shared/fixtures");
const recording = JSON.parse(readFileSync(resolve(fixtures, "t3-0.0.42/thread-completed.json"), "utf8")) as unknown;

describe("protocol 1: a followed thread holds a bounded tail of its transcript", () => {
  /** 3,000 turns with approvals, subagents and usage; the held size early on and at the end (trimming goes in batches). */
  function age(limits: TailLimits) {
    const feed = longThread(recording);
    const { projection } = feed;
    projection.retain(limits);
    let earlyMax = 0;
    let lateMax = 0;
    for (let index = 1; index <= 3_000; index++) {
      feed.turn(index, (turnId) => {
        // Turn 3 asks for an approval nobody answers; every 10th turn asks one that is answered.
        if (index === 3) feed.activity("req-open", "approval.requested", turnId, { requestId: "req-open", detail: "rm -rf build" }, "approval");
        if (index % 10 === 0) {
          feed.activity(`req-${index}`, "approval.requested", turnId, { requestId: `req-${index}`, detail: "git push" }, "approval");
          feed.activity(`req-${index}-ok`, "approval.resolved", turnId, { requestId: `req-${index}`, decision: "accept" }, "approval");
        }
        // A subagent started in turn 5 runs on; one of turn 7 failed.
        if (index === 5) feed.activity("task-long", "task.started", turnId, { taskId: "task-long", title: "Index the repository" });
        if (index === 7) {
          feed.activity("task-short", "task.started", turnId, { taskId: "task-short", title: "Lint" });
          feed.activity("task-short-end", "task.completed", turnId, { taskId: "task-short", status: "failed", summary: "eslint crashed" });
        }
      });
      if (index > 900 && index <= 1_000) earlyMax = Math.max(earlyMax, heldBytes(projection));
      if (index > 3_000 - 100) lateMax = Math.max(lateMax, heldBytes(projection));
    }
    return { projection, earlyMax, lateMax };
  }

  function expectHistoryFacts(projection: ReturnType<typeof age>["projection"]): void {
    const facts = projection.facts();
    expect(facts.pending.map((request) => request.requestId)).toEqual(["req-open"]);
    expect(facts.requestEnds?.["req-2990"]).toEqual({ how: "resolved", decision: "accept" });
    expect(facts.subagents).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: "task-long", status: "running", title: "Index the repository" }),
        expect.objectContaining({ id: "task-short", status: "failed", reason: "eslint crashed" }),
      ]),
    );
    // Every turn's processed tokens add up, also those whose reports left.
    expect(facts.usage?.thread?.total).toBe(3_000 * 10);
    expect(facts.usage?.contextUsed).toBe(4_000);
    expect(facts.lastTurnReported).toBe(true);
    expect(facts.changes?.at(-1)).toMatchObject({ turnCount: 3_000 });
  }

  it("open in a view: thousands of turns hold a bounded number of items and bytes; the history's facts stay", () => {
    const { projection, earlyMax, lateMax } = age(OPEN_VIEW_TAIL);
    const { items, anchored, earlier } = projection.transcript();
    expect(earlier).toBe(true);
    expect(items.length - anchored).toBeLessThanOrEqual(OPEN_VIEW_TAIL.items + OPEN_VIEW_TAIL.trimBatch);
    expect(projection.thread!.messages.length + projection.thread!.activities.length).toBeLessThanOrEqual(OPEN_VIEW_TAIL.items + OPEN_VIEW_TAIL.trimBatch + 40);
    expect(projection.thread!.checkpoints.length).toBeLessThanOrEqual(100);
    // The tail is the newest items, ending with the last turn's reply.
    expect(items.at(-1)).toMatchObject({ id: "reply-3000", type: "message" });
    // Bounded: two thousand more turns hold no more than the first thousand did (a rough byte count).
    expect(lateMax).toBeLessThan(400_000);
    expect(lateMax).toBeLessThanOrEqual(earlyMax * 1.02);
    expectHistoryFacts(projection);
    // Nothing the view shows was let go beyond its own tail.
    expect(projection.heldShort).toBe(false);
  });

  it("followed but not open: the same facts from a fraction of the bytes, and it says the view's tail was let go", () => {
    const open = age(OPEN_VIEW_TAIL);
    const followed = age(FOLLOWED_TAIL);
    expectHistoryFacts(followed.projection);
    expect(followed.projection.facts().pending).toEqual(open.projection.facts().pending);
    expect(followed.projection.facts().usage).toEqual(open.projection.facts().usage);
    expect(followed.projection.thread!.checkpoints.length).toBe(FOLLOWED_TAIL.checkpoints);
    expect(followed.lateMax).toBeLessThan(open.lateMax / 3);
    expect(followed.lateMax).toBeLessThanOrEqual(followed.earlyMax * 1.02);
    expect(followed.projection.heldShort).toBe(true);
    // Opened: the limits rise, but what was let go is not back (a fresh snapshot brings it: electron/fleet/threads.ts).
    followed.projection.retain(OPEN_VIEW_TAIL);
    expect(followed.projection.heldShort).toBe(true);
  });

  it("an open thread that is closed lets go of the view's tail at once", () => {
    const { projection } = age(OPEN_VIEW_TAIL);
    const before = heldBytes(projection);
    projection.retain(FOLLOWED_TAIL);
    const { items, anchored } = projection.transcript();
    expect(items.length - anchored).toBeLessThanOrEqual(FOLLOWED_TAIL.items);
    expect(anchored).toBeLessThanOrEqual(FOLLOWED_TAIL.anchors);
    expect(heldBytes(projection)).toBeLessThan(before / 4);
    expectHistoryFacts(projection);
  });

  it("a message that left the tail is still found by id, with its run's reply after it", () => {
    const feed = longThread(recording);
    const { projection } = feed;
    feed.message("sent-by-fleet", "user", null, "Steer: also update the changelog.");
    feed.session("running", "turn-long");
    for (let index = 0; index < 2 * OPEN_VIEW_TAIL.items; index++)
      feed.activity(`tool-${index}`, "tool.completed", "turn-long", { itemType: "command_execution", data: { command: "ls" } });
    feed.message("reply-long", "assistant", "turn-long", "Done, changelog updated.");
    feed.session("ready", null);
    for (let index = 0; index < 2 * OPEN_VIEW_TAIL.items; index++)
      feed.activity(`later-${index}`, "tool.completed", "turn-later", { itemType: "command_execution", data: { command: "ls" } });
    const { items, anchored } = projection.transcript();
    const messages = items.flatMap((item) => (item.type === "message" ? [item] : []));
    const index = messages.findIndex((message) => message.id === "sent-by-fleet");
    expect(index).toBeGreaterThanOrEqual(0);
    expect(index).toBeLessThan(anchored);
    expect(messages.slice(index + 1).find((message) => message.role === "assistant")).toMatchObject({ id: "reply-long", runId: "turn-long", streaming: false });
  });

  it("a thread (re)followed is cut to its tail at once: it holds no more than after its next trim, whatever its age", () => {
    // Ten turns of history, all held (an open view's tail): more items than the followed tail holds.
    const history = longThread(recording);
    for (let index = 1; index <= 10; index++) history.turn(index);
    expect(history.projection.items().length).toBeGreaterThan(FOLLOWED_TAIL.items);

    const followed = new ThreadProjection();
    followed.retain(FOLLOWED_TAIL);
    followed.applySnapshot({ ...recordedSnapshot(recording), thread: structuredClone(history.projection.thread!) });
    expect(followed.items().length).toBeLessThanOrEqual(FOLLOWED_TAIL.items);
    const { items } = followed.transcript();
    expect(followed.thread!.checkpoints.length).toBeLessThanOrEqual(FOLLOWED_TAIL.checkpoints);
    expect(items.at(-1)).toMatchObject({ id: "reply-10", type: "message" });
    // The facts read as from the whole history.
    expect(followed.facts().changes?.at(-1)).toMatchObject({ turnCount: 10 });
    expect(followed.facts().usage).toEqual(history.projection.facts().usage);
  });
});
