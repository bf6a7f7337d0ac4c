// Protocol 2 → facts: the shared status scenarios (shared/fleet/status-scenarios.testkit.ts) built
// from V2 shell rows and projections, so both protocols give the same statuses for the same
// situations; rows come from the v2 simulator's engine and are varied the way a V2 server varies them.
import { describe, expect, it } from "vitest";
import { type ScenarioInput, type StatusSituation, runStatusScenarios } from "../../../../shared/fleet/status-scenarios.testkit";
import { V2Engine } from "../../../../sim/protocol2/engine";
import { type ShellState, shellFromSnapshot } from "../../../../shared/t3/protocol2/projection";
import { ShellSnapshotV2, ThreadProjection } from "../../../../shared/t3/protocol2/schemas";
import type { ShellRow } from "../../../../shared/t3/protocol2/shell-row";
import { agentFactsOfRow, detailFactsOf } from "../../../../shared/t3/protocol2/facts";

const at = "2026-11-30T00:20:00.000Z";
const engine = new V2Engine({ tickMs: 1 });
engine.addProject({ id: "p1", title: "Repo", workspaceRoot: "/repo", defaultModelSelection: null, scripts: [] });
const state = engine.createThread({ threadId: "t1", projectId: "p1", title: "Task", provider: "codex", createdAt: at });
const snapshot = ShellSnapshotV2.parse(engine.shellSnapshot());
const shell: ShellState = shellFromSnapshot(snapshot);
const baseRow = snapshot.threads[0]!;
const features = { settle: true, snooze: true };

/** The engine's row with wire fields overridden, decoded as a row of the shell's active list. */
function row(overrides: Record<string, unknown>): ShellRow {
  const wire = { ...engine.shellRow(state), ...overrides };
  const decoded = ShellSnapshotV2.parse({ ...engine.shellSnapshot(), threads: [wire] });
  return shellFromSnapshot(decoded).threads.get(wire.id as string)!;
}

function facts(overrides: Record<string, unknown>): ScenarioInput["facts"] {
  return [agentFactsOfRow(row(overrides), shell, features)];
}

const runId = "run:thread:t1:ordinal:1";
const active = { activeRunId: runId, latestRunId: runId, latestRunRequestedAt: at, latestRunStartedAt: at };
const running = { ...active, status: "running", activityRunStatus: "running" };
const pending = (kind: string) => ({ ...running, pendingRuntimeRequest: { id: "request-1", kind, createdAt: at } });

/** A projection whose active run has a provider error still retrying (capacity). */
function capacityDetail() {
  const projection = ThreadProjection.parse({
    ...engine.projection(state),
    runs: [
      {
        id: runId,
        threadId: "t1",
        ordinal: 1,
        providerInstanceId: "codex",
        modelSelection: { instanceId: "codex", model: "gpt-5.4" },
        providerThreadId: null,
        userMessageId: "m1",
        rootNodeId: "root",
        activeAttemptId: null,
        status: "running",
        requestedAt: at,
        startedAt: at,
        completedAt: null,
        checkpointId: null,
        contextHandoffId: null,
      },
    ],
    turnItems: [
      {
        id: "e1",
        threadId: "t1",
        runId,
        nodeId: "root",
        providerThreadId: null,
        providerTurnId: null,
        nativeItemRef: null,
        parentItemId: null,
        ordinal: 0,
        status: "running",
        title: null,
        startedAt: at,
        completedAt: null,
        updatedAt: at,
        type: "error",
        failure: { class: "provider_error", message: "Free-tier capacity limit reached", code: "rate_limited", retryable: true },
      },
    ],
  });
  return detailFactsOf(projection, new Set(), at);
}

