// A protocol-2 thread of any age, fed run by run in the shapes the real V2 engine recorded
// (shared/fixtures/t3-v2dev) and trimmed as the adapter trims it
// (electron/fleet/t3/protocol2/followed-thread.ts), for the retention test and
// bench/thread-tail.bench.ts (issue 43).
import { decodeWith } from "../decode";
import { transcriptOfThread, trimThread } from "./facts";
import { applyThreadEvent } from "./projection";
import { type Carried, emptyCarried } from "./retention";
import { type DomainEvent, type ThreadProjection, ThreadStreamItemV2Schema } from "./schemas";

type Raw = Record<string, unknown> & { payload: Record<string, unknown> };

/** The first snapshot and the last event of each kind (turn items by their type) in a recording. */
export interface Recording {
  snapshot: Record<string, unknown>;
  events: Map<string, Raw>;
}

function recorded(recording: unknown): Recording {
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
  walk(recording);
  return { snapshot: snapshot!, events };
}

/** The recordings (parsed) the entities are shaped after: shared/fixtures/t3-v2dev/02-turn-plain.json, 03-approval.json and 05-fail.json. */
export interface Recordings {
  plain: unknown;
  approval: unknown;
  failed: unknown;
}
const at = (step: number) => new Date(Date.UTC(2026, 11, 1, 11) + step * 1000).toISOString();

export class Thread {
  projection: ThreadProjection;
  carried: Carried = emptyCarried();
  sequence = 0;
  step = 0;

  readonly plain: Recording;
  readonly approval: Recording;
  readonly failed: Recording;

  constructor(recordings: Recordings) {
    this.plain = recorded(recordings.plain);
    this.approval = recorded(recordings.approval);
    this.failed = recorded(recordings.failed);
    const decoded = decodeWith(ThreadStreamItemV2Schema, this.plain.snapshot, "snapshot");
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

  item(type: string, fields: Record<string, unknown>, from = this.plain): void {
    const time = at(++this.step);
    this.apply(from.events.get(`item:${type}`), { startedAt: time, updatedAt: time, completedAt: time, status: "completed", ...fields });
  }

  /** One whole run: the message, its run, a command, the reply, the provider turn's tokens and a checkpoint. */
  run(index: number, extra: (runId: string) => void = () => {}): void {
    const runId = `run-${index}`;
    const messageId = `msg-${index}`;
    const time = at(++this.step);
    this.apply(this.plain.events.get("message.updated"), { id: messageId, runId, text: `Step ${index}, please.`, createdAt: time, updatedAt: time });
    const run = { id: runId, ordinal: index, userMessageId: messageId, requestedAt: time, startedAt: time };
    this.apply(this.plain.events.get("run.updated"), { ...run, status: "running", completedAt: null });
    this.item("user_message", { id: `item-user-${index}`, runId, messageId, text: `Step ${index}, please.`, ordinal: index * 10 });
    this.item("command_execution", { id: `item-cmd-${index}`, runId, input: "npm test", exitCode: 0, ordinal: index * 10 + 1 }, this.approval);
    extra(runId);
    this.item("assistant_message", {
      id: `item-reply-${index}`,
      runId,
      messageId: `reply-${index}`,
      text: `Step ${index} is done.`,
      streaming: false,
      ordinal: index * 10 + 8,
    });
    this.apply(this.plain.events.get("provider-turn.updated"), {
      id: `provider-turn-${index}`,
      status: "completed",
      startedAt: time,
      completedAt: at(++this.step),
      turnTokenUsage: { usageStatus: "complete", inputTokens: 10, outputTokens: 5, cachedInputTokens: 2, reasoningTokens: 1 },
    });
    this.apply(this.plain.events.get("checkpoint.captured"), {
      id: `checkpoint-${index}`,
      runId,
      appRunOrdinal: index,
      status: "ready",
      capturedAt: at(this.step),
    });
    this.apply(this.plain.events.get("run.updated"), { ...run, status: "completed", completedAt: at(++this.step) });
  }

  request(id: string, runId: string, status: "pending" | "resolved", ordinal: number): void {
    const time = at(++this.step);
    this.apply(this.approval.events.get("runtime-request.updated"), {
      id,
      runId,
      status,
      createdAt: time,
      resolvedAt: status === "resolved" ? time : null,
      ...(status === "resolved" && { decision: "accept" }),
    });
    this.item("approval_request", { id: `item-${id}`, runId, requestId: id, ordinal, status: status === "pending" ? "pending" : "completed" }, this.approval);
  }
}

export function heldBytes(thread: Thread): number {
  return JSON.stringify(thread.projection).length + JSON.stringify(transcriptOfThread(thread.projection, true, thread.carried)).length;
}
