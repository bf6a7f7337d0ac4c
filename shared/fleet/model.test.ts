import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { beforeEach, describe, expect, it } from "vitest";
import { decodeWith } from "../t3/decode";
import { Protocol1Rows } from "../t3/protocol1/facts";
import { ThreadShell } from "../t3/protocol1/schemas";
import type { AgentFacts, MessageOutcome, RequestEnd, ThreadDetailFacts } from "./facts";
import { type FleetChange, FleetModel, LEFT_ROWS_KEPT_MS } from "./model";
import { NotificationPolicy } from "./notifications";
import { STUCK_STARTING_MS } from "./status";
import type { ConnectionPhase } from "./types";
import { needsYou } from "./views";

const fixtures = process.env.T3_FIXTURES_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../../shared/fixtures");
function recordedRow(name: string, overrides: Record<string, unknown> = {}): ThreadShell {
  const raw = { ...(JSON.parse(readFileSync(resolve(fixtures, name), "utf8")) as object), ...overrides };
  const decoded = decodeWith(ThreadShell, raw, name);
  if (!decoded.ok) throw new Error(decoded.error.message);
  return decoded.value;
}

const ONLINE: ConnectionPhase = { phase: "online", since: "2026-11-29T10:00:00.000Z" };
const offline = (lastConfirmedAt: string): ConnectionPhase => ({
  phase: "offline",
  since: "2026-11-29T10:05:00.000Z",
  lastConfirmedAt,
  nextAttemptAt: "2026-11-29T10:05:02.000Z",
  attempt: 1,
  error: "connection refused",
});
const noDetail: ThreadDetailFacts = { pending: [], lastErrorText: null, hiddenFailure: null, subagents: [], activeRunId: null, run: null, lastEventAt: null };

let clock = Date.parse("2026-11-29T10:00:00.000Z");
let model: FleetModel;
let changes: FleetChange[];
/** The model is fed by the protocol-1 mapping, as the protocol-1 adapter feeds it. */
let rows: Protocol1Rows;

beforeEach(() => {
  clock = Date.parse("2026-11-29T10:00:00.000Z");
  rows = new Protocol1Rows();
  model = new FleetModel({ stalledAfterMs: 60_000, now: () => clock });
  changes = [];
  model.subscribe((change) => changes.push(change));
  model.upsertEnvironment(
    { environmentId: "env-a", label: "studio", baseUrl: "http://a", serverVersion: "0.0.33", generation: "upstream", readOnly: false, muted: false },
    ONLINE,
  );
});

function snapshot(...threads: ThreadShell[]) {
  model.applyFleetSnapshot(
    "env-a",
    threads.map((row) => rows.facts(row)),
  );
}

function upsert(row: ThreadShell) {
  model.upsertAgent("env-a", rows.facts(row));
}

