// A failed native subagent is its parent's failure to look at (issue 39): the one "needs you" rule,
// every count, acknowledging, the roll-up and exactly one notification; a completed one is nothing.
import { describe, expect, it } from "vitest";
import { attentionFingerprint } from "./acknowledge";
import type { SubagentFacts } from "./facts";
import { FleetModel } from "./model";
import { needClass, needsYou, tallyNeeds } from "./needs";
import { NotificationPolicy, noticeIsCritical, noticeStillHolds } from "./notifications";
import { failedSubagentWords } from "./subagents";
import type { AgentStatus, AgentView, ConnectionPhase } from "./types";
import { acknowledgeable, fleetCounts, inboxOrder, needFingerprint } from "./views";
import { agentView, environmentView } from "./views.testkit";

const ONLINE_AT = "2026-12-04T10:00:00.000Z";
const online: ConnectionPhase = { phase: "online", since: ONLINE_AT };

function subagent(status: SubagentFacts["status"], patch: Partial<SubagentFacts> = {}): SubagentFacts {
  return {
    id: "task-1",
    status,
    title: "Scripted failing subtask",
    kind: "local_agent",
    model: null,
    childThreadId: null,
    reason: status === "failed" ? "Agent terminated early due to an API error" : null,
    updatedAt: "2026-12-04T10:05:00.000Z",
    ...patch,
  };
}

function parent(status: AgentStatus, subagents: SubagentFacts[], patch: Partial<AgentView> = {}): AgentView {
  return agentView("p", status, { title: "Delegating", subagents, ...patch });
}

describe("a failed native subagent needs you through its parent", () => {
  it("a failure to look at: in the one count, the inbox order, the tray's red and the words naming it", () => {
    const failed = parent("idle", [subagent("failed")]);
    expect(needClass(failed)).toBe("failure");
    expect(needsYou(failed)).toBe(true);
    const tally = tallyNeeds([failed, agentView("r", "running")]);
    expect(tally.needYou.map((agent) => agent.key)).toEqual(["e/p"]);
    expect(tally.failed).toBe(1);
    expect(fleetCounts([environmentView()], [failed]).needsYou).toBe(1);
    expect(inboxOrder([failed]).map((agent) => agent.key)).toEqual(["e/p"]);
    expect(failedSubagentWords(failed)).toBe('subagent "Scripted failing subtask" failed: Agent terminated early due to an API error');
    // While its machine is away, as last confirmed.
    expect(needsYou({ ...failed, status: "unknown", lastKnownStatus: "idle" })).toBe(true);
  });

  it("a completed, running or stopped subagent needs nothing, nor a failed one under a thread that ended or was deleted", () => {
    for (const status of ["completed", "running", "stopped"] as const) expect(needsYou(parent("idle", [subagent(status)])), status).toBe(false);
    expect(needsYou(parent("ended", [subagent("failed")]))).toBe(false);
    expect(needsYou(parent("deleted", [subagent("failed")]))).toBe(false);
  });

  it("acknowledging covers the subagents shown; another that fails counts again", () => {
    const failed = parent("idle", [subagent("failed")]);
    expect(acknowledgeable(failed)).toBe(true);
    const facts = { latestUserMessageAt: "t0", updatedAt: "t1" };
    const seen = attentionFingerprint(failed, facts);
    expect(seen).not.toBeNull();
    expect(needsYou({ ...failed, acknowledged: true })).toBe(false);
    const another = parent("idle", [subagent("failed"), subagent("failed", { id: "task-2" })]);
    expect(attentionFingerprint(another, facts)).not.toBe(seen);
    expect(needFingerprint(another)).not.toBe(needFingerprint(failed));
    // An agent with no failed subagent keeps the fingerprint acknowledgements were saved with.
    expect(attentionFingerprint(parent("failed", [subagent("completed")]), facts)).toBe("failed|t0");
  });

  it("rolls up into its parent's roll-up in the model; a completed one does not", () => {
    const model = new FleetModel({ stalledAfterMs: 60_000, now: () => Date.parse(ONLINE_AT) });
    model.upsertEnvironment(
      { environmentId: "e", label: "studio", baseUrl: "http://x", serverVersion: "0.0.42", generation: "upstream", readOnly: false, muted: false },
      online,
    );
    model.applyFleetSnapshot("e", [
      {
        threadId: "p",
        projectId: "p1",
        projectTitle: null,
        title: "Delegating",
        provider: { instanceId: "claudeAgent", driver: "claudeAgent", model: "claude-sonnet-4-5", effort: null },
        runtimeMode: "full-access",
        interactionMode: "default",
        parent: null,
        lifecycle: "active",
        run: { phase: "completed", at: null },
        activeRunId: null,
        blockedBy: null,
        updatedAt: ONLINE_AT,
        latestUserMessageAt: ONLINE_AT,
        capabilities: { whileRunning: ["queue"], interrupt: true, stop: true, cancelQueued: false, answer: true, settle: false, snooze: false },
      },
    ]);
    const detail = (subagents: SubagentFacts[]) => ({
      pending: [],
      lastErrorText: null,
      hiddenFailure: null,
      subagents,
      activeRunId: null,
      run: null,
      lastEventAt: null,
    });
    model.setThreadDetail("e", "p", detail([subagent("completed")]));
    expect(model.rollup("e", "p")).toBeNull();
    expect(model.counts().needsYou).toBe(0);
    model.setThreadDetail("e", "p", detail([subagent("failed")]));
    expect(model.rollup("e", "p")).toBe("failed");
    expect(model.counts().needsYou).toBe(1);
    model.setAcknowledgement("e/p", model.acknowledgeable("e/p"));
    expect(model.counts()).toMatchObject({ needsYou: 0, acknowledged: 1 });
  });
});

