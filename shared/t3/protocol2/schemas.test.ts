// Tolerance of the protocol-2 decoders and the projection rules a fleet user relies on.
import { describe, expect, it } from "vitest";
import { decodeWith } from "../decode";
import { answersProblem, agentStateOfRow, applyThreadEvent, pendingRequestCards } from "./projection";
import { DomainEventSchema, ShellStreamItemV2Schema, ThreadProjection, ThreadStreamItemV2Schema, TurnItemSchema } from "./schemas";
import { ShellRowV2, ThreadShellV2 } from "./shell-row";

const at = "2026-10-03T10:00:00.000Z";
const row = {
  id: "t1",
  projectId: "p1",
  title: "Task",
  providerInstanceId: "codex",
  modelSelection: { instanceId: "codex", model: "gpt-5.4" },
  runtimeMode: "full-access",
  interactionMode: "default",
  branch: null,
  worktreePath: null,
  lineage: { parentThreadId: null, relationshipToParent: null, rootThreadId: "t1" },
  forkedFrom: null,
  activeProviderThreadId: null,
  latestRunId: null,
  activeRunId: null,
  status: "idle",
  pendingRuntimeRequest: null,
  latestVisibleMessage: null,
  latestUserMessageAt: null,
  hasActionableProposedPlan: false,
  itemCount: 0,
  visibleItemCount: 0,
  createdAt: at,
  updatedAt: at,
  archivedAt: null,
  settledOverride: null,
  settledAt: null,
  deletedAt: null,
  createdBy: "user",
  creationSource: "web",
};
const itemBase = {
  id: "i1",
  threadId: "t1",
  runId: "r1",
  nodeId: "n1",
  parentItemId: null,
  ordinal: 0,
  status: "pending",
  title: null,
  startedAt: at,
  completedAt: null,
  updatedAt: at,
};
const projection = {
  thread: { ...row },
  runs: [],
  subagents: [],
  providerSessions: [],
  runtimeRequests: [],
  messages: [],
  turnItems: [],
  updatedAt: at,
};

describe("protocol-2 subagent items as T3's V2 engine sends them", () => {
  it("decodes a delegated task's turn item whose progress is null (the engine sends null; its contract says optional string)", () => {
    // Seen from T3's V2 engine in the withdrawn real-engine suite's delegated-task scenario (docs/t3-protocols.md).
    const item = {
      id: "turn-item:delegated-task:cmd-1",
      threadId: "thread-1",
      runId: "run:thread:thread-1:ordinal:1",
      nodeId: "node:delegated-task:cmd-1",
      providerThreadId: "provider-thread:provider:codex:native-thread:pending",
      providerTurnId: null,
      nativeItemRef: null,
      parentItemId: null,
      ordinal: 1000002,
      status: "running",
      title: "Summary",
      startedAt: "2026-12-02T08:32:13.877Z",
      completedAt: null,
      updatedAt: "2026-12-02T08:32:13.877Z",
      type: "subagent",
      subagentId: "node:delegated-task:cmd-1",
      origin: "app_owned",
      driver: "codex",
      providerInstanceId: "codex",
      childThreadId: "thread:delegated-task:cmd-1",
      prompt: "Write the summary",
      progress: null,
      result: null,
    };
    const decoded = decodeWith(TurnItemSchema, item, "turn item");
    expect(decoded.ok, decoded.ok ? "" : JSON.stringify(decoded.error)).toBe(true);
  });
});