describe("status derivation from recorded rows", () => {
  it.each([
    ["t3-0.0.24/shell-row-running.json", "running"],
    ["t3-0.0.24/shell-row-completed.json", "idle"],
    ["t3-0.0.24/shell-row-failed.json", "failed"],
    ["t3-0.0.24/shell-row-approval-pending.json", "needs-approval"],
    ["t3-0.0.24/shell-row-approval-done.json", "idle"],
    ["t3-0.0.24/shell-row-interrupted.json", "idle"],
    ["t3-0.0.42/shell-row-running.json", "running"],
    ["t3-0.0.42/shell-row-completed.json", "idle"],
    ["t3-0.0.42/shell-row-failed.json", "failed"],
    ["t3-0.0.42/shell-row-approval-pending.json", "needs-approval"],
    ["t3-0.0.42/shell-row-approval-done.json", "idle"],
  ])("%s is %s", (name, status) => {
    snapshot(recordedRow(name));
    expect([...model.agents()][0]!.status).toBe(status);
  });

  it("a pending approval outranks a ready session (observed on 0.0.24)", () => {
    const row = recordedRow("t3-0.0.24/shell-row-approval-pending.json");
    expect(row.session?.status).toBe("ready");
    snapshot(row);
    expect([...model.agents()][0]!.status).toBe("needs-approval");
  });

  it("a stale latestTurn running without an active turn is not running", () => {
    const row = recordedRow("t3-0.0.24/shell-row-running.json");
    snapshot({ ...row, session: { ...row.session!, status: "ready", activeTurnId: null } });
    expect([...model.agents()][0]!.status).toBe("idle");
  });

  it("a turn that could not start (session null, start failure) is failed with the reason", () => {
    const row = recordedRow("t3-0.0.24/shell-row-completed.json", { session: null, latestTurn: null });
    snapshot(row);
    model.setThreadDetail("env-a", row.id, { ...noDetail, hiddenFailure: { reason: "spawn codex ENOENT", runId: null } });
    expect(model.agent(`env-a/${row.id}`)).toMatchObject({ status: "failed", reason: "spawn codex ENOENT" });
  });

  it("a start failure no longer counts once the user sent another message", () => {
    const row = recordedRow("t3-0.0.24/shell-row-completed.json", { session: null, latestTurn: null });
    snapshot(row);
    model.setThreadDetail("env-a", row.id, { ...noDetail, hiddenFailure: { reason: "spawn codex ENOENT", runId: null, at: "2026-11-29T13:59:02.000Z" } });
    expect(model.agent(`env-a/${row.id}`)!.status).toBe("failed");
    upsert({ ...row, latestUserMessageAt: "2026-11-29T14:10:00.000Z", updatedAt: "2026-11-29T14:10:00.000Z" });
    expect(model.agent(`env-a/${row.id}`)).toMatchObject({ status: "starting", reason: "Turn requested" });
  });

  it("a capacity warning on the running turn is running but held up: stalled look, needs you, a held-up notice once, never a failure notice", () => {
    const row = recordedRow("t3-0.0.24/shell-row-running.json");
    snapshot(row);
    const policy = new NotificationPolicy();
    policy.environmentChanged(model.environments()[0]!);
    policy.agentChanged(model.agent(`env-a/${row.id}`)!);
    model.setThreadDetail("env-a", row.id, { ...noDetail, hiddenFailure: { reason: "Free-tier capacity limit reached", runId: row.session!.activeTurnId } });
    const agent = model.agent(`env-a/${row.id}`)!;
    expect(agent).toMatchObject({ status: "running", heldUp: true, stalled: true, reason: "Free-tier capacity limit reached" });
    expect(model.counts().byStatus.failed ?? 0).toBe(0);
    expect(needsYou(agent)).toBe(true);
    expect(policy.agentChanged(agent)).toEqual([expect.objectContaining({ reason: "held-up", title: "Slow worker is held up by its provider" })]);
    expect(policy.agentChanged(agent)).toEqual([]);
    // Once the provider goes on (the warning is gone), the run is an ordinary running one.
    model.setThreadDetail("env-a", row.id, { ...noDetail, lastEventAt: "2026-11-29T10:06:00.000Z" });
    expect(model.agent(`env-a/${row.id}`)).toMatchObject({ status: "running", heldUp: false, stalled: false });
  });
});

