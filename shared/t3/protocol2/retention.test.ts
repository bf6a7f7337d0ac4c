// A followed protocol-2 thread holds a bounded tail (issue 43): thousands of runs, each with its
// messages, items, provider turn, checkpoint and now and then a request, leave the projection's
// lists and bytes bounded (trimmed as the adapter trims it, electron/fleet/t3/protocol2/followed-thread.ts),
// while pending requests, request ends, message outcomes, subagents, the last error and the
// thread's tokens read as they would from the whole history. Entities are shaped like the real
// engine's, from its recordings (shared/fixtures/t3-v2dev).
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { FOLLOWED_TAIL, OPEN_VIEW_TAIL, type TailLimits, trimPoint } from "../../fleet/transcript-tail";
import { detailFactsOf, transcriptOfThread } from "./facts";
import { retainLimits } from "./retention";
import { Thread, heldBytes } from "./long-thread.testkit";

const fixtures = process.env.T3_FIXTURES_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../../../shared/fixtures");
const recording = (name: string) => JSON.parse(readFileSync(resolve(fixtures, `t3-v2dev/${name}`), "utf8")) as unknown;
const recordings = { plain: recording("02-turn-plain.json"), approval: recording("03-approval.json"), failed: recording("05-fail.json") };

describe("protocol 2: a followed thread holds a bounded tail of its projection", () => {
  /** 2,500 runs with requests, a subagent and an error; the held size early on and at the end (trimming goes in batches). */
  function age(limits: TailLimits) {
    const thread = new Thread(recordings);
    retainLimits(thread.carried, limits);
    // The largest held size over a window of runs early on, and over the last one (trimming goes in batches).
    let earlyMax = 0;
    let lateMax = 0;
    for (let index = 1; index <= 2_500; index++) {
      thread.run(index, (runId) => {
        if (index === 3) thread.request("req-open", runId, "pending", index * 10 + 2);
        if (index % 10 === 0) thread.request(`req-${index}`, runId, "resolved", index * 10 + 2);
        if (index === 5)
          // No recording has a subagent item: a recorded item made one, by the contract's fields.
          thread.item("user_message", {
            type: "subagent",
            id: "item-subagent",
            runId,
            subagentId: "sub-long",
            origin: "provider_native",
            providerInstanceId: "codex",
            childThreadId: null,
            prompt: "Index the repository",
            result: null,
            title: "Indexer",
            status: "running",
            ordinal: index * 10 + 3,
          });
        if (index === 6) thread.item("error", { id: "item-error", runId, ordinal: index * 10 + 4, status: "failed" }, thread.failed);
      });
      if (index > 900 && index <= 1_000) earlyMax = Math.max(earlyMax, heldBytes(thread));
      if (index > 2_500 - 100) lateMax = Math.max(lateMax, heldBytes(thread));
    }
    return { thread, earlyMax, lateMax };
  }

  /** What the fleet reads of the recent history, whatever the limits. */
  function expectRecentFacts(thread: Thread): void {
    const { projection, carried } = thread;
    const facts = detailFactsOf(projection, new Set(), null, carried);
    expect(facts.pending.map((request) => request.requestId)).toEqual(["req-open"]);
    expect(facts.requestEnds?.["req-2490"]).toEqual({ how: "resolved", decision: "accept" });
    expect(facts.messageOutcomes?.["msg-2500"]).toEqual({ runId: "run-2500", how: "started", queuePosition: null });
    expect(facts.subagents).toEqual([expect.objectContaining({ id: "sub-long", status: "running", title: "Indexer" })]);
    expect(facts.lastErrorText).not.toBeNull();
    // The thread's tokens add up every provider turn, also those that left.
    expect(facts.usage?.thread).toEqual({ total: 2_500 * 15, input: 2_500 * 10, cachedInput: 2_500 * 2, output: 2_500 * 5, reasoning: 2_500 });
    expect(facts.changes?.at(-1)).toMatchObject({ turnCount: 2_500 });
  }

  it("open in a view: thousands of runs hold bounded lists and bytes; the history's facts stay", () => {
    const { thread, earlyMax, lateMax } = age(OPEN_VIEW_TAIL);
    const { projection, carried } = thread;
    expectRecentFacts(thread);
    expect(carried.heldShort).toBe(false);
    expect(projection.turnItems.length).toBeLessThanOrEqual(OPEN_VIEW_TAIL.items + OPEN_VIEW_TAIL.trimBatch + 2);
    for (const list of [projection.runs, projection.providerTurns, projection.runtimeRequests, projection.messages, projection.checkpoints])
      expect(list.length).toBeLessThanOrEqual(300);
    expect(lateMax).toBeLessThanOrEqual(earlyMax * 1.02);

    const { items, anchored, earlier } = transcriptOfThread(projection, true, carried);
    expect(earlier).toBe(true);
    expect(items.at(-1)).toMatchObject({ id: "reply-2500", type: "message", role: "assistant" });
    const facts = detailFactsOf(projection, new Set(), null, carried);
    expect(facts.pending.map((request) => request.requestId)).toEqual(["req-open"]);
    expect(facts.requestEnds?.["req-2490"]).toEqual({ how: "resolved", decision: "accept" });
    expect(facts.requestEnds?.["req-2100"]).toEqual({ how: "resolved", decision: "accept" });
    // Every message's outcome, also of runs long gone (a delivery reads it by message id).
    expect(facts.messageOutcomes?.["msg-2200"]).toEqual({ runId: "run-2200", how: "started", queuePosition: null });
    expect(facts.messageOutcomes?.["msg-2500"]).toEqual({ runId: "run-2500", how: "started", queuePosition: null });
    expect(facts.subagents).toEqual([expect.objectContaining({ id: "sub-long", status: "running", title: "Indexer" })]);
    expect(facts.lastErrorText).not.toBeNull();
    // The thread's tokens add up every provider turn, also those that left.
    expect(facts.usage?.thread).toEqual({ total: 2_500 * 15, input: 2_500 * 10, cachedInput: 2_500 * 2, output: 2_500 * 5, reasoning: 2_500 });
    expect(facts.changes?.at(-1)).toMatchObject({ turnCount: 2_500 });
    // A message that left the tail is still found by id, with its run's reply after it.
    const messages = items.flatMap((item) => (item.type === "message" ? [item] : []));
    const index = messages.findIndex((message) => message.id === "msg-2280");
    expect(index).toBeGreaterThanOrEqual(0);
    expect(index).toBeLessThan(anchored);
    expect(messages.slice(index + 1).find((message) => message.role === "assistant" && message.runId === "run-2280")).toMatchObject({ streaming: false });
  });

  it("followed but not open: the same recent facts from a fraction of the bytes, and it says the view's tail was let go", () => {
    const open = age(OPEN_VIEW_TAIL);
    const followed = age(FOLLOWED_TAIL);
    expectRecentFacts(followed.thread);
    expect(followed.thread.projection.checkpoints.length).toBeLessThanOrEqual(FOLLOWED_TAIL.checkpoints + FOLLOWED_TAIL.trimBatch);
    expect(followed.lateMax).toBeLessThan(open.lateMax / 3);
    expect(followed.lateMax).toBeLessThanOrEqual(followed.earlyMax * 1.02);
    expect(followed.thread.carried.heldShort).toBe(true);
  });

  it("followed: a thread's held size levels off within its first turns and stays level, with at most a few checkpoints", () => {
    const thread = new Thread(recordings);
    retainLimits(thread.carried, FOLLOWED_TAIL);
    const held: number[] = [];
    let mostCheckpoints = 0;
    for (let index = 1; index <= 200; index++) {
      thread.run(index);
      held.push(heldBytes(thread));
      mostCheckpoints = Math.max(mostCheckpoints, thread.projection.checkpoints.length);
    }
    // Each list is cut at its own trim point: two checkpoints held, cut at four (one slack for every
    // list let a followed thread hold 42 checkpoints and 48 runs, and fill to them over ~40 turns).
    expect(mostCheckpoints).toBeLessThanOrEqual(trimPoint(FOLLOWED_TAIL.checkpoints, FOLLOWED_TAIL));
    const level = held.slice(40);
    expect(Math.max(...level)).toBeLessThanOrEqual(Math.min(...level) * 1.2);
    expect(Math.max(...level)).toBeLessThanOrEqual(held[29]! * 1.2);
  });
});
