// A protocol-1 thread of any age, fed turn by turn as T3 0.0.42 streams one (the events decoded as
// the fleet decodes them), for the retention test and bench/thread-tail.bench.ts (issue 43); and the next event for any projection test.
import { decodeWith } from "../decode";
import { type OrchestrationEvent, OrchestrationEventSchema, type ThreadDetailSnapshot, ThreadStreamItemSchema } from "./schemas";
import { ThreadProjection } from "./thread-projection";

/** A recorded thread stream item (parsed JSON) as the snapshot it is. */
export function recordedSnapshot(recording: unknown): ThreadDetailSnapshot {
  const decoded = decodeWith(ThreadStreamItemSchema, recording, "recorded thread");
  if (!decoded.ok || decoded.value.kind !== "snapshot") throw new Error("the recording is not a thread snapshot");
  return decoded.value.snapshot;
}

/** The projection's thread's next event, decoded as the fleet decodes T3's (its sequence follows the last applied). */
export function nextThreadEvent(projection: ThreadProjection, type: string, payload: object, occurredAt = "2026-11-30T00:30:00.000Z"): OrchestrationEvent {
  const threadId = projection.thread!.id;
  const sequence = projection.lastSequence + 1;
  const decoded = decodeWith(
    OrchestrationEventSchema,
    {
      sequence,
      eventId: `e-${sequence}`,
      aggregateKind: "thread",
      aggregateId: threadId,
      type,
      occurredAt,
      commandId: null,
      payload: { threadId, ...payload },
    },
    type,
  );
  if (!decoded.ok) throw new Error(decoded.error.message);
  return decoded.value as OrchestrationEvent;
}

/** Server time `step` seconds after the thread's start. */
const at = (step: number) => new Date(Date.UTC(2026, 10, 30, 1) + step * 1000).toISOString();

export class Feed {
  step = 0;
  constructor(readonly projection: ThreadProjection) {}

  send(type: string, payload: object): void {
    this.projection.applyEvent(nextThreadEvent(this.projection, type, payload, at(this.step)));
  }

  message(id: string, role: "user" | "assistant", turnId: string | null, text: string): void {
    const time = at(++this.step);
    this.send("thread.message-sent", { messageId: id, role, text, turnId, streaming: false, createdAt: time, updatedAt: time });
  }

  activity(id: string, kind: string, turnId: string, payload: object, tone = "tool"): void {
    this.send("thread.activity-appended", { activity: { id, tone, kind, summary: kind, payload, turnId, createdAt: at(++this.step) } });
  }

  session(status: "running" | "ready", turnId: string | null): void {
    const session = {
      threadId: this.projection.thread!.id,
      status,
      providerName: "codex",
      runtimeMode: "full-access",
      activeTurnId: turnId,
      lastError: null,
      updatedAt: at(++this.step),
    };
    this.send("thread.session-set", { session });
  }

  /** One whole turn: a message, its session, tool calls, a token report, a reply and a checkpoint. */
  turn(index: number, extra: (turnId: string) => void = () => {}): void {
    const turnId = `turn-${index}`;
    this.message(`user-${index}`, "user", null, `Please do step ${index} of the plan, carefully.`);
    this.session("running", turnId);
    this.activity(`cmd-${index}`, "tool.started", turnId, { itemType: "command_execution", data: { command: `npm test -- ${index}` } });
    this.activity(`cmd-${index}-done`, "tool.completed", turnId, { itemType: "command_execution", data: { command: `npm test -- ${index}`, exitCode: 0 } });
    extra(turnId);
    this.activity(`usage-${index}`, "context-window.updated", turnId, { usedTokens: 1_000 + index, maxTokens: 200_000, totalProcessedTokens: 10 }, "info");
    this.message(`reply-${index}`, "assistant", turnId, `Step ${index} is done: every test passes and nothing else changed.`);
    this.send("thread.turn-diff-completed", {
      turnId,
      checkpointTurnCount: index,
      checkpointRef: `ref-${index}`,
      status: "ready",
      files: [{ path: `src/step-${index}.ts`, kind: "modified", additions: 1, deletions: 1 }],
      assistantMessageId: `reply-${index}`,
      completedAt: at(++this.step),
    });
    this.session("ready", null);
  }
}

/** What the projection holds, in bytes of JSON: a rough size of its retained state. */
export function heldBytes(projection: ThreadProjection): number {
  return JSON.stringify(projection.thread).length + JSON.stringify(projection.transcript()).length;
}

/** A projection of a recorded thread (shared/fixtures/t3-0.0.42/thread-completed.json, parsed), with a feed for more turns. */
export function longThread(recording: unknown): Feed {
  const projection = new ThreadProjection();
  projection.applySnapshot(recordedSnapshot(recording));
  return new Feed(projection);
}