describe("offline truth", () => {
  it("agents of an unreachable environment are unknown with the last known status and as-of time", () => {
    snapshot(recordedRow("t3-0.0.24/shell-row-running.json"));
    model.setPhase("env-a", offline("2026-11-29T10:04:58.000Z"));
    const agent = [...model.agents()][0]!;
    expect(agent).toMatchObject({ status: "unknown", lastKnownStatus: "running", asOf: "2026-11-29T10:04:58.000Z" });
    expect(model.counts()).toMatchObject({ byStatus: { unknown: 1 }, hostsDown: 1, needsYou: 0 });
    model.setPhase("env-a", ONLINE);
    expect([...model.agents()][0]!.status).toBe("running");
  });

  it("a stalled or held-up run stays so while its machine is away (as of), and still needs you: the count holds", () => {
    const stalledRow = recordedRow("t3-0.0.24/shell-row-running.json");
    const heldRow = { ...recordedRow("t3-0.0.24/shell-row-running.json"), id: "held" };
    snapshot(stalledRow, heldRow);
    model.setThreadDetail("env-a", "held", {
      ...noDetail,
      hiddenFailure: { reason: "Free-tier capacity limit reached", runId: heldRow.session!.activeTurnId },
    });
    clock += 61_000;
    model.checkStalls();
    expect(model.counts().needsYou).toBe(2);
    model.setPhase("env-a", offline("2026-11-29T10:01:01.000Z"));
    expect(model.agent(`env-a/${stalledRow.id}`)).toMatchObject({ status: "unknown", lastKnownStatus: "running", stalled: true, heldUp: false });
    expect(model.agent("env-a/held")).toMatchObject({ status: "unknown", lastKnownStatus: "running", stalled: true, heldUp: true });
    expect(model.counts().needsYou).toBe(2);
    model.setPhase("env-a", ONLINE);
    expect(model.counts().needsYou).toBe(2);
  });

  it("a running agent does not turn stalled while its machine is away: no news is not a stall", () => {
    const row = recordedRow("t3-0.0.24/shell-row-running.json");
    snapshot(row);
    model.setPhase("env-a", offline("2026-11-29T10:00:00.000Z"));
    clock += 120_000;
    model.checkStalls();
    model.setStalledAfter(60_000);
    expect(model.agent(`env-a/${row.id}`)).toMatchObject({ status: "unknown", stalled: false });
    expect(model.counts().needsYou).toBe(0);
  });

  it("an acknowledged stall stays acknowledged through an outage", () => {
    const row = recordedRow("t3-0.0.24/shell-row-running.json");
    snapshot(row);
    clock += 61_000;
    model.checkStalls();
    const key = `env-a/${row.id}`;
    model.setAcknowledgement(key, model.acknowledgeable(key));
    expect(model.agent(key)!.acknowledged).toBe(true);
    model.setPhase("env-a", offline("2026-11-29T10:01:01.000Z"));
    expect(model.agent(key)!.acknowledged).toBe(true);
    expect(model.acknowledgeable(key)).not.toBeNull();
    expect(model.counts()).toMatchObject({ needsYou: 0, acknowledged: 1 });
  });
});

describe("children and roll-ups", () => {
  const parent = () => recordedRow("t3-0.0.24/shell-row-completed.json", { id: "planner" });
  const child = (suffix: string, file: string) => recordedRow(file, { id: `sub.planner.${suffix}` });

  it("nests sub.<parent>.<suffix> threads, rolls up the worst child, and marks orphans", () => {
    snapshot(parent(), child("w1", "t3-0.0.24/shell-row-running.json"), child("w2", "t3-0.0.24/shell-row-failed.json"));
    expect(
      model
        .childrenOf("env-a", "planner")
        .map((a) => a.threadId)
        .sort(),
    ).toEqual(["sub.planner.w1", "sub.planner.w2"]);
    expect(model.rollup("env-a", "planner")).toBe("failed");
    expect(model.agent("env-a/sub.planner.w1")!.orphaned).toBe(false);

    snapshot(child("w1", "t3-0.0.24/shell-row-running.json"));
    expect(model.agent("env-a/sub.planner.w1")).toMatchObject({ orphaned: true, parentThreadId: "planner" });
    snapshot(parent(), child("w1", "t3-0.0.24/shell-row-running.json"));
    expect(model.agent("env-a/sub.planner.w1")!.orphaned).toBe(false);
  });

  it("grandchildren roll up through their parent", () => {
    snapshot(
      parent(),
      child("w1", "t3-0.0.24/shell-row-completed.json"),
      recordedRow("t3-0.0.24/shell-row-approval-pending.json", { id: "sub.sub.planner.w1.deep" }),
    );
    expect(model.rollup("env-a", "planner")).toBe("needs-approval");
  });

  it("stalled and held-up children roll up as themselves, in the parent's roll-up and the machine's counts", () => {
    snapshot(parent(), child("w1", "t3-0.0.24/shell-row-running.json"), child("w2", "t3-0.0.24/shell-row-running.json"));
    expect(model.rollup("env-a", "planner")).toBe("running");
    model.setThreadDetail("env-a", "sub.planner.w2", {
      ...noDetail,
      hiddenFailure: { reason: "capacity", runId: model.agent("env-a/sub.planner.w2")!.activeRunId },
    });
    expect(model.rollup("env-a", "planner")).toBe("held-up");
    expect(model.environment("env-a")!.counts).toMatchObject({ running: 1, "held-up": 1 });
    clock += 61_000;
    model.checkStalls();
    expect(model.rollup("env-a", "planner")).toBe("stalled");
    expect(model.environment("env-a")!.counts).toEqual({ idle: 1, stalled: 1, "held-up": 1 });
  });
});

