import { describe, expect, it } from "vitest";
import type { AgentFacts, TurnChanges } from "../../shared/fleet/facts";
import { TURN_FILES_KEPT } from "../../shared/t3/turn-files";
import { approximateBytes, EnvironmentBudget } from "./budget";
import { agent, env, pairAll, setup, until } from "./service.testkit";

function facts(threadId: string, updatedAt: string, title = "t"): AgentFacts {
  return { threadId, updatedAt, title } as AgentFacts;
}

describe("per-environment budget", () => {
  it("keeps the most recently updated agents that fit, reports once, and admits again after removals", () => {
    const reports: number[] = [];
    const budget = new EnvironmentBudget({ maxThreads: 2, maxBytes: 1_000_000 }, (report) => reports.push(report.offeredThreads));
    const kept = budget.snapshot([facts("a", "2026-01-01"), facts("b", "2026-03-01"), facts("c", "2026-02-01")]);
    expect(kept.map((agent) => agent.threadId)).toEqual(["b", "c"]);
    expect(reports).toEqual([3]);
    expect(budget.upsert(facts("d", "2026-04-01"))).toBe(false);
    expect(budget.upsert(facts("b", "2026-05-01"))).toBe(true);
    expect(reports).toEqual([3]);
    budget.removed("c");
    expect(budget.upsert(facts("e", "2026-06-01"))).toBe(true);
  });

  it("bounds bytes as well as threads", () => {
    const big = facts("big", "2026-01-01", "x".repeat(10_000));
    const budget = new EnvironmentBudget({ maxThreads: 100, maxBytes: approximateBytes(big) + 100 });
    expect(budget.snapshot([big, facts("small", "2025-01-01")]).map((agent) => agent.threadId)).toEqual(["big"]);
    expect(budget.report).toMatchObject({ offeredThreads: 2, keptThreads: 1 });
  });

  it("a followed thread's changes count in the bytes; changes that do not fit keep each turn's counts without its files, until its agent is removed (issue 43)", () => {
    const files = Array.from({ length: TURN_FILES_KEPT }, (_, index) => ({ path: `vendor/pkg-${index}/index.js`, kind: "added", additions: 2, deletions: 0 }));
    const vendored: TurnChanges[] = [
      { turnCount: 1, runId: "run-1", status: "ready", files, totals: { files: 100_000, additions: 200_000, deletions: 0 }, completedAt: "t" },
    ];
    const agents = [facts("small", "2026-01-01"), facts("vendored", "2026-01-02")];
    const budget = new EnvironmentBudget({ maxThreads: 100, maxBytes: approximateBytes(agents) + approximateBytes(vendored) + 100 });
    budget.snapshot(agents);
    const before = budget.report.keptBytes;
    // Within the budget: kept whole, and counted.
    expect(budget.admitChanges("vendored", vendored)).toBe(vendored);
    expect(budget.report.keptBytes).toBe(before + approximateBytes(vendored));
    // The same list again is not counted twice; a new snapshot keeps it counted.
    budget.admitChanges("vendored", vendored);
    budget.snapshot(agents);
    expect(budget.report.keptBytes).toBe(before + approximateBytes(vendored));
    // A second such thread does not fit: its turns keep their counts, not their file lists.
    const second = vendored.map((turn) => ({ ...turn }));
    const kept = budget.admitChanges("small", second)!;
    expect(kept[0]).toMatchObject({ files: [], totals: { files: 100_000, additions: 200_000, deletions: 0 } });
    // Counted as kept: the counts alone, a few hundred bytes a turn.
    expect(budget.report.keptBytes).toBe(before + approximateBytes(vendored) + approximateBytes(kept));
    // Removing the first agent releases its changes: the second's now fit whole.
    budget.removed("vendored");
    expect(
      budget.admitChanges(
        "small",
        vendored.map((turn) => ({ ...turn })),
      )![0]!.files,
    ).toHaveLength(TURN_FILES_KEPT);
  });

  it("holds no changes of agents that left, however many came and went: after their removal or a snapshot without them (issue 43)", () => {
    const live = [facts("live", "2026-01-01")];
    const budget = new EnvironmentBudget({ maxThreads: 100, maxBytes: 64 * 1024 * 1024 });
    budget.snapshot(live);
    const baseline = budget.report.keptBytes;
    const turns = (threadId: string): TurnChanges[] => [
      {
        turnCount: 1,
        runId: `run-${threadId}`,
        status: "ready",
        files: [{ path: `${threadId}.ts`, kind: "modified", additions: 1, deletions: 1 }],
        completedAt: "t",
      },
    ];
    for (let i = 0; i < 1_000; i++) {
      const threadId = `churn-${i}`;
      // Followed before its row came (a creation), counted while kept, and still followed after it left (a send settling).
      budget.admitChanges(threadId, turns(threadId));
      budget.upsert(facts(threadId, "2026-01-02"));
      budget.admitChanges(threadId, turns(threadId));
      budget.removed(threadId);
      expect(budget.admitChanges(threadId, turns(threadId))![0]!.files).toHaveLength(1);
    }
    expect(budget.report.keptBytes).toBe(baseline);
    // Gone without a removal: absent from the snapshot after a reconnect.
    for (let i = 0; i < 1_000; i++) {
      budget.upsert(facts(`vanished-${i}`, "2026-01-03"));
      budget.admitChanges(`vanished-${i}`, turns(`vanished-${i}`));
    }
    budget.snapshot(live);
    expect(budget.report.keptBytes).toBe(baseline);
  });

  it("a server over its budget gets a notice; the other machines are unaffected", { timeout: 60_000 }, async () => {
    const { sims, service, events } = await setup(["upstream", "fork"], { budget: { maxThreads: 40, maxBytes: 64 * 1024 * 1024 } });
    const [flood, quiet] = sims.servers as [(typeof sims.servers)[0], (typeof sims.servers)[0]];
    for (let i = 0; i < 60; i++) sims.createThread(flood, { title: `flood ${i}` });
    const quietThreads = [0, 1, 2].map((i) => sims.createThread(quiet, { title: `quiet ${i}` }));
    await pairAll(service, sims);
    await until(service, () => quietThreads.every((threadId) => agent(service, quiet, threadId) !== undefined), "the quiet machine's agents");
    await until(
      service,
      () => events.some((event) => event.type === "notification" && event.notification.environmentId === flood.environmentId),
      "the budget notice",
    );
    expect([...service.model.agents()].filter((view) => view.environmentId === flood.environmentId)).toHaveLength(40);
    expect(env(service, quiet)?.connection.phase).toBe("online");
    expect(env(service, flood)?.connection.phase).toBe("online");
    const notice = service.snapshot().notices.find((text) => text.startsWith(`${flood.label} sent more than`));
    expect(notice).toContain("(40 agents, 64 MB): the 40 most recently updated agents are shown, the rest are left out");
    // One more thread on the flooded machine changes nothing; the notice is not repeated.
    const budgetNotices = () =>
      events.filter((event) => event.type === "notification" && event.notification.id.startsWith(`${flood.environmentId}//budget/`)).length;
    expect(budgetNotices()).toBe(1);
    sims.createThread(flood, { title: "one more" });
    sims.createThread(quiet, { title: "still fine" });
    await until(
      service,
      () => [...service.model.agents()].filter((view) => view.environmentId === quiet.environmentId).length === 4,
      "the quiet machine's new agent",
    );
    expect([...service.model.agents()].filter((view) => view.environmentId === flood.environmentId)).toHaveLength(40);
    expect(budgetNotices()).toBe(1);
  });
});
