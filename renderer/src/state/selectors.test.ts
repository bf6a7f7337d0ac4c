import { describe, expect, it } from "vitest";
import type { AgentView, EnvironmentView } from "../../../shared/fleet/types";
import { agentView, environmentView } from "../../../shared/fleet/views.testkit";
import { buildRows, nextNeedingYou } from "./selectors";
import { NO_FILTERS } from "./store";

function maps(envs: EnvironmentView[], agents: AgentView[]) {
  return [new Map(agents.map((a) => [a.key, a])), new Map(envs.map((e) => [e.environmentId, e]))] as const;
}

const env = environmentView();
const parent = agentView("plan", "idle", { title: "Plan" });
const failing = agentView("sub.plan.w1", "failed", { title: "Worker 1", parentThreadId: "plan" });
const running = agentView("sub.plan.w2", "running", { title: "Worker 2", parentThreadId: "plan", subagents: [{ id: "t1", status: "running", title: "Explore", kind: "subagent", model: null, childThreadId: null, updatedAt: "t" }] });
const orphan = agentView("sub.gone.w9", "needs-input", { title: "Orphan", parentThreadId: "gone", orphaned: true });
const other = agentView("solo", "idle", { title: "Solo" });

describe("fleet tree rows", () => {
  it("nests children under parents with roll-ups, subagents under their thread, orphans at the top", () => {
    const [agents, envs] = maps([env], [parent, failing, running, orphan, other]);
    const rows = buildRows(agents, envs, NO_FILTERS, "", new Set());
    expect(rows.map((row) => (row.kind === "environment" ? "env" : row.kind === "agent" ? `${row.depth}:${row.agent.title}` : `${row.depth}:sub ${row.subagent.id}`))).toEqual([
      "env",
      "1:Orphan",
      "1:Plan",
      "2:Worker 1",
      "2:Worker 2",
      "3:sub t1",
      "1:Solo",
    ]);
    const planRow = rows.find((row) => row.kind === "agent" && row.agent.threadId === "plan");
    expect(planRow).toMatchObject({ rollup: "failed", childCount: 2 });
  });

  it("collapsing hides descendants; filters keep a match's parents for context", () => {
    const [agents, envs] = maps([env], [parent, failing, running, other]);
    expect(buildRows(agents, envs, NO_FILTERS, "", new Set([parent.key])).filter((row) => row.kind === "agent")).toHaveLength(2);
    const failed = buildRows(agents, envs, { ...NO_FILTERS, failed: true }, "", new Set());
    expect(failed.filter((row) => row.kind === "agent").map((row) => row.kind === "agent" && row.agent.title)).toEqual(["Plan", "Worker 1"]);
    const search = buildRows(agents, envs, NO_FILTERS, "sol", new Set());
    expect(search.filter((row) => row.kind === "agent").map((row) => row.kind === "agent" && row.agent.title)).toEqual(["Solo"]);
    const byThreadId = buildRows(agents, envs, NO_FILTERS, "sub.plan.w2", new Set());
    expect(byThreadId.filter((row) => row.kind === "agent").map((row) => row.kind === "agent" && row.agent.title)).toEqual(["Plan", "Worker 2"]);
  });

  it("the offline filter shows agents whose host is not online", () => {
    const down = environmentView({ environmentId: "d", label: "down", connection: { phase: "offline", since: "t", lastConfirmedAt: "t", nextAttemptAt: "t", attempt: 1, error: "x" } });
    const lost = agentView("x", "running", { key: "d/x", environmentId: "d", status: "unknown", lastKnownStatus: "running" });
    const [agents, envs] = maps([env, down], [other, lost]);
    const rows = buildRows(agents, envs, { ...NO_FILTERS, offline: true }, "", new Set());
    expect(rows.filter((row) => row.kind === "agent").map((row) => row.id)).toEqual(["d/x"]);
  });

  it("jumps to the next agent that needs the user, wrapping around", () => {
    const [agents, envs] = maps([env], [parent, failing, running, orphan, other]);
    const rows = buildRows(agents, envs, NO_FILTERS, "", new Set());
    expect(nextNeedingYou(rows, null)).toBe(orphan.key);
    expect(nextNeedingYou(rows, orphan.key)).toBe(failing.key);
    expect(nextNeedingYou(rows, failing.key)).toBe(orphan.key);
  });
});
