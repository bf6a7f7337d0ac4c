import { describe, expect, it } from "vitest";
import type { TurnChanges } from "./facts";
import { awaitsReview, byUrgency, needClass, needsYou, tallyNeeds } from "./needs";
import type { AgentView } from "./types";
import { agentView } from "./views.testkit";

const NOW = Date.parse("2026-11-29T10:00:00.000Z");
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const MINUTE = 60_000;

/** The same agent with its machine away: "unknown", its last confirmed status kept. */
function offline(agent: AgentView): AgentView {
  return { ...agent, status: "unknown", lastKnownStatus: agent.status === "unknown" ? agent.lastKnownStatus : agent.status, asOf: ago(MINUTE) };
}

describe("what needs you (one definition)", () => {
  it("decisions, failures and stalls need you; the rest does not", () => {
    const cases: [AgentView, ReturnType<typeof needClass>][] = [
      [agentView("a", "needs-approval"), "decision"],
      [agentView("q", "needs-input"), "decision"],
      [agentView("l", "needs-auth"), "decision"],
      [agentView("f", "failed"), "failure"],
      [agentView("s", "stuck"), "failure"],
      [agentView("st", "running", { stalled: true }), "stall"],
      [agentView("h", "running", { stalled: true, heldUp: true }), "stall"],
      [agentView("r", "running"), null],
      [agentView("i", "idle"), null],
      [agentView("w", "waiting"), null],
    ];
    for (const [agent, expected] of cases) {
      expect(needClass(agent), agent.threadId).toBe(expected);
      expect(needsYou(agent), agent.threadId).toBe(expected !== null);
    }
  });

  it("an acknowledged failure or stall no longer needs you; a decision is answered, never acknowledged away", () => {
    expect(needsYou(agentView("f", "failed", { acknowledged: true }))).toBe(false);
    expect(needsYou(agentView("s", "running", { stalled: true, acknowledged: true }))).toBe(false);
    expect(needsYou(agentView("a", "needs-approval", { acknowledged: true }))).toBe(true);
  });

  it("an agent whose machine is away keeps what it last needed (as of), held up and stalled included", () => {
    for (const agent of [
      agentView("a", "needs-approval"),
      agentView("f", "failed"),
      agentView("s", "running", { stalled: true }),
      agentView("h", "running", { stalled: true, heldUp: true }),
    ]) {
      expect(needsYou(offline(agent)), agent.threadId).toBe(true);
      expect(needClass(offline(agent))).toBe(needClass(agent));
    }
    expect(needsYou(offline(agentView("r", "running")))).toBe(false);
    expect(needsYou(offline(agentView("f", "failed", { acknowledged: true })))).toBe(false);
  });
});

describe("urgency order", () => {
  it("approvals and questions before failures before stalls, then what has waited longest", () => {
    const agents = [
      agentView("stalled-old", "running", { stalled: true, lastActivityAt: ago(60 * MINUTE) }),
      agentView("held-up-old", "running", { stalled: true, heldUp: true, lastActivityAt: ago(50 * MINUTE) }),
      agentView("failed-old", "failed", { lastActivityAt: ago(40 * MINUTE) }),
      agentView("stuck", "stuck", { lastActivityAt: ago(5 * MINUTE) }),
      agentView("approval-new", "needs-approval", { lastActivityAt: ago(MINUTE) }),
      agentView("question", "needs-input", { lastActivityAt: ago(3 * MINUTE) }),
      agentView("login", "needs-auth", { lastActivityAt: ago(2 * MINUTE) }),
    ];
    expect([...agents].sort(byUrgency).map((agent) => agent.threadId)).toEqual([
      "question",
      "login",
      "approval-new",
      "failed-old",
      "stuck",
      "stalled-old",
      "held-up-old",
    ]);
  });

  it("a request waits since it was made, not since the agent's last activity", () => {
    const request = { requestId: "r", kind: "approval" as const, detail: "npm test", requestKind: "command", decisions: [], createdAt: ago(30 * MINUTE) };
    const oldRequest = agentView("old-request", "needs-approval", { lastActivityAt: ago(MINUTE), pending: [request] });
    const newer = agentView("newer", "needs-approval", { lastActivityAt: ago(10 * MINUTE) });
    expect([newer, oldRequest].sort(byUrgency).map((agent) => agent.threadId)).toEqual(["old-request", "newer"]);
  });
});