function protocol2Scenario(situation: StatusSituation): ScenarioInput | undefined {
  switch (situation) {
    case "never-ran":
      return { facts: facts({}) };
    case "running":
      return { facts: facts(running) };
    case "turn-completed":
      return { facts: facts({ ...active, activeRunId: null, status: "completed", latestRunCompletedAt: at }) };
    case "approval-pending-while-running":
      return { facts: facts(pending("command")) };
    case "question-pending":
      return { facts: facts(pending("user_input")) };
    case "auth-refresh-pending":
      return { facts: facts(pending("auth_refresh")) };
    case "turn-failed":
      return { facts: facts({ ...active, activeRunId: null, status: "failed", lastError: "Codex failed: provider failure" }) };
    case "turn-could-not-start":
      // The run fails while preparing; the row carries the reason.
      return { facts: facts({ ...active, activeRunId: null, latestRunStartedAt: null, status: "failed", lastError: "spawn codex ENOENT" }) };
    case "capacity-limit-on-running-turn":
      return { facts: facts(running), detail: capacityDetail() };
    case "turn-interrupted":
      return { facts: facts({ ...active, activeRunId: null, status: "interrupted" }) };
    case "turn-cancelled":
      return { facts: facts({ ...active, activeRunId: null, status: "cancelled" }) };
    case "turn-rolled-back":
      return { facts: facts({ ...active, activeRunId: null, status: "rolled_back" }) };
    case "message-sent-no-turn-yet":
      // message.dispatch creates the run at once; it reads preparing until the provider starts.
      return { facts: facts({ ...active, latestRunStartedAt: null, status: "preparing", activityRunStatus: "preparing", latestUserMessageAt: at }) };
    case "session-starting":
      return { facts: facts({ ...active, status: "starting", activityRunStatus: "starting" }) };
    case "queued-behind-active-run":
      return { facts: facts({ ...active, activeRunId: null, status: "queued" }) };
    case "answer-final-background-draining":
      return {
        facts: facts({
          ...active,
          status: "waiting",
          activityRunStatus: "waiting",
          pendingBackgroundTasks: [{ taskId: "bg", description: "Background test watcher" }],
        }),
      };
    case "deleted":
      return { facts: facts({ deletedAt: at }) };
    // Protocol 2 says a thread is archived by the list it moves to, not by a row: the shell keeps no
    // archived row, and the adapter removes the thread as archived (adapter.test.ts, agent-status.test.ts).
    // It has no ready-without-run gap either (a run exists from the dispatch), and no session stop.
    case "archived":
    case "ready-gap-before-first-turn":
    case "session-stopped":
      return undefined;
  }
}

describe("protocol 2: the shared status scenarios", () => {
  runStatusScenarios(protocol2Scenario);
});

describe("protocol 2: rows → facts", () => {
  it("links lineage children, keeps the sub.<parent> convention for imported threads, and says who blocks", () => {
    expect(agentFactsOfRow(row({ lineage: { parentThreadId: "p", relationshipToParent: "subagent", rootThreadId: "p" } }), shell, features).parent).toEqual({
      threadId: "p",
      relationship: "subagent",
    });
    expect(agentFactsOfRow(row({ id: "sub.alpha.worker1" }), shell, features).parent).toEqual({ threadId: "alpha", relationship: "child-id" });
    expect(agentFactsOfRow(row(pending("file-change")), shell, features).blockedBy).toEqual({ kind: "approval", requestId: "request-1", since: at });
    expect(baseRow.runStatus).toBe("idle");
  });

  it("rows that say the same share one capabilities, provider and run state object, and keep no message text", () => {
    const first = agentFactsOfRow(row({ id: "a", activeRunId: null, status: "interrupted" }), shell, features);
    const second = agentFactsOfRow(row({ id: "b", activeRunId: null, status: "interrupted" }), shell, features);
    expect(second.capabilities).toBe(first.capabilities);
    expect(second.provider).toBe(first.provider);
    expect(second.run).toBe(first.run);
    expect(Object.isFrozen(first.capabilities) && Object.isFrozen(first.capabilities.whileRunning)).toBe(true);
    const text = "a long reply the shell row repeats";
    expect(JSON.stringify(row({ latestVisibleMessage: { id: "m", role: "assistant", text, updatedAt: at } }))).not.toContain(text);
  });
});