describe("a failed native subagent notifies once", () => {
  const running = () => parent("idle", [subagent("running", { updatedAt: "2026-12-04T10:01:00.000Z" })]);
  const failed = () => parent("idle", [subagent("failed")]);

  it("once, naming the subagent, and a click opens the parent; not again for the same failure", () => {
    const policy = new NotificationPolicy();
    policy.environmentChanged(environmentView({ connection: online }));
    expect(policy.agentChanged(running())).toEqual([]);
    const intents = policy.agentChanged(failed());
    expect(intents).toEqual([
      expect.objectContaining({
        reason: "subagent-failed",
        agentKey: "e/p",
        title: 'Delegating: its subagent "Scripted failing subtask" failed',
        body: "studio · Agent terminated early due to an API error",
      }),
    ]);
    expect(noticeIsCritical("subagent-failed")).toBe(true);
    expect(noticeStillHolds(intents[0]!, failed(), environmentView())).toBe(true);
    expect(noticeStillHolds(intents[0]!, { ...failed(), acknowledged: true }, environmentView())).toBe(false);
    expect(policy.agentChanged(failed())).toEqual([]);
    expect(policy.agentChanged(parent("running", [subagent("failed")]))).toEqual([]);
  });

  it("first seen failed: news when it failed after its machine came online, found state when before (a restart or a reconnect)", () => {
    const fresh = new NotificationPolicy();
    fresh.environmentChanged(environmentView({ connection: online }));
    fresh.agentChanged(parent("idle", []));
    expect(fresh.agentChanged(failed())).toEqual([expect.objectContaining({ reason: "subagent-failed" })]);

    const restarted = new NotificationPolicy();
    restarted.environmentChanged(environmentView({ connection: { phase: "online", since: "2026-12-04T11:00:00.000Z" } }));
    restarted.agentChanged(parent("idle", []));
    expect(restarted.agentChanged(failed())).toEqual([]);

    const reconnected = new NotificationPolicy();
    reconnected.environmentChanged(environmentView({ connection: online }));
    reconnected.agentChanged(running());
    expect(reconnected.agentChanged(failed())).toHaveLength(1);
    reconnected.environmentChanged(
      environmentView({ connection: { phase: "offline", since: "t", lastConfirmedAt: "t", nextAttemptAt: "t", attempt: 1, error: "x" } }),
    );
    reconnected.environmentChanged(environmentView({ connection: { phase: "online", since: "2026-12-04T11:00:00.000Z" } }));
    expect(reconnected.agentChanged(failed())).toEqual([]);
  });

  it("a completed subagent notifies nothing; the failures toggle and a mute apply", () => {
    const policy = new NotificationPolicy();
    policy.environmentChanged(environmentView({ connection: online }));
    policy.agentChanged(running());
    expect(policy.agentChanged(parent("idle", [subagent("completed")]))).toEqual([]);

    const quiet = new NotificationPolicy({
      needsApproval: true,
      needsInput: true,
      failed: false,
      stalled: true,
      heldUp: true,
      contextFull: true,
      hostOffline: true,
    });
    quiet.environmentChanged(environmentView({ connection: online }));
    quiet.agentChanged(running());
    expect(quiet.agentChanged(failed())).toEqual([]);
  });
});
