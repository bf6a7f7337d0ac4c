import { describe, expect, it } from "vitest";
import type { AgentView, EnvironmentView } from "../../../shared/fleet/types";
import { agentView, environmentView } from "../../../shared/fleet/views.testkit";
import { needFingerprint } from "../../../shared/fleet/views";
import { buildRows, displayFacts, glance, inbox, matchParts, nextNeedingYou, type Row, selectableRows, snoozeHolds, type TreeInput } from "./selectors";
import { NO_FILTERS } from "./store";

const NOW = Date.parse("2026-11-29T10:00:00.000Z");
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const DAY = 86_400_000;

function input(envs: EnvironmentView[], agents: AgentView[], patch: Partial<TreeInput> = {}): TreeInput {
  return {
    agents: new Map(agents.map((a) => [a.key, a])),
    environments: new Map(envs.map((e) => [e.environmentId, e])),
    filters: NO_FILTERS,
    search: "",
    collapsed: new Set(),
    grouping: "machine",
    olderThanMs: DAY,
    olderShown: new Set(),
    now: NOW,
    bridgeLost: false,
    ...patch,
  };
}

const describeRow = (row: Row) =>
  row.kind === "environment"
    ? "env"
    : row.kind === "project"
      ? `project ${row.title}`
      : row.kind === "agent"
        ? `${row.depth}:${row.agent.title}`
        : row.kind === "older"
          ? `${row.count} older`
          : `${row.depth}:sub ${row.subagent.id}`;

const env = environmentView();
const parent = agentView("plan", "idle", { title: "Plan", lastActivityAt: ago(60_000) });
const failing = agentView("sub.plan.w1", "failed", { title: "Worker 1", parentThreadId: "plan", lastActivityAt: ago(120_000) });
const running = agentView("sub.plan.w2", "running", {
  title: "Worker 2",
  parentThreadId: "plan",
  lastActivityAt: ago(1_000),
  subagents: [{ id: "t1", status: "running", title: "Explore", kind: "subagent", model: null, childThreadId: null, updatedAt: "t" }],
});
const orphan = agentView("sub.gone.w9", "needs-input", { title: "Orphan", parentThreadId: "gone", orphaned: true, lastActivityAt: ago(3_000) });
const solo = agentView("solo", "idle", { title: "Solo", lastActivityAt: ago(5_000) });