describe("protocol-2 decoders", () => {
  it("drop unknown fields and turn unknown enum values into 'unknown'", () => {
    const decoded = decodeWith(
      ThreadShellV2,
      { ...row, status: "hibernating", futureField: 1, lineage: { ...row.lineage, relationshipToParent: "clone" } },
      "row",
    );
    expect(decoded.ok && decoded.value.status).toBe("unknown");
    expect(decoded.ok && decoded.value.lineage.relationshipToParent).toBe("unknown");
    expect(decoded.ok && "futureField" in decoded.value).toBe(false);
  });

  it("name the path of the first bad field; a bad row is left out of its snapshot, the snapshot kept (issue 43)", () => {
    const decoded = decodeWith(
      ShellStreamItemV2Schema,
      { kind: "snapshot", snapshot: { schemaVersion: 3, snapshotSequence: 1, projects: [], threads: [{ ...row, lineage: null }, row] } },
      "shell stream item",
    );
    expect(decoded.ok && decoded.value.kind === "snapshot" && decoded.value.snapshot.threads).toHaveLength(1);
    expect(decoded.ok && decoded.dropped).toEqual([expect.objectContaining({ what: "shell row", path: "[0].lineage" })]);
    const bad = decodeWith(
      ShellStreamItemV2Schema,
      { kind: "snapshot", snapshot: { schemaVersion: 3, snapshotSequence: "1", projects: [], threads: [] } },
      "item",
    );
    expect(!bad.ok && bad.error.path).toBe("snapshot.snapshotSequence");
  });

  it("accept a later schemaVersion, missing archivedThreads and unknown stream item kinds", () => {
    const decoded = decodeWith(
      ShellStreamItemV2Schema,
      { kind: "snapshot", snapshot: { schemaVersion: 7, snapshotSequence: 1, projects: [], threads: [row] } },
      "item",
    );
    expect(decoded.ok && decoded.value.kind === "snapshot" && decoded.value.snapshot.archivedThreads).toEqual([]);
    expect(decodeWith(ShellStreamItemV2Schema, { kind: "project.renamed", sequence: 4 }, "item")).toEqual({
      ok: true,
      value: { kind: "unknown", rawKind: "project.renamed" },
    });
  });

  it("keep unknown turn items and event types with their common fields, and both thread snapshot forms", () => {
    const plan = decodeWith(TurnItemSchema, { ...itemBase, type: "proposed_plan", planId: "x", markdown: "# Plan", streaming: false }, "item");
    expect(plan.ok && plan.value.type).toBe("other");
    const event = decodeWith(DomainEventSchema, { id: "e", type: "plan.updated", threadId: "t1", occurredAt: at, payload: { anything: true } }, "event");
    expect(event.ok && event.value.type).toBe("other");
    const later = decodeWith(
      ThreadStreamItemV2Schema,
      { kind: "snapshot", snapshotSequence: 5, projection, historyCursor: "c", hasMoreHistory: true, latestLocalTurnOrdinal: 3 },
      "item",
    );
    expect(later.ok).toBe(true);
  });

  it("decode failure classes and approval decisions as open enums (later servers add usage_limit)", () => {
    const error = decodeWith(
      TurnItemSchema,
      { ...itemBase, type: "error", failure: { class: "usage_limit", message: "Limit", code: null, retryable: true, resetAt: at } },
      "item",
    );
    expect(error.ok && error.value.type === "error" && error.value.failure.class).toBe("usage_limit");
    const approval = decodeWith(
      TurnItemSchema,
      {
        ...itemBase,
        type: "approval_request",
        requestId: "q",
        requestKind: "command",
        options: [{ decision: { acceptWithExecpolicyAmendment: {} }, label: "Amend" }],
      },
      "item",
    );
    expect(approval.ok && approval.value.type === "approval_request" && approval.value.options?.[0]?.decision).toBe("unknown");
  });
});

describe("protocol-2 projection rules", () => {
  const base = ThreadProjection.parse(projection);

  it("a pending request blocks the row whatever the run status says", () => {
    const blocked = ShellRowV2.parse({ ...row, status: "running", pendingRuntimeRequest: { id: "q", kind: "auth_refresh", createdAt: at } });
    expect(agentStateOfRow(blocked)).toEqual({ kind: "blocked", on: "auth", requestId: "q", since: at });
    expect(agentStateOfRow(ShellRowV2.parse({ ...row, status: "running", activityRunStatus: "waiting" }))).toEqual({ kind: "working", phase: "waiting" });
  });

  it("shows an approval seen only as a turn item, with every decision when the item lists none", () => {
    const item = TurnItemSchema.parse({ ...itemBase, type: "approval_request", requestId: "q", requestKind: "file-change", prompt: "Edit a.ts?" });
    const cards = pendingRequestCards(applyThreadEvent(base, { id: "e", type: "turn-item.updated", threadId: "t1", occurredAt: at, payload: item }));
    expect(cards).toEqual([
      {
        kind: "approval",
        requestId: "q",
        requestKind: "file-change",
        prompt: "Edit a.ts?",
        decisions: [
          { decision: "accept", label: "Allow once" },
          { decision: "acceptForSession", label: "Allow for this session" },
          { decision: "decline", label: "Deny" },
          { decision: "cancel", label: "Deny and stop" },
        ],
        createdAt: at,
      },
    ]);
  });

  it("drops a card once its request is resolved, even while the item still says pending", () => {
    const item = TurnItemSchema.parse({ ...itemBase, type: "approval_request", requestId: "q", requestKind: "command" });
    const request = {
      id: "q",
      nodeId: "n1",
      kind: "command",
      status: "resolved",
      responseCapability: { type: "live", providerSessionId: "s" },
      createdAt: at,
      resolvedAt: at,
      decision: "accept",
    };
    const withItem = applyThreadEvent(base, { id: "e1", type: "turn-item.updated", threadId: "t1", occurredAt: at, payload: item });
    const resolved = applyThreadEvent(
      withItem,
      DomainEventSchema.parse({ id: "e2", type: "runtime-request.updated", threadId: "t1", occurredAt: at, payload: request }),
    );
    expect(pendingRequestCards(resolved)).toEqual([]);
  });

  it("checks answers: required, single-select and free text", () => {
    const questions = [
      {
        id: "a",
        header: "A",
        question: "Pick",
        options: [
          { label: "x", description: "" },
          { label: "y", description: "" },
        ],
        required: true,
      },
      { id: "b", header: "B", question: "Why?", options: [], allowCustomAnswer: true },
    ];
    expect(answersProblem(questions, { b: "because" })).toBe('"A" needs an answer.');
    expect(answersProblem(questions, { a: ["x", "y"] })).toBe('"A" takes one answer.');
    expect(answersProblem(questions, { a: "z" })).toBe('"A" does not take a free-text answer.');
    expect(answersProblem(questions, { a: "x", b: null })).toBeUndefined();
  });
});