describe("the tally every surface shows", () => {
  it("counts what needs you now; snoozed and acknowledged apart; as-of and failures within it", () => {
    const snoozedKey = "e/snoozed";
    const agents = [
      agentView("approval", "needs-approval", { lastActivityAt: ago(MINUTE) }),
      offline(agentView("away", "needs-input", { lastActivityAt: ago(2 * MINUTE) })),
      agentView("failed", "failed", { lastActivityAt: ago(3 * MINUTE) }),
      agentView("snoozed", "failed", { lastActivityAt: ago(4 * MINUTE) }),
      agentView("seen", "failed", { acknowledged: true }),
      agentView("seen-stall", "running", { stalled: true, acknowledged: true }),
      agentView("busy", "running"),
    ];
    const tally = tallyNeeds(agents, (agent) => agent.key === snoozedKey);
    expect(tally.needYou.map((agent) => agent.threadId)).toEqual(["away", "approval", "failed"]);
    expect(tally.snoozed.map((agent) => agent.threadId)).toEqual(["snoozed"]);
    expect(tally).toMatchObject({ acknowledged: 2, asOf: 1, failed: 1 });
  });

  it("a machine dropping off and coming back with the same needs leaves the count as it was", () => {
    const agents = [agentView("a", "needs-approval"), agentView("s", "running", { stalled: true }), agentView("r", "running")];
    const before = tallyNeeds(agents).needYou.map((agent) => agent.key);
    expect(tallyNeeds(agents.map(offline)).needYou.map((agent) => agent.key)).toEqual(before);
    expect(before).toHaveLength(2);
  });
});

describe("review items: agents that finished with changes not reviewed (issue 40)", () => {
  const turn = (turnCount: number, files: number, status: TurnChanges["status"] = "ready"): TurnChanges => ({
    turnCount,
    runId: null,
    status,
    files: Array.from({ length: files }, (_, index) => ({ path: `f${index}`, kind: "modified", additions: 1, deletions: 0 })),
    completedAt: null,
  });
  const finished = agentView("done", "idle", { changes: [turn(1, 1), turn(2, 3)] });

  it("awaits review until its latest turn is marked reviewed; not while it runs, nor for a turn without files or checkpoint", () => {
    expect(awaitsReview(finished, undefined)).toBe(true);
    expect(awaitsReview(finished, 1)).toBe(true);
    expect(awaitsReview(finished, 2)).toBe(false);
    expect(awaitsReview({ ...finished, status: "running", lastKnownStatus: "running" }, undefined)).toBe(false);
    expect(awaitsReview(agentView("empty", "idle", { changes: [turn(1, 0)] }), undefined)).toBe(false);
    expect(awaitsReview(agentView("lost", "idle", { changes: [turn(1, 2, "missing")] }), undefined)).toBe(false);
    // As of: its machine away, what was last confirmed.
    expect(awaitsReview(offline(finished), undefined)).toBe(true);
  });

  it("a review item needs you, after every other class, and counts in the one tally (never acknowledged away)", () => {
    const review = agentView("done", "idle", { review: true, lastActivityAt: ago(60 * MINUTE) });
    expect(needClass(review)).toBe("review");
    expect(needsYou(review)).toBe(true);
    expect(needsYou({ ...review, acknowledged: true })).toBe(true);
    const stalled = agentView("st", "running", { stalled: true, lastActivityAt: ago(MINUTE) });
    const tally = tallyNeeds([review, stalled, agentView("i", "idle")]);
    expect(tally.needYou.map((agent) => agent.threadId)).toEqual(["st", "done"]);
    expect([review, stalled].sort(byUrgency).map((agent) => agent.threadId)).toEqual(["st", "done"]);
  });
});