describe("incremental application", () => {
  it("one delta publishes one agent, whatever the fleet size", () => {
    const base = recordedRow("t3-0.0.24/shell-row-completed.json");
    snapshot(...Array.from({ length: 2_000 }, (_, i) => ({ ...base, id: `t-${i}` })));
    changes.length = 0;
    upsert({ ...base, id: "t-7", title: "renamed" });
    expect(changes).toHaveLength(1);
    expect(changes[0]!.agents.map((a) => a.threadId)).toEqual(["t-7"]);
    expect(changes[0]!.environments).toHaveLength(0);
  });

  it("a removed thread stays as ended until the next snapshot; deleted and archived once known", () => {
    const row = recordedRow("t3-0.0.24/shell-row-completed.json");
    snapshot(row);
    model.removeAgent("env-a", row.id, "archived-or-deleted");
    expect(model.agent(`env-a/${row.id}`)).toMatchObject({ status: "ended", reason: "Archived or deleted" });
    model.removeAgent("env-a", row.id, "deleted");
    expect(model.agent(`env-a/${row.id}`)).toMatchObject({ status: "deleted", lifecycle: "deleted" });
    snapshot();
    expect(model.agent(`env-a/${row.id}`)).toBeUndefined();
    snapshot(row);
    model.removeAgent("env-a", row.id, "archived");
    expect(model.agent(`env-a/${row.id}`)).toMatchObject({ status: "ended", reason: "Archived" });
  });

  it("a thread that left the stream while blocked waits on nobody: ended, or deleted once known, not needs-approval", () => {
    const row = recordedRow("t3-0.0.24/shell-row-approval-pending.json");
    snapshot(row);
    expect(model.agent(`env-a/${row.id}`)).toMatchObject({ status: "needs-approval" });
    model.removeAgent("env-a", row.id, "archived-or-deleted");
    expect(model.agent(`env-a/${row.id}`)).toMatchObject({ status: "ended", reason: "Archived or deleted" });
    model.removeAgent("env-a", row.id, "deleted");
    expect(model.agent(`env-a/${row.id}`)).toMatchObject({ status: "deleted", lifecycle: "deleted" });
    expect(model.counts().needsYou).toBe(0);
  });

  it("a thread that left the stream keeps its row for LEFT_ROWS_KEPT_MS, then the row goes; one that comes back stays", () => {
    const row = recordedRow("t3-0.0.24/shell-row-completed.json");
    const back = { ...row, id: "comes-back" };
    snapshot(row, back);
    model.removeAgent("env-a", row.id, "deleted");
    clock += 1_000;
    model.removeAgent("env-a", back.id, "archived-or-deleted");
    expect(model.checkStalls()).toBe(clock - 1_000 + LEFT_ROWS_KEPT_MS);
    upsert({ ...back, updatedAt: "2026-11-29T10:05:00.000Z" });
    clock += LEFT_ROWS_KEPT_MS;
    changes.length = 0;
    expect(model.checkStalls()).toBeNull();
    expect(model.agent(`env-a/${row.id}`)).toBeUndefined();
    expect(changes.flatMap((change) => change.removed)).toEqual([`env-a/${row.id}`]);
    expect(model.agent("env-a/comes-back")).toMatchObject({ lifecycle: "active" });
  });

  it("a row that left is due when it goes, sooner than a stall armed further out (the service re-arms on the soonest)", () => {
    const running = recordedRow("t3-0.0.24/shell-row-running.json");
    const gone = { ...recordedRow("t3-0.0.24/shell-row-completed.json"), id: "gone" };
    const slow = new FleetModel({ stalledAfterMs: 2 * LEFT_ROWS_KEPT_MS, now: () => clock });
    slow.upsertEnvironment(
      { environmentId: "env-a", label: "laptop", baseUrl: "http://a", serverVersion: "0.0.33", generation: "upstream", readOnly: false, muted: false },
      ONLINE,
    );
    slow.applyFleetSnapshot("env-a", [rows.facts(running), rows.facts(gone)]);
    expect(slow.deadlineOf(`env-a/${running.id}`)).toBe(clock + 2 * LEFT_ROWS_KEPT_MS);
    expect(slow.deadlineOf("env-a/gone")).toBeNull();
    slow.removeAgent("env-a", "gone", "deleted");
    expect(slow.deadlineOf("env-a/gone")).toBe(clock + LEFT_ROWS_KEPT_MS);
  });

  it("quiet is measured on the watched clock: an hour of wall clock with the watched clock still (asleep) is no stall", () => {
    let watched = 0;
    const asleep = new FleetModel({ stalledAfterMs: 60_000, now: () => clock, watchedNow: () => watched });
    asleep.upsertEnvironment(
      { environmentId: "env-b", label: "laptop", baseUrl: "http://b", serverVersion: "0.0.33", generation: "upstream", readOnly: false, muted: false },
      ONLINE,
    );
    const row = recordedRow("t3-0.0.24/shell-row-running.json");
    asleep.applyFleetSnapshot("env-b", [rows.facts(row)]);
    clock += 60 * 60_000;
    expect(asleep.checkStalls()).toBe(clock + 60_000);
    expect(asleep.agent(`env-b/${row.id}`)!.stalled).toBe(false);
    watched += 61_000;
    asleep.checkStalls();
    expect(asleep.agent(`env-b/${row.id}`)!.stalled).toBe(true);
  });

  it("flags a running agent stalled after the quiet time and clears it on activity", () => {
    const row = recordedRow("t3-0.0.24/shell-row-running.json");
    snapshot(row);
    expect(model.checkStalls()).toBe(clock + 60_000);
    clock += 61_000;
    model.checkStalls();
    expect(model.agent(`env-a/${row.id}`)!.stalled).toBe(true);
    upsert({ ...row, updatedAt: "2026-11-29T10:01:01.000Z" });
    expect(model.agent(`env-a/${row.id}`)!.stalled).toBe(false);
    clock += 20_000;
    model.setStalledAfter(10_000); // the user shortens the quiet time
    expect(model.agent(`env-a/${row.id}`)!.stalled).toBe(true);
    model.setStalledAfter(30_000); // and lengthens it again
    expect(model.agent(`env-a/${row.id}`)!.stalled).toBe(false);
  });
});

