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
import { TRANSCRIPT_TAIL_ITEMS, TRANSCRIPT_TRIM_BATCH } from "../../fleet/transcript-tail";
import { decodeWith } from "../decode";
import { detailFactsOf, transcriptOfThread, trimThread } from "./facts";
import { applyThreadEvent } from "./projection";
import { type Carried, emptyCarried } from "./retention";
import { type DomainEvent, type ThreadProjection, ThreadStreamItemV2Schema } from "./schemas";

const fixtures = process.env.T3_FIXTURES_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../../../shared/fixtures");

type Raw = Record<string, unknown> & { payload: Record<string, unknown> };

/** The first snapshot and the last event of each kind (turn items by their type) in a recording. */
function recorded(name: string): { snapshot: Record<string, unknown>; events: Map<string, Raw> } {
  const events = new Map<string, Raw>();
  let snapshot: Record<string, unknown> | undefined;
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (typeof value !== "object" || value === null) return;
    const item = value as Record<string, unknown>;
    if (item.kind === "snapshot" && item.projection && !snapshot) snapshot = item;
    if (item.kind === "event" && item.event) {
      const event = item.event as Raw;
      events.set(event.type === "turn-item.updated" ? `item:${String(event.payload.type)}` : String(event.type), event);
    }
    Object.values(item).forEach(walk);
  };
  walk(JSON.parse(readFileSync(resolve(fixtures, `t3-v2dev/${name}`), "utf8")));
  return { snapshot: snapshot!, events };
}

const plain = recorded("02-turn-plain.json");
const approval = recorded("03-approval.json");
const failed = recorded("05-fail.json");
const at = (step: number) => new Date(Date.UTC(2026, 11, 1, 11) + step * 1000).toISOString();

class Thread {
  projection: ThreadProjection;
  carried: Carried = emptyCarried();
  sequence = 0;
  step = 0;

  constructor() {
    const decoded = decodeWith(ThreadStreamItemV2Schema, plain.snapshot, "snapshot");
    if (!decoded.ok || decoded.value.kind !== "snapshot") throw new Error("no snapshot");
    this.projection = trimThread(decoded.value.projection, this.carried);
  }

  /** A recorded event of `kind`, its payload changed by `payload`, applied and trimmed as the adapter does. */
  apply(template: Raw | undefined, payload: Record<string, unknown>): void {
    if (!template) throw new Error("no such recorded event");
    const raw = { kind: "event", sequence: ++this.sequence, event: { ...template, occurredAt: at(this.step), payload: { ...template.payload, ...payload } } };
    const decoded = decodeWith(ThreadStreamItemV2Schema, raw, "event");
    if (!decoded.ok || decoded.value.kind !== "event")
      throw new Error(decoded.ok ? "not an event" : `${String(template.type)}: ${decoded.error.path} ${decoded.error.message}`);
    this.projection = trimThread(applyThreadEvent(this.projection, decoded.value.event as DomainEvent), this.carried);
  }

  item(type: string, fields: Record<string, unknown>, from = plain): void {
    const time = at(++this.step);
    this.apply(from.events.get(`item:${type}`), { startedAt: time, updatedAt: time, completedAt: time, status: "completed", ...fields });
  }

  /** One whole run: the message, its run, a command, the reply, the provider turn's tokens and a checkpoint. */
  run(index: number, extra: (runId: string) => void = () => {}): void {
    const runId = `run-${index}`;
    const messageId = `msg-${index}`;
    const time = at(++this.step);
    this.apply(plain.events.get("message.updated"), { id: messageId, runId, text: `Step ${index}, please.`, createdAt: time, updatedAt: time });
    const run = { id: runId, ordinal: index, userMessageId: messageId, requestedAt: time, startedAt: time };
    this.apply(plain.events.get("run.updated"), { ...run, status: "running", completedAt: null });
    this.item("user_message", { id: `item-user-${index}`, runId, messageId, text: `Step ${index}, please.`, ordinal: index * 10 });
    this.item("command_execution", { id: `item-cmd-${index}`, runId, input: "npm test", exitCode: 0, ordinal: index * 10 + 1 }, approval);
    extra(runId);
    this.item("assistant_message", {
      id: `item-reply-${index}`,
      runId,
      messageId: `reply-${index}`,
      text: `Step ${index} is done.`,
      streaming: false,
      ordinal: index * 10 + 8,
    });
    this.apply(plain.events.get("provider-turn.updated"), {
      id: `provider-turn-${index}`,
      status: "completed",
      startedAt: time,
      completedAt: at(++this.step),
      turnTokenUsage: { usageStatus: "complete", inputTokens: 10, outputTokens: 5, cachedInputTokens: 2, reasoningTokens: 1 },
    });
    this.apply(plain.events.get("checkpoint.captured"), { id: `checkpoint-${index}`, runId, appRunOrdinal: index, status: "ready", capturedAt: at(this.step) });
    this.apply(plain.events.get("run.updated"), { ...run, status: "completed", completedAt: at(++this.step) });
  }

  request(id: string, runId: string, status: "pending" | "resolved", ordinal: number): void {
    const time = at(++this.step);
    this.apply(approval.events.get("runtime-request.updated"), {
      id,
      runId,
      status,
      createdAt: time,
      resolvedAt: status === "resolved" ? time : null,
      ...(status === "resolved" && { decision: "accept" }),
    });
    this.item("approval_request", { id: `item-${id}`, runId, requestId: id, ordinal, status: status === "pending" ? "pending" : "completed" }, approval);
  }
}

function heldBytes(thread: Thread): number {
  return JSON.stringify(thread.projection).length + JSON.stringify(transcriptOfThread(thread.projection, true, thread.carried)).length;
}

describe("protocol 2: a followed thread holds a bounded tail of its projection", () => {
  it("thousands of runs hold bounded lists and bytes; the history's facts stay", () => {
    const thread = new Thread();
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
        if (index === 6) thread.item("error", { id: "item-error", runId, ordinal: index * 10 + 4, status: "failed" }, failed);
      });
      if (index > 900 && index <= 1_000) earlyMax = Math.max(earlyMax, heldBytes(thread));
      if (index > 2_500 - 100) lateMax = Math.max(lateMax, heldBytes(thread));
    }
    const { projection, carried } = thread;
    expect(projection.turnItems.length).toBeLessThanOrEqual(TRANSCRIPT_TAIL_ITEMS + TRANSCRIPT_TRIM_BATCH + 2);
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
});