describe("fleet tree rows", () => {
  it("nests children under parents in triage order: needs you, running, then the rest by recency", () => {
    const rows = buildRows(input([env], [parent, failing, running, orphan, solo]));
    expect(rows.map(describeRow)).toEqual(["env", "1:Orphan", "1:Plan", "2:Worker 1", "2:Worker 2", "3:sub t1", "1:Solo"]);
    expect(rows.find((row) => row.kind === "agent" && row.agent.threadId === "plan")).toMatchObject({ rollup: "failed", childCount: 2 });
  });

  it("a parent's roll-up and a project's counts show stalled and held-up children as themselves, not as running", () => {
    const stalledChild = { ...running, stalled: true };
    expect(buildRows(input([env], [parent, stalledChild])).find((row) => row.id === parent.key)).toMatchObject({ rollup: "stalled" });
    const heldChild = { ...running, stalled: true, heldUp: true };
    expect(buildRows(input([env], [parent, heldChild])).find((row) => row.id === parent.key)).toMatchObject({ rollup: "held-up" });
    const quietRoot = agentView("q", "running", { stalled: true });
    const heldRoot = agentView("h", "running", { stalled: true, heldUp: true });
    const rows = buildRows(input([env], [quietRoot, heldRoot, solo], { grouping: "project" }));
    expect(rows[0]).toMatchObject({ kind: "project", counts: { idle: 1, stalled: 1, "held-up": 1 } });
  });

  it("a project names the machine that is away and how many of its agents it holds, never counting them as unknown", () => {
    const away = environmentView({
      environmentId: "b",
      label: "build-box",
      connection: { phase: "offline", since: ago(60_000), lastConfirmedAt: ago(90_000), nextAttemptAt: ago(-5_000), attempt: 3, error: "refused" },
    });
    const offline = (id: string) => agentView(id, "running", { key: `b/${id}`, environmentId: "b", status: "unknown", asOf: ago(90_000) });
    const rows = buildRows(input([env, away], [solo, offline("x"), offline("y")], { grouping: "project" }));
    expect(rows[0]).toMatchObject({ kind: "project", counts: { idle: 1 }, away: [{ env: away, agents: 2 }], unknown: false });
    expect((rows[0] as Extract<Row, { kind: "project" }>).counts).not.toHaveProperty("unknown");
  });

  it("collapsing hides descendants; filters keep a match's parents for context", () => {
    expect(buildRows(input([env], [parent, failing, running, solo], { collapsed: new Set([parent.key]) })).filter((row) => row.kind === "agent")).toHaveLength(
      2,
    );
    const failed = buildRows(input([env], [parent, failing, running, solo], { filters: { ...NO_FILTERS, failed: true } }));
    expect(failed.map(describeRow)).toEqual(["env", "1:Plan", "2:Worker 1"]);
    expect(buildRows(input([env], [parent, failing, running, solo], { search: "sub.plan.w2" })).map(describeRow)).toEqual([
      "env",
      "1:Plan",
      "2:Worker 2",
      "3:sub t1",
    ]);
  });

  it("folds idle agents older than the configured age under 'N older', and opens the fold", () => {
    const old = agentView("old", "idle", { title: "Old", lastActivityAt: ago(3 * DAY) });
    const oldFailed = agentView("oldf", "failed", { title: "Old failure", lastActivityAt: ago(3 * DAY) });
    expect(buildRows(input([env], [solo, old, oldFailed])).map(describeRow)).toEqual(["env", "1:Old failure", "1:Solo", "1 older"]);
    expect(buildRows(input([env], [solo, old], { olderShown: new Set(["env:e"]) })).map(describeRow)).toEqual(["env", "1:Solo", "1 older", "1:Old"]);
    expect(buildRows(input([env], [solo, old], { olderThanMs: 7 * DAY })).map(describeRow)).toEqual(["env", "1:Solo", "1:Old"]);
  });

  it("groups by project with title, repository and branch where the service gives them", () => {
    const a = { ...agentView("a", "idle", { title: "A", projectId: "p1", projectTitle: "Fleet" }), repository: "acme/fleet", branch: "main" };
    const b = agentView("b", "running", { title: "B", projectId: "p2" });
    const rows = buildRows(input([env], [a, b], { grouping: "project" }));
    expect(rows.map(describeRow)).toEqual(["project Fleet", "1:A", "project p2", "1:B"]);
    expect(rows[0]).toMatchObject({ repository: "acme/fleet", branch: "main" });
  });

  it("by project, a project of the same name on several machines is one group naming its machines", () => {
    const laptop = environmentView({ environmentId: "l", label: "laptop" });
    const here = agentView("a", "idle", { title: "Here", projectId: "p1", projectTitle: "t3-fleet" });
    const there = agentView("b", "running", { key: "l/b", environmentId: "l", title: "There", projectId: "other-id", projectTitle: "t3-fleet" });
    const rows = buildRows(input([env, laptop], [here, there], { grouping: "project" }));
    expect(rows.map(describeRow)).toEqual(["project t3-fleet", "1:There", "1:Here"]);
    expect(rows[0]).toMatchObject({ machines: ["laptop", "studio"], counts: { idle: 1, running: 1 } });
  });

  it("the offline filter shows agents whose host is not online", () => {
    const down = environmentView({
      environmentId: "d",
      label: "down",
      connection: { phase: "offline", since: "t", lastConfirmedAt: "t", nextAttemptAt: "t", attempt: 1, error: "x" },
    });
    const lost = agentView("x", "running", { key: "d/x", environmentId: "d", status: "unknown", lastKnownStatus: "running" });
    const rows = buildRows(input([env, down], [solo, lost], { filters: { ...NO_FILTERS, offline: true } }));
    expect(rows.filter((row) => row.kind === "agent").map((row) => row.id)).toEqual(["d/x"]);
  });

  it("`n` visits exactly the agents the header counts, wrapping around, even ones folded or filtered away", () => {
    const agents = new Map([parent, failing, running, orphan, solo].map((a) => [a.key, a]));
    const { counts, needYou } = glance(agents, new Map([[env.environmentId, env]]));
    expect(counts.needsYou).toBe(needYou.length);
    const visited = [nextNeedingYou(needYou, null)];
    while (visited.length < 4) visited.push(nextNeedingYou(needYou, visited.at(-1)!));
    expect(visited).toEqual([orphan.key, failing.key, orphan.key, failing.key]);
  });

  it("while the bridge is lost every agent reads unknown as of then, with its last known status", () => {
    const shown = displayFacts(new Map([[running.key, running]]), ago(0));
    expect(shown.get(running.key)).toMatchObject({ status: "unknown", lastKnownStatus: "running", asOf: ago(0) });
    expect(buildRows(input([env], [running], { bridgeLost: true }))[0]).toMatchObject({ kind: "environment", unknown: true });
  });
});