describe("activity, stuck starts and lineage (issue 7, issue 8)", () => {
  it("the stalled clock restarts only on real activity, not on a re-sent row", () => {
    const row = recordedRow("t3-0.0.42/shell-row-running.json");
    snapshot(row);
    clock += 50_000;
    snapshot({ ...row }); // a reconnect's snapshot: a new row object, nothing changed
    upsert({ ...row });
    clock += 11_000;
    model.checkStalls();
    expect(model.agent(`env-a/${row.id}`)!.stalled).toBe(true);
    model.setThreadDetail("env-a", row.id, { ...noDetail, lastEventAt: "2026-11-30T00:23:13.000Z" });
    expect(model.agent(`env-a/${row.id}`)!.stalled).toBe(false);
    clock += 61_000;
    model.setThreadDetail("env-a", row.id, { ...noDetail, lastEventAt: "2026-11-30T00:23:13.000Z" }); // the same event again
    expect(model.agent(`env-a/${row.id}`)!.stalled).toBe(true);
  });

  it("a start that lasts longer than the bound is stuck, and the next check is scheduled for it", () => {
    const row = recordedRow("t3-0.0.42/shell-row-completed.json");
    const starting = { ...row, latestTurn: null, session: { ...row.session!, status: "starting" as const, activeTurnId: null } };
    snapshot(starting);
    expect(model.agent(`env-a/${row.id}`)!.status).toBe("starting");
    expect(model.checkStalls()).toBe(clock + STUCK_STARTING_MS);
    clock += STUCK_STARTING_MS;
    model.checkStalls();
    expect(model.agent(`env-a/${row.id}`)).toMatchObject({ status: "stuck", reason: expect.stringContaining("Stop it, or send anyway") });
    expect(model.counts().needsYou).toBe(1);
    upsert({ ...row, updatedAt: "2026-11-30T00:30:00.000Z" });
    expect(model.agent(`env-a/${row.id}`)!.status).toBe("idle");
  });

  it("a queued row without a position (protocol 2's shell) takes its queue position from the followed thread", () => {
    const base = rows.facts(recordedRow("t3-0.0.42/shell-row-completed.json"));
    model.applyFleetSnapshot("env-a", [{ ...base, threadId: "waiting-in-line", activeRunId: null, run: { phase: "queued", position: null } }]);
    expect(model.agent("env-a/waiting-in-line")).toMatchObject({ status: "queued", reason: "Queued after the active run" });
    model.setThreadDetail("env-a", "waiting-in-line", { ...noDetail, run: { phase: "queued", position: 2 } });
    expect(model.agent("env-a/waiting-in-line")).toMatchObject({ status: "queued", reason: "Queued (position 2)" });
  });

  it("nests children by their lineage, with fork and subagent relationships", () => {
    const base = rows.facts(recordedRow("t3-0.0.42/shell-row-completed.json"));
    const facts = (threadId: string, parent: AgentFacts["parent"]): AgentFacts => ({ ...base, threadId, parent });
    model.applyFleetSnapshot("env-a", [
      facts("root", null),
      facts("forked", { threadId: "root", relationship: "fork" }),
      facts("delegated", { threadId: "root", relationship: "subagent" }),
    ]);
    expect(
      model
        .childrenOf("env-a", "root")
        .map((agent) => [agent.threadId, agent.relationship])
        .sort(),
    ).toEqual([
      ["delegated", "subagent"],
      ["forked", "fork"],
    ]);
    model.upsertAgent("env-a", facts("forked", null));
    expect(model.childrenOf("env-a", "root").map((agent) => agent.threadId)).toEqual(["delegated"]);
  });

  it("shows a native subagent once: under its parent until its child thread appears, then as that child", () => {
    const base = rows.facts(recordedRow("t3-0.0.42/shell-row-running.json"));
    model.applyFleetSnapshot("env-a", [{ ...base, threadId: "root", parent: null }]);
    const subagent = { id: "sa-1", status: "running" as const, title: "Explore", kind: "app_owned", model: null, childThreadId: "child-1", updatedAt: "t" };
    model.setThreadDetail("env-a", "root", { ...noDetail, subagents: [subagent, { ...subagent, id: "sa-2", childThreadId: null }] });
    expect(model.agent("env-a/root")!.subagents.map((s) => s.id)).toEqual(["sa-1", "sa-2"]);
    model.upsertAgent("env-a", { ...base, threadId: "child-1", parent: { threadId: "root", relationship: "subagent" } });
    expect(model.agent("env-a/root")!.subagents.map((s) => s.id)).toEqual(["sa-2"]);
    expect(model.childrenOf("env-a", "root").map((agent) => agent.threadId)).toEqual(["child-1"]);
  });
});

