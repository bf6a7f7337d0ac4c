import { describe, expect, it } from "vitest";
import { NotificationPolicy } from "./notifications";
import type { AgentStatus, AgentView, ConnectionPhase, EnvironmentView } from "./types";
import { environmentView, agentView } from "./views.testkit";

const online: ConnectionPhase = { phase: "online", since: "t1" };
const offline: ConnectionPhase = { phase: "offline", since: "t2", lastConfirmedAt: "t1", nextAttemptAt: "t3", attempt: 1, error: "refused" };

function env(connection: ConnectionPhase, muted = false): EnvironmentView {
  return environmentView({ connection, muted });
}
function agent(threadId: string, status: AgentStatus, requestId?: string): AgentView {
  const pending = requestId ? [{ requestId, kind: "approval" as const, detail: "npm test", requestKind: "command", decisions: [], createdAt: "t" }] : [];
  return agentView(threadId, status, { pending, activeRunId: null });
}

describe("notification policy", () => {
  it("summarizes what is found at start-up once, then notifies each new transition once", () => {
    const policy = new NotificationPolicy();
    policy.environmentChanged(env({ phase: "connecting", since: "t0", lastConfirmedAt: null }));
    expect(policy.agentChanged(agent("a", "failed"))).toEqual([]);
    expect(policy.agentChanged(agent("b", "needs-approval", "r1"))).toEqual([]);
    const summary = policy.environmentChanged(env(online));
    expect(summary).toEqual([expect.objectContaining({ reason: "summary", title: "studio: 2 agents need you" })]);
    expect(policy.environmentChanged(env(online))).toEqual([]);

    expect(policy.agentChanged(agent("sub.p.c", "running"))).toEqual([]);
    const blocked = policy.agentChanged(agent("sub.p.c", "needs-approval", "r2"));
    expect(blocked).toEqual([expect.objectContaining({ reason: "needs-approval", agentKey: "e/sub.p.c", body: expect.stringContaining("child agent") })]);
    expect(policy.agentChanged(agent("sub.p.c", "needs-approval", "r2"))).toEqual([]);
  });

  it("a host going offline notifies once; what it finds on reconnect is one summary, not a burst", () => {
    const policy = new NotificationPolicy();
    policy.environmentChanged(env(online));
    policy.agentChanged(agent("a", "running"));
    policy.agentChanged(agent("b", "running"));
    expect(policy.environmentChanged(env(offline))).toEqual([expect.objectContaining({ reason: "offline", title: "studio is offline" })]);
    expect(policy.environmentChanged(env({ ...offline, phase: "backoff" }))).toEqual([]);
    expect(policy.agentChanged(agent("a", "failed"))).toEqual([]);
    expect(policy.agentChanged(agent("b", "failed"))).toEqual([]);
    expect(policy.environmentChanged(env({ phase: "online", since: "t9" }))).toEqual([expect.objectContaining({ reason: "summary" })]);
  });

  it("respects mutes and per-event toggles", () => {
    const muted = new NotificationPolicy();
    muted.environmentChanged(env(online, true));
    muted.agentChanged(agent("a", "running"));
    expect(muted.agentChanged(agent("a", "failed"))).toEqual([]);

    const noFailures = new NotificationPolicy({ needsApproval: true, needsInput: true, failed: false, hostOffline: true });
    noFailures.environmentChanged(env(online));
    noFailures.agentChanged(agent("a", "running"));
    expect(noFailures.agentChanged(agent("a", "failed"))).toEqual([]);
    expect(noFailures.agentChanged(agent("a", "needs-approval", "r"))).toHaveLength(1);
  });

  it("a machine revoked while it was offline, or before start-up, still asks to be paired again, once", () => {
    const policy = new NotificationPolicy();
    policy.environmentChanged(env(online));
    expect(policy.environmentChanged(env(offline))).toEqual([expect.objectContaining({ reason: "offline" })]);
    const revoked: ConnectionPhase = { phase: "unauthorized", since: "t4", lastConfirmedAt: "t1", error: "revoked" };
    expect(policy.environmentChanged(env(revoked))).toEqual([expect.objectContaining({ reason: "unauthorized", title: "studio needs pairing again" })]);
    expect(policy.environmentChanged(env(revoked))).toEqual([]);

    const fresh = new NotificationPolicy();
    fresh.environmentChanged(env({ phase: "connecting", since: "t0", lastConfirmedAt: null }));
    expect(fresh.environmentChanged(env({ ...revoked, since: "t5" }))).toEqual([expect.objectContaining({ reason: "unauthorized" })]);
  });
});
