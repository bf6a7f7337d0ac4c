import { describe, expect, it } from "vitest";
import { DEFAULT_NOTIFICATION_SETTINGS, NotificationPolicy, noticeCondition, noticeIsCritical, noticeStillHolds } from "./notifications";
import type { UsageFacts } from "./facts";
import { SENT_IDS_KEPT_PER_OWNER } from "./sent-notifications";
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

function usage(percent: number, compactsAutomatically: boolean | null): UsageFacts {
  return { contextUsed: percent * 1_000, contextMax: 100_000, compactsAutomatically, lastTurn: null, thread: null, reportedAt: "t" };
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

  it("keeps the ids it notified bounded however long it runs: an agent's newest, none of agents that left (issue 43)", () => {
    const policy = new NotificationPolicy();
    policy.environmentChanged(env(online));
    // Churn: agents come, need approval, and leave.
    for (let i = 0; i < 2_000; i++) {
      policy.agentChanged(agent(`churn-${i}`, "running"));
      expect(policy.agentChanged(agent(`churn-${i}`, "needs-approval", `r-${i}`))).toHaveLength(1);
      policy.forget(`e/churn-${i}`);
    }
    expect(policy.sentKept).toBe(0);
    // One agent that lives all day asks for approval again and again: each request notifies once.
    policy.agentChanged(agent("long", "running"));
    for (let i = 0; i < 2_000; i++) {
      expect(policy.agentChanged(agent("long", "needs-approval", `long-${i}`))).toHaveLength(1);
      policy.agentChanged(agent("long", "running"));
    }
    expect(policy.sentKept).toBe(SENT_IDS_KEPT_PER_OWNER);
    // Its latest request shown again (the row flickered) is not news.
    expect(policy.agentChanged(agent("long", "needs-approval", "long-1999"))).toEqual([]);
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

  it("a host that drops off every minute notifies once per quiet period, not every time", () => {
    const policy = new NotificationPolicy();
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 29, 10, minute)).toISOString();
    const outage = (minute: number): ConnectionPhase => ({ ...offline, since: at(minute), lastConfirmedAt: at(minute) });
    const notified: string[] = [];
    for (let minute = 0; minute < 40; minute += 1) {
      policy.environmentChanged(env({ phase: "online", since: at(minute) }));
      for (const intent of policy.environmentChanged(env(outage(minute)))) notified.push(`${intent.reason}@${minute}`);
    }
    // Once at the first outage, once more after the quiet period (30 min) has passed.
    expect(notified).toEqual(["offline@0", "offline@30"]);
  });

  it("a stall and a hold-up notify as themselves, at most once per condition, and not again through an outage", () => {
    const now = Date.UTC(2026, 10, 29, 10, 5);
    const policy = new NotificationPolicy(DEFAULT_NOTIFICATION_SETTINGS, undefined, () => now);
    policy.environmentChanged(env(online));
    const running = agentView("s", "running", { activeRunId: "turn-1", lastActivityAt: new Date(now - 5 * 60_000).toISOString() });
    const stalled = { ...running, stalled: true };
    const heldUp = { ...running, stalled: true, heldUp: true };
    policy.agentChanged(running);
    // It says for how long nothing happened, not "for a while" (issue 40 point 4).
    expect(policy.agentChanged(stalled)).toEqual([
      expect.objectContaining({ reason: "stalled", agentKey: "e/s", title: "Agent s has stalled: no activity for 5 min" }),
    ]);
    // Activity, then the same run stalls again: the same condition, not news.
    policy.agentChanged(running);
    expect(policy.agentChanged(stalled)).toEqual([]);
    expect(policy.agentChanged(heldUp)).toEqual([expect.objectContaining({ reason: "held-up", title: "Agent s is held up by its provider" })]);
    // Its machine drops off and comes back: the agent is held up as of then, nothing to say.
    policy.environmentChanged(env(offline));
    expect(policy.agentChanged({ ...heldUp, status: "unknown", asOf: "t1" })).toEqual([]);
    policy.environmentChanged(env({ phase: "online", since: "t9" }));
    expect(policy.agentChanged(heldUp)).toEqual([]);
    // A new run that stalls is a new condition.
    expect(policy.agentChanged({ ...stalled, activeRunId: "turn-2" })).toEqual([expect.objectContaining({ reason: "stalled" })]);
  });

  it("stalls and hold-ups have toggles of their own", () => {
    const quiet = new NotificationPolicy({
      needsApproval: true,
      needsInput: true,
      failed: true,
      stalled: false,
      heldUp: false,
      contextFull: true,
      hostOffline: true,
    });
    quiet.environmentChanged(env(online));
    const running = agentView("s", "running", { activeRunId: "turn-1" });
    quiet.agentChanged(running);
    expect(quiet.agentChanged({ ...running, stalled: true })).toEqual([]);
    expect(quiet.agentChanged({ ...running, stalled: true, heldUp: true })).toEqual([]);
    expect(quiet.agentChanged(agentView("s", "failed", { activeRunId: "turn-1" }))).toHaveLength(1);
    expect(noticeIsCritical("stalled")).toBe(false);
    const notice = { id: "x", reason: "stalled" as const, environmentId: "e", agentKey: "e/s", title: "", body: "" };
    expect(noticeStillHolds(notice, { ...running, stalled: true }, env(online))).toBe(true);
    expect(noticeStillHolds(notice, running, env(online))).toBe(false);
  });

  it("respects mutes and per-event toggles", () => {
    const muted = new NotificationPolicy();
    muted.environmentChanged(env(online, true));
    muted.agentChanged(agent("a", "running"));
    expect(muted.agentChanged(agent("a", "failed"))).toEqual([]);

    const noFailures = new NotificationPolicy({
      needsApproval: true,
      needsInput: true,
      failed: false,
      stalled: true,
      heldUp: true,
      contextFull: true,
      hostOffline: true,
    });
    noFailures.environmentChanged(env(online));
    noFailures.agentChanged(agent("a", "running"));
    expect(noFailures.agentChanged(agent("a", "failed"))).toEqual([]);
    expect(noFailures.agentChanged(agent("a", "needs-approval", "r"))).toHaveLength(1);
  });

  it("an agent that will not compact notifies once at the context limit, again only after it fell below and came back", () => {
    const policy = new NotificationPolicy();
    policy.environmentChanged(env(online));
    const at = (percent: number, compactsAutomatically: boolean | null = false) => agentView("c", "running", { usage: usage(percent, compactsAutomatically) });
    expect(policy.agentChanged(at(40))).toEqual([]);
    expect(policy.agentChanged(at(89))).toEqual([]);
    expect(policy.agentChanged(at(90))).toEqual([
      expect.objectContaining({
        reason: "context-full",
        agentKey: "e/c",
        title: "Agent c is near its context limit",
        body: "studio: its context is 90 % full and its provider will not compact it. Start a new thread, or compact it in T3.",
      }),
    ]);
    // Still full, fuller, or its machine drops off and comes back: the same condition, not news.
    expect(policy.agentChanged(at(95))).toEqual([]);
    policy.environmentChanged(env(offline));
    expect(policy.agentChanged({ ...at(96), status: "unknown", asOf: "t1" })).toEqual([]);
    policy.environmentChanged(env({ phase: "online", since: "t9" }));
    expect(policy.agentChanged(at(97))).toEqual([]);
    // Compacted (or a new thread) and full again: it recurs, and says so once more.
    expect(policy.agentChanged(at(20))).toEqual([]);
    expect(policy.agentChanged(at(92))).toEqual([expect.objectContaining({ reason: "context-full" })]);
    expect(policy.agentChanged(at(93))).toEqual([]);
  });

  it("an agent that compacts, or whose compaction is not reported, never notifies about its context", () => {
    const policy = new NotificationPolicy();
    policy.environmentChanged(env(online));
    for (const compacts of [true, null]) {
      const key = `k${String(compacts)}`;
      expect(policy.agentChanged(agentView(key, "running", { usage: usage(10, compacts) }))).toEqual([]);
      expect(policy.agentChanged(agentView(key, "running", { usage: usage(99, compacts) }))).toEqual([]);
    }
  });

  it("the context limit follows the setting, and the notice has its own toggle", () => {
    const policy = new NotificationPolicy(DEFAULT_NOTIFICATION_SETTINGS, 75);
    policy.environmentChanged(env(online));
    policy.agentChanged(agentView("c", "running", { usage: usage(50, false) }));
    expect(policy.agentChanged(agentView("c", "running", { usage: usage(80, false) }))).toEqual([expect.objectContaining({ reason: "context-full" })]);

    const quiet = new NotificationPolicy({ ...DEFAULT_NOTIFICATION_SETTINGS, contextFull: false });
    quiet.environmentChanged(env(online));
    quiet.agentChanged(agentView("c", "running", { usage: usage(50, false) }));
    expect(quiet.agentChanged(agentView("c", "running", { usage: usage(95, false) }))).toEqual([]);
    // Turned on later: the next time it gets there, it says so.
    quiet.updateSettings(DEFAULT_NOTIFICATION_SETTINGS);
    quiet.agentChanged(agentView("c", "running", { usage: usage(50, false) }));
    expect(quiet.agentChanged(agentView("c", "running", { usage: usage(95, false) }))).toEqual([expect.objectContaining({ reason: "context-full" })]);
  });

  it("an agent already near its limit when found (start-up, reconnect) is not news", () => {
    const policy = new NotificationPolicy();
    policy.environmentChanged(env({ phase: "connecting", since: "t0", lastConfirmedAt: null }));
    expect(policy.agentChanged(agentView("c", "idle", { usage: usage(95, false) }))).toEqual([]);
    expect(policy.environmentChanged(env(online))).toEqual([]);
    expect(policy.agentChanged(agentView("c", "idle", { usage: usage(96, false) }))).toEqual([]);
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

describe("notices in a window", () => {
  const failedIntent = { id: "e/a/failed/turn-1", reason: "failed" as const, environmentId: "e", agentKey: "e/a", title: "A failed", body: "" };
  const offlineIntent = { id: "e//offline/t1", reason: "offline" as const, environmentId: "e", agentKey: null, title: "studio is offline", body: "" };

  it("one condition per agent and reason, one per machine connection", () => {
    expect(noticeCondition(failedIntent)).toBe(noticeCondition({ ...failedIntent, id: "e/a/failed/turn-2" }));
    expect(noticeCondition(offlineIntent)).toBe(noticeCondition({ ...offlineIntent, id: "e//unauthorized/t2", reason: "unauthorized" }));
    expect(noticeCondition(offlineIntent)).not.toBe(noticeCondition(failedIntent));
  });

  it("a notice is withdrawn when its condition clears", () => {
    const env = environmentView();
    expect(noticeStillHolds(failedIntent, agentView("a", "failed"), env)).toBe(true);
    expect(noticeStillHolds(failedIntent, agentView("a", "idle"), env)).toBe(false);
    expect(noticeStillHolds(failedIntent, { ...agentView("a", "failed"), acknowledged: true } as never, env)).toBe(false);
    expect(noticeStillHolds(offlineIntent, undefined, env)).toBe(false);
    const down = environmentView({ connection: { phase: "offline", since: "t", lastConfirmedAt: "t", nextAttemptAt: "t", attempt: 1, error: "x" } });
    expect(noticeStillHolds(offlineIntent, undefined, down)).toBe(true);
  });

  it("what needs the user is critical; summaries and outages go by themselves", () => {
    expect(noticeIsCritical("needs-approval")).toBe(true);
    expect(noticeIsCritical("failed")).toBe(true);
    expect(noticeIsCritical("offline")).toBe(false);
    expect(noticeIsCritical("summary")).toBe(false);
  });

  it("sends the OS plain text: markup in a server's title or reason is not passed on", () => {
    const policy = new NotificationPolicy();
    policy.environmentChanged(env(online));
    policy.agentChanged(agentView("a", "running", { title: "Deploy <b>now</b>" }));
    const [failed] = policy.agentChanged(
      agentView("a", "failed", { title: "Deploy <b>now</b>", reason: '<a href="https://evil.example/">open this link</a> to fix', activeRunId: "r" }),
    );
    expect(failed?.title).toBe("Deploy now failed");
    expect(failed?.body).toBe("studio · open this link to fix");
  });
});