/** Whether what `make` returns is garbage once it has run: a full collection after the current job. */
async function collectedAfter(make: () => object): Promise<boolean> {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const ref = new WeakRef(make());
  // A WeakRef keeps its target alive until the job that made it ends.
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  return ref.deref() === undefined;
}

describe("memory", () => {
  it("a row keeps no thread's outcome of every message or end of every request (the followed thread has them, for its deliveries)", async () => {
    const row = recordedRow("t3-0.0.24/shell-row-completed.json", { session: null, latestTurn: null });
    snapshot(row);
    const collected = await collectedAfter(() => {
      const outcomes: Record<string, MessageOutcome> = { "message-1": { runId: "run-1", how: "started", queuePosition: null } };
      const hiddenFailure = { reason: "spawn codex ENOENT", runId: null };
      model.setThreadDetail("env-a", row.id, { ...noDetail, hiddenFailure, messageOutcomes: outcomes });
      return outcomes;
    });
    expect(collected).toBe(true);
    const endsCollected = await collectedAfter(() => {
      const requestEnds: Record<string, RequestEnd> = { "request-1": { how: "resolved", decision: "accept" } };
      model.setThreadDetail("env-a", row.id, { ...noDetail, hiddenFailure: { reason: "spawn codex ENOENT", runId: null }, requestEnds });
      return requestEnds;
    });
    expect(endsCollected).toBe(true);
    // The row took the rest of the detail.
    expect(model.agent(`env-a/${row.id}`)).toMatchObject({ status: "failed", reason: "spawn codex ENOENT" });
  });
});