describe("search and the inbox", () => {
  it("a search marks which rows match; parents kept for context are not selectable", () => {
    const rows = buildRows(input([env], [parent, failing, running, solo], { search: "worker 2" }));
    expect(rows.filter((row) => row.kind === "agent").map((row) => [row.kind === "agent" && row.agent.title, row.kind === "agent" && row.match])).toEqual([
      ["Plan", false],
      ["Worker 2", true],
    ]);
    expect(selectableRows(rows).map((row) => row.agent.title)).toEqual(["Worker 2"]);
    expect(matchParts("Worker 2 of worker pool", "worker")).toEqual([
      { text: "Worker", match: true },
      { text: " 2 of ", match: false },
      { text: "worker", match: true },
      { text: " pool", match: false },
    ]);
  });

  it("lists only what needs the user, most urgent first, within the machine filter, without snoozed agents", () => {
    const older = agentView("q", "needs-input", { title: "Question", lastActivityAt: ago(60_000) });
    const newer = agentView("w", "failed", { key: "f/w", environmentId: "f", title: "Broken", lastActivityAt: ago(1_000) });
    const offlineAsk = agentView("o", "needs-approval", { title: "Asked before the outage", status: "unknown", lastActivityAt: ago(120_000) });
    const agents = new Map([older, newer, offlineAsk, solo].map((a) => [a.key, a]));
    expect(inbox(agents, NO_FILTERS, "", new Map(), NOW).items.map((a) => a.title)).toEqual(["Asked before the outage", "Question", "Broken"]);
    expect(inbox(agents, { ...NO_FILTERS, environmentId: "f" }, "", new Map(), NOW)).toMatchObject({ total: 3, items: [{ title: "Broken" }] });
    const snoozed = new Map([[older.key, { until: null, fingerprint: needFingerprint(older) }]]);
    expect(inbox(agents, NO_FILTERS, "", snoozed, NOW)).toMatchObject({ snoozed: 1, items: [{ title: "Asked before the outage" }, { title: "Broken" }] });
  });

  it("an approval comes before older stalled agents and failures", () => {
    const stalledOld = agentView("s1", "running", { title: "Quiet for an hour", stalled: true, lastActivityAt: ago(3_600_000) });
    const heldOld = agentView("s2", "running", { title: "Held up for an hour", stalled: true, heldUp: true, lastActivityAt: ago(3_000_000) });
    const failedOld = agentView("f", "failed", { title: "Broke", lastActivityAt: ago(600_000) });
    const approval = agentView("a", "needs-approval", { title: "New approval", lastActivityAt: ago(1_000) });
    const agents = new Map([stalledOld, heldOld, failedOld, approval].map((a) => [a.key, a]));
    const order = ["New approval", "Broke", "Quiet for an hour", "Held up for an hour"];
    expect(inbox(agents, NO_FILTERS, "", new Map(), NOW).items.map((a) => a.title)).toEqual(order);
    expect(glance(agents, new Map([[env.environmentId, env]])).needYou.map((a) => a.title)).toEqual(order);
  });

  it("the top bar, the badge and the tab count the same: the whole fleet, filters aside, snoozed and acknowledged apart", () => {
    const asking = agentView("q", "needs-input", { title: "Question" });
    const away = agentView("o", "needs-approval", { key: "f/o", environmentId: "f", status: "unknown", asOf: ago(60_000) });
    const snoozedOne = agentView("z", "failed", { title: "Snoozed" });
    const seen = agentView("x", "failed", { acknowledged: true });
    const agents = new Map([asking, away, snoozedOne, seen, solo].map((a) => [a.key, a]));
    const snoozed = new Map([[snoozedOne.key, { until: null, fingerprint: needFingerprint(snoozedOne) }]]);
    const { counts, needYou } = glance(agents, new Map([[env.environmentId, env]]), snoozed, NOW);
    expect(counts).toMatchObject({ needsYou: 2, snoozed: 1, acknowledged: 1 });
    expect(needYou).toHaveLength(2);
    for (const filters of [NO_FILTERS, { ...NO_FILTERS, environmentId: "f" }, { ...NO_FILTERS, provider: "nobody" }]) {
      expect(inbox(agents, filters, "", snoozed, NOW).total).toBe(counts.needsYou);
    }
  });

  it("a machine going offline and coming back with the same needs changes neither the count nor a snooze until it changes", () => {
    const asking = agentView("q", "needs-input", { title: "Question" });
    const stalled = agentView("s", "running", { stalled: true, title: "Quiet" });
    const snoozed = new Map([[stalled.key, { until: null, fingerprint: needFingerprint(stalled) }]]);
    const online = new Map([asking, stalled].map((a) => [a.key, a]));
    const away = new Map([...online].map(([key, a]) => [key, { ...a, status: "unknown" as const, asOf: ago(0) }]));
    for (const agents of [online, away, online]) {
      expect(glance(agents, new Map(), snoozed, NOW).counts).toMatchObject({ needsYou: 1, snoozed: 1 });
    }
  });

  it("a snooze holds until its time or until what the agent needs changes", () => {
    const asking = agentView("q", "needs-input", { title: "Question" });
    const fingerprint = needFingerprint(asking);
    expect(snoozeHolds({ until: null, fingerprint }, asking, NOW)).toBe(true);
    expect(snoozeHolds({ until: NOW + 1, fingerprint }, asking, NOW)).toBe(true);
    expect(snoozeHolds({ until: NOW, fingerprint }, asking, NOW)).toBe(false);
    expect(snoozeHolds({ until: null, fingerprint }, { ...asking, status: "failed", lastKnownStatus: "failed" }, NOW)).toBe(false);
  });

  it("an agent snoozed in T3 (by this window, another one or T3's own UI) leaves the inbox until T3's wake time", () => {
    const broken = agentView("w", "failed", { title: "Broken", snoozedUntil: new Date(NOW + 60_000).toISOString() });
    const asking = agentView("q", "needs-input", { title: "Question" });
    const agents = new Map([broken, asking].map((a) => [a.key, a]));
    expect(inbox(agents, NO_FILTERS, "", new Map(), NOW)).toMatchObject({ snoozed: 1, items: [{ title: "Question" }] });
    expect(inbox(agents, NO_FILTERS, "", new Map(), NOW + 60_000)).toMatchObject({ snoozed: 0, items: [{}, {}] });
  });
});
