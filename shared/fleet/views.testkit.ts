// Builders of fleet views for tests of the pure rules.
import type { AgentStatus, AgentView, ConnectionPhase, EnvironmentView } from "./types";

export const ONLINE: ConnectionPhase = { phase: "online", since: "2026-11-29T10:00:00.000Z" };

export function environmentView(patch: Partial<EnvironmentView> = {}): EnvironmentView {
  return {
    environmentId: "e",
    label: "studio",
    baseUrl: "http://x",
    serverVersion: "0.0.33",
    generation: "upstream",
    readOnly: false,
    muted: false,
    connection: ONLINE,
    counts: {},
    ...patch,
  };
}

export function agentView(threadId: string, status: AgentStatus, patch: Partial<AgentView> = {}): AgentView {
  return {
    key: `e/${threadId}`,
    environmentId: "e",
    threadId,
    parentThreadId: threadId.startsWith("sub.") ? "p" : null,
    relationship: threadId.startsWith("sub.") ? "child-id" : null,
    orphaned: false,
    title: `Agent ${threadId}`,
    projectId: "p1",
    projectTitle: null,
    providerInstanceId: "codex",
    providerDriver: "codex",
    model: "gpt-5.4",
    effort: null,
    runtimeMode: "full-access",
    status,
    lastKnownStatus: status,
    asOf: null,
    stalled: false,
    heldUp: false,
    reason: null,
    lifecycle: "active",
    activeRunId: status === "running" ? "turn-1" : null,
    queuePosition: null,
    startingSince: null,
    capabilities: { whileRunning: ["steer"], interrupt: true, stop: true, cancelQueued: false, answer: true, settle: false, snooze: false },
    pending: [],
    acknowledged: false,
    workspaceRoot: null,
    branch: null,
    worktreePath: null,
    subagents: [],
    updatedAt: "t",
    lastActivityAt: "t",
    ...patch,
  };
}