describe("children index under churn (issue 43)", () => {
  it("1,000 parents that came and went with their children leave the index as it was", () => {
    const base = rows.facts(recordedRow("t3-0.0.42/shell-row-completed.json"));
    const facts = (threadId: string, parentId: string | null): AgentFacts => ({
      ...base,
      threadId,
      parent: parentId ? { threadId: parentId, relationship: "subagent" } : null,
    });
    const staying = [facts("root", null), facts("root-child", "root")];
    model.applyFleetSnapshot("env-a", staying);
    const before = model.parentsIndexed;
    for (let index = 0; index < 1_000; index++) {
      model.applyFleetSnapshot("env-a", [...staying, facts(`parent-${index}`, null), facts(`child-${index}`, `parent-${index}`)]);
      model.applyFleetSnapshot("env-a", staying);
    }
    expect(model.parentsIndexed).toBe(before);
    // The staying parent keeps its child.
    expect(model.childrenOf("env-a", "root").map((agent) => agent.threadId)).toEqual(["root-child"]);
  });
});

describe("review items (issue 40)", () => {
  const files = (count: number) => Array.from({ length: count }, (_, index) => ({ path: `f${index}`, kind: "modified" as const, additions: 1, deletions: 0 }));
  const turn = (turnCount: number) => ({ turnCount, runId: null, status: "ready" as const, files: files(3), completedAt: null });

  it("an agent that finished with changes needs the user while the setting lists them, until its latest turn is marked reviewed", () => {
    const row = recordedRow("t3-0.0.24/shell-row-completed.json");
    snapshot(row);
    const key = `env-a/${row.id}`;
    model.setThreadDetail("env-a", row.id, { ...noDetail, changes: [turn(1)] });
    expect(model.agent(key)?.review).toBeUndefined();
    expect(model.counts().needsYou).toBe(0);
    model.setReviewsListed(true);
    expect(model.agent(key)?.review).toBe(true);
    expect(model.counts().needsYou).toBe(1);
    model.setReviewed(key, 1);
    expect(model.agent(key)?.review).toBeUndefined();
    expect(model.counts().needsYou).toBe(0);
    // A later turn that changes files needs the user again; the undo puts back what was reviewed before.
    model.setThreadDetail("env-a", row.id, { ...noDetail, changes: [turn(1), turn(2)] });
    expect(model.counts().needsYou).toBe(1);
    model.setReviewed(key, 2);
    model.setReviewed(key, 1);
    expect(model.agent(key)?.review).toBe(true);
    model.setReviewsListed(false);
    expect(model.counts().needsYou).toBe(0);
  });
});
