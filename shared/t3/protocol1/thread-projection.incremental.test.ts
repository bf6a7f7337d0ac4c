// The projection's incremental bookkeeping (items kept in order, facts derived from activities
// cached) must read exactly like a projection rebuilt from the same thread state, whatever events
// arrive: in order or not, streaming, replaced activities, session changes.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeWith } from "../decode";
import { type ThreadDetailSnapshot, ThreadStreamItemSchema } from "./schemas";
import { nextThreadEvent } from "./long-thread.testkit";
import { ThreadProjection } from "./thread-projection";

const fixtures = process.env.T3_FIXTURES_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../../../shared/fixtures");

function recordedSnapshot(name: string): ThreadDetailSnapshot {
  const decoded = decodeWith(ThreadStreamItemSchema, JSON.parse(readFileSync(resolve(fixtures, name), "utf8")), name);
  if (!decoded.ok || decoded.value.kind !== "snapshot") throw new Error(`${name}: not a thread snapshot`);
  return decoded.value.snapshot;
}

const event = nextThreadEvent;

/** A projection that knows nothing incremental: the same thread state, read from scratch. */
function rebuilt(projection: ThreadProjection): ThreadProjection {
  const fresh = new ThreadProjection();
  fresh.applySnapshot({ snapshotSequence: projection.lastSequence, thread: structuredClone(projection.thread!) });
  return fresh;
}

const at = (second: number) => `2026-11-30T00:${String(30 + Math.floor(second / 60)).padStart(2, "0")}:${String(second % 60).padStart(2, "0")}.000Z`;

type Step =
  | { kind: "message"; id: number; role: "user" | "assistant"; second: number; text: string; streaming: boolean }
  | { kind: "activity"; id: number; second: number; sequence: number | null; activityKind: string; tone: "info" | "tool" | "error" | "approval" }
  | { kind: "session"; status: "running" | "ready"; turn: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("message" as const),
    id: fc.integer({ min: 0, max: 5 }),
    role: fc.constantFrom("user" as const, "assistant" as const),
    second: fc.integer({ min: 0, max: 90 }),
    text: fc.string({ maxLength: 4 }),
    streaming: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("activity" as const),
    id: fc.integer({ min: 0, max: 8 }),
    second: fc.integer({ min: 0, max: 90 }),
    sequence: fc.option(fc.integer({ min: 0, max: 40 })),
    activityKind: fc.constantFrom(
      "tool.started",
      "approval.requested",
      "approval.resolved",
      "runtime.warning",
      "context-window.updated",
      "task.started",
      "task.completed",
      "provider.turn.start.failed",
    ),
    tone: fc.constantFrom("info" as const, "tool" as const, "error" as const, "approval" as const),
  }),
  fc.record({ kind: fc.constant("session" as const), status: fc.constantFrom("running" as const, "ready" as const), turn: fc.integer({ min: 1, max: 3 }) }),
);

function apply(projection: ThreadProjection, s: Step): void {
  if (s.kind === "message") {
    projection.applyEvent(
      event(projection, "thread.message-sent", {
        messageId: `m-${s.id}`,
        role: s.role,
        text: s.text,
        turnId: "turn-1",
        streaming: s.streaming,
        createdAt: at(s.second),
        updatedAt: at(s.second + 1),
      }),
    );
  } else if (s.kind === "activity") {
    const payload = {
      requestId: `r-${s.id % 3}`,
      taskId: `task-${s.id % 2}`,
      message: `m${s.id}`,
      itemType: s.id % 2 ? "command_execution" : "file_change",
      data: { command: "ls", path: "a.ts" },
    };
    const activity = {
      id: `act-${s.id}`,
      tone: s.tone,
      kind: s.activityKind,
      summary: s.activityKind,
      payload,
      turnId: "turn-1",
      createdAt: at(s.second),
      ...(s.sequence !== null && { sequence: s.sequence }),
    };
    projection.applyEvent(event(projection, "thread.activity-appended", { activity }));
  } else {
    const session = {
      threadId: projection.thread!.id,
      status: s.status,
      providerName: "codex",
      runtimeMode: "full-access",
      activeTurnId: s.status === "running" ? `turn-${s.turn}` : null,
      lastError: null,
      updatedAt: at(60 + s.turn),
    };
    projection.applyEvent(event(projection, "thread.session-set", { session }));
  }
}

describe("protocol 1: incremental thread projection", () => {
  for (const fixture of ["t3-0.0.42/thread-completed.json", "t3-0.0.42/thread-approval-pending.json"]) {
    it(`reads like a rebuilt projection after every event (${fixture})`, () => {
      const snapshot = recordedSnapshot(fixture);
      fc.assert(
        fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
          const projection = new ThreadProjection();
          projection.applySnapshot(snapshot);
          for (const s of steps) {
            apply(projection, s);
            const reference = rebuilt(projection);
            expect(projection.items()).toEqual(reference.items());
            expect({ ...projection.facts(), lastEventAt: null }).toEqual(reference.facts());
          }
        }),
        { numRuns: 150 },
      );
    });
  }

  it("a streaming token rebuilds only its own message: every other item keeps its identity", () => {
    const projection = new ThreadProjection();
    projection.applySnapshot(recordedSnapshot("t3-0.0.42/thread-completed.json"));
    const base = { messageId: "a-2", role: "assistant", turnId: "turn-2", createdAt: "2026-11-30T00:30:00.000Z", updatedAt: "2026-11-30T00:30:00.000Z" };
    projection.applyEvent(event(projection, "thread.message-sent", { ...base, text: "Hel", streaming: true }));
    const before = projection.items();
    projection.applyEvent(event(projection, "thread.message-sent", { ...base, text: "lo", streaming: true }));
    const after = projection.items();
    expect(after).toHaveLength(before.length);
    expect(after.at(-1)).toMatchObject({ id: "a-2", text: "Hello" });
    expect(after.slice(0, -1).every((item, index) => item === before[index])).toBe(true);
    expect(projection.items()).toBe(after); // nothing changed since: the same array
  });
});
