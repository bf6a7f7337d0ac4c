// Protocol-1 thread streams → thread detail: recorded 0.0.42 snapshots and the events that follow.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { decodeWith } from "../decode";
import { type OrchestrationEvent, OrchestrationEventSchema, ThreadStreamItemSchema } from "./schemas";
import { ThreadProjection } from "./thread-projection";

const fixtures = process.env.T3_FIXTURES_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../../../shared/fixtures");

function recordedProjection(name: string): ThreadProjection {
  const decoded = decodeWith(ThreadStreamItemSchema, JSON.parse(readFileSync(resolve(fixtures, name), "utf8")), name);
  if (!decoded.ok || decoded.value.kind !== "snapshot") throw new Error(`${name}: not a thread snapshot`);
  const projection = new ThreadProjection();
  projection.applySnapshot(decoded.value.snapshot);
  return projection;
}

function event(projection: ThreadProjection, type: string, payload: unknown): OrchestrationEvent {
  const threadId = projection.thread!.id;
  const decoded = decodeWith(
    OrchestrationEventSchema,
    {
      sequence: projection.lastSequence + 1,
      eventId: `e-${projection.lastSequence + 1}`,
      aggregateKind: "thread",
      aggregateId: threadId,
      type,
      occurredAt: "2026-11-30T00:30:00.000Z",
      commandId: null,
      payload: { threadId, ...(payload as object) },
    },
    type,
  );
  if (!decoded.ok) throw new Error(decoded.error.message);
  return decoded.value;
}

describe("protocol 1: thread stream → detail facts", () => {
  it("a pending Codex approval offers the decisions the real Codex took (accept, for the session, decline, cancel); the command shows as an item", () => {
    const projection = recordedProjection("t3-0.0.42/thread-approval-pending.json");
    const facts = projection.facts();
    expect(facts.pending).toEqual([
      expect.objectContaining({
        kind: "approval",
        requestKind: "command",
        detail: "touch fake-approved.txt",
        decisions: ["accept", "acceptForSession", "decline", "cancel"].map((decision) => expect.objectContaining({ decision })),
      }),
    ]);
    expect(projection.items()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: "message", role: "user", text: "Run a command that needs approval" }),
        expect.objectContaining({ type: "command", command: "touch fake-approved.txt", status: "running" }),
      ]),
    );
    projection.markAnswered(facts.pending[0]!.requestId);
    expect(projection.facts().pending).toEqual([]);
  });

  it("questions keep their options, multi-select and free-text flags", () => {
    const projection = recordedProjection("t3-0.0.42/thread-completed.json");
    projection.applyEvent(
      event(projection, "thread.activity-appended", {
        activity: {
          id: "ask-1",
          tone: "approval",
          kind: "user-input.requested",
          summary: "Question",
          turnId: null,
          createdAt: "2026-11-30T00:30:00.000Z",
          payload: {
            requestId: "req-1",
            questions: [
              {
                id: "env",
                header: "Target",
                question: "Where to deploy?",
                options: [{ label: "staging", description: "safe" }, { label: "prod" }],
                multiSelect: true,
              },
              { id: "why", question: "Why now?" },
            ],
          },
        },
      }),
    );
    const [request] = projection.facts().pending;
    expect(request).toMatchObject({
      kind: "input",
      requestId: "req-1",
      questions: [
        {
          id: "env",
          header: "Target",
          options: [
            { label: "staging", description: "safe", value: "staging" },
            { label: "prod", description: null, value: "prod" },
          ],
          multiSelect: true,
          allowsFreeText: false,
        },
        { id: "why", options: [], multiSelect: false, allowsFreeText: true },
      ],
    });
  });

  it("assistant text is cumulative in the items while it streams, and the closing message completes the turn", () => {
    const projection = recordedProjection("t3-0.0.42/thread-completed.json");
    const before = projection.items().filter((item) => item.type === "message").length;
    const base = { messageId: "a-2", role: "assistant", turnId: "turn-2", createdAt: "2026-11-30T00:30:00.000Z", updatedAt: "2026-11-30T00:30:00.000Z" };
    projection.applyEvent(event(projection, "thread.message-sent", { ...base, text: "Hel", streaming: true }));
    projection.applyEvent(event(projection, "thread.message-sent", { ...base, text: "lo", streaming: true }));
    expect(projection.items().filter((item) => item.type === "message")).toHaveLength(before + 1);
    expect(projection.items().at(-1)).toMatchObject({ type: "message", text: "Hello", streaming: true, runId: "turn-2" });
    projection.applyEvent(event(projection, "thread.message-sent", { ...base, text: "", streaming: false }));
    expect(projection.items().at(-1)).toMatchObject({ text: "Hello", streaming: false });
  });

  it("an approval that lists its own decisions (T3 0.0.42 does for OpenCode) offers those, with T3's labels and warnings", () => {
    const projection = recordedProjection("t3-0.0.42/thread-completed.json");
    projection.applyEvent(
      event(projection, "thread.activity-appended", {
        activity: {
          id: "act-opencode",
          tone: "approval",
          kind: "approval.requested",
          summary: "Command approval requested",
          turnId: null,
          createdAt: "2026-11-30T00:30:00.000Z",
          payload: {
            requestId: "per_1",
            requestKind: "command",
            detail: "echo hi",
            options: [
              { decision: "accept", label: "Allow once" },
              {
                decision: "acceptForSession",
                label: "Allow for workspace",
                warning: "Applies to matching requests in other OpenCode sessions in this workspace.",
              },
              { decision: "decline", label: "Deny" },
              { decision: "not-a-decision", label: "ignored" },
            ],
          },
        },
      }),
    );
    expect(projection.facts().pending[0]).toMatchObject({
      requestId: "per_1",
      decisions: [
        { decision: "accept", label: "Allow once", warning: null },
        { decision: "acceptForSession", label: "Allow for workspace", warning: "Applies to matching requests in other OpenCode sessions in this workspace." },
        { decision: "decline", label: "Deny", warning: null },
      ],
    });
  });

  it("a native subagent keeps the name it started with; a failed one says why (Claude Code 2.1.328's Agent tool under 0.0.42)", () => {
    const projection = recordedProjection("t3-0.0.42/thread-completed.json");
    const task = (id: string, kind: string, tone: string, payload: Record<string, unknown>) =>
      projection.applyEvent(
        event(projection, "thread.activity-appended", {
          activity: {
            id,
            tone,
            kind,
            summary: kind === "task.started" ? "local_agent task started" : "Task failed",
            turnId: null,
            createdAt: "2026-11-30T00:30:00.000Z",
            payload,
          },
        }),
      );
    task("t-1", "task.started", "info", { taskId: "a1", taskType: "local_agent", detail: "Scripted failing subtask", title: "Scripted failing subtask" });
    expect(projection.facts().subagents).toEqual([expect.objectContaining({ id: "a1", status: "running", title: "Scripted failing subtask", reason: null })]);
    const why = "Agent terminated early due to an API error: API Error: 400 Scripted subagent failure";
    task("t-2", "task.updated", "error", { taskId: "a1", status: "failed", title: "Scripted failing subtask", error: why });
    task("t-3", "task.completed", "error", { taskId: "a1", status: "failed", title: "Scripted failing subtask", summary: why, detail: why });
    expect(projection.facts().subagents).toEqual([
      expect.objectContaining({ id: "a1", status: "failed", title: "Scripted failing subtask", kind: "local_agent", reason: why }),
    ]);
  });
});
