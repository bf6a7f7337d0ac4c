// Protocol 1 → facts: the shared status scenarios built from rows recorded on real servers
// (0.0.24, 0.0.33, 0.0.42), and the rules the real servers taught (issue 7).
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { ThreadDetailFacts } from "../../fleet/facts";
import { type ScenarioInput, type StatusSituation, runStatusScenarios } from "../../fleet/status-scenarios.testkit";
import { decodeWith } from "../decode";
import { ThreadShell } from "./schemas";
import { deriveStatus } from "../../fleet/status";
import { Protocol1Rows, parentThreadIdOf, runStateOfRow } from "./facts";

const fixtures = process.env.T3_FIXTURES_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../../../shared/fixtures");

function recordedRow(name: string, overrides: Record<string, unknown> = {}): ThreadShell {
  const raw = { ...(JSON.parse(readFileSync(resolve(fixtures, name), "utf8")) as object), ...overrides };
  const decoded = decodeWith(ThreadShell, raw, name);
  if (!decoded.ok) throw new Error(decoded.error.message);
  return decoded.value;
}

function recordedShellRow(name: string, threadId: string): ThreadShell {
  const body = (JSON.parse(readFileSync(resolve(fixtures, name), "utf8")) as { body: { threads: { id: string }[] } }).body;
  const raw = body.threads.find((thread) => thread.id.startsWith(threadId));
  const decoded = decodeWith(ThreadShell, raw, name);
  if (!decoded.ok) throw new Error(decoded.error.message);
  return decoded.value;
}

/** A shell row T3 0.0.42 stored in a real-harness case (fixtures/t3-0.0.42-harness-cases/, by integration/realt3/fleet.real.test.ts). */
function harnessCaseRow(name: string, overrides: Record<string, unknown> = {}): ThreadShell {
  const file = resolve(dirname(fileURLToPath(import.meta.url)), "../../../fixtures/t3-0.0.42-harness-cases", `${name}.json`);
  const { row } = JSON.parse(readFileSync(file, "utf8")) as { row: object };
  const decoded = decodeWith(ThreadShell, { ...row, ...overrides }, name);
  if (!decoded.ok) throw new Error(decoded.error.message);
  return decoded.value;
}

const noDetail: ThreadDetailFacts = { pending: [], lastErrorText: null, hiddenFailure: null, subagents: [], activeRunId: null, run: null, lastEventAt: null };

/** A sequence of rows as the shell delivered them, mapped through one adapter's memory. */
function rows(...sequence: ThreadShell[]): ScenarioInput["facts"] {
  const mapper = new Protocol1Rows();
  return sequence.map((row) => mapper.facts(row));
}

const running = () => recordedRow("t3-0.0.42/shell-row-running.json");
const completed = () => recordedRow("t3-0.0.42/shell-row-completed.json");
/** The 0.0.42 recording of a first turn: session starting, then ready with no turn yet. */
function firstTurnRows(): { starting: ThreadShell; readyGap: ThreadShell } {
  const base = completed();
  const userAt = "2026-11-30T00:23:07.175Z";
  const starting = {
    ...base,
    latestTurn: null,
    latestUserMessageAt: userAt,
    updatedAt: userAt,
    session: { ...base.session!, status: "starting" as const, activeTurnId: null, updatedAt: userAt },
  };
  const readyGap = {
    ...starting,
    updatedAt: "2026-11-30T00:23:07.729Z",
    session: { ...starting.session, status: "ready" as const, updatedAt: "2026-11-30T00:23:07.729Z" },
  };
  return { starting, readyGap };
}

function protocol1Scenario(situation: StatusSituation): ScenarioInput | undefined {
  switch (situation) {
    case "never-ran":
      return { facts: rows({ ...completed(), latestTurn: null, session: null, latestUserMessageAt: null }) };
    case "running":
      return { facts: rows(running()) };
    case "turn-completed":
      return { facts: rows(completed()) };
    case "approval-pending-while-running":
      return { facts: rows(recordedRow("t3-0.0.42/shell-row-approval-pending.json")) };
    case "question-pending":
      return { facts: rows({ ...running(), hasPendingUserInput: true }) };
    case "turn-failed":
      return { facts: rows(recordedRow("t3-0.0.42/shell-row-failed.json")) };
    case "turn-could-not-start": {
      // 0.0.24 with no provider CLI: no session at all; only the thread stream tells.
      const row = recordedRow("t3-0.0.24/shell-row-completed.json", { session: null, latestTurn: null });
      return { facts: rows(row), detail: { ...noDetail, hiddenFailure: { reason: "spawn codex ENOENT", runId: null } } };
    }
    case "capacity-limit-on-running-turn": {
      const row = running();
      return { facts: rows(row), detail: { ...noDetail, hiddenFailure: { reason: "Free-tier capacity limit reached", runId: row.session!.activeTurnId } } };
    }
    case "turn-interrupted":
      return { facts: rows(recordedShellRow("t3-0.0.33/http-shell-after-d-interrupted.json", "thread-d")) };
    case "message-sent-no-turn-yet": {
      const row = completed();
      return { facts: rows({ ...row, latestUserMessageAt: "2026-11-30T00:24:00.000Z", updatedAt: "2026-11-30T00:24:00.000Z" }) };
    }
    case "session-starting":
      return { facts: rows(firstTurnRows().starting) };
    case "ready-gap-before-first-turn": {
      const { starting, readyGap } = firstTurnRows();
      return { facts: rows(starting, readyGap) };
    }
    case "answer-final-background-draining":
      return { facts: rows({ ...completed(), backgroundLiveness: "working" }) };
    case "session-stopped":
      return { facts: rows({ ...completed(), session: { ...completed().session!, status: "stopped" } }) };
    case "archived":
      return { facts: rows({ ...completed(), archivedAt: "2026-11-30T00:25:00.000Z" }) };
    case "deleted":
      return { facts: rows({ ...completed(), deletedAt: "2026-11-30T00:25:00.000Z" }) };
    // Protocol 1 has no such states.
    case "auth-refresh-pending":
    case "turn-cancelled":
    case "turn-rolled-back":
    case "queued-behind-active-run":
      return undefined;
  }
}

describe("protocol 1: the shared status scenarios", () => {
  runStatusScenarios(protocol1Scenario);
});

describe("protocol 1: rows → facts", () => {
  it("keeps a turn that was asked for starting through the ready-without-turn gap, until it runs", () => {
    const { starting, readyGap } = firstTurnRows();
    const mapper = new Protocol1Rows();
    expect(mapper.facts(starting).run.phase).toBe("starting");
    expect(mapper.facts(readyGap).run).toEqual({ phase: "requested", since: starting.latestUserMessageAt });
    const runningRow = {
      ...readyGap,
      latestTurn: { ...running().latestTurn!, requestedAt: starting.latestUserMessageAt! },
      session: { ...running().session!, threadId: readyGap.id },
    };
    expect(mapper.facts(runningRow).run.phase).toBe("running");
    // Once the turn ran, a later ready row is what it says.
    const done = {
      ...runningRow,
      latestTurn: { ...runningRow.latestTurn, state: "completed" as const },
      session: { ...runningRow.session, status: "ready" as const, activeTurnId: null },
    };
    expect(mapper.facts(done).run.phase).toBe("completed");
  });

  it("a Codex turn that took a steer and ended is settled, not a turn asked for; a message after it is (issue 39)", () => {
    // Real 0.0.42 with Codex 0.169.0: the steer is newer than the turn's requestedAt, sent before it completed.
    const steered = harnessCaseRow("steered-turn-ended");
    expect(steered.latestUserMessageAt! > steered.latestTurn!.requestedAt).toBe(true);
    expect(steered.latestUserMessageAt! < steered.latestTurn!.completedAt!).toBe(true);
    const mapper = new Protocol1Rows();
    expect(mapper.facts(steered).run).toEqual({ phase: "completed", at: steered.latestTurn!.completedAt });
    expect(deriveStatus(mapper.facts(steered), undefined).status).toBe("idle");
    // OpenCode takes it into the same turn too.
    const opencode = { ...steered, session: { ...steered.session!, providerName: "opencode", providerInstanceId: "opencode" } };
    expect(mapper.facts(opencode).run.phase).toBe("completed");
    // A message sent after the turn ended asks for the next one, through the ready-without-turn gap.
    const after = new Date(Date.parse(steered.latestTurn!.completedAt!) + 1_000).toISOString();
    const next = { ...steered, latestUserMessageAt: after, updatedAt: after };
    expect(mapper.facts(next).run).toEqual({ phase: "requested", since: next.latestUserMessageAt });
  });

  it("a message sent while a Claude turn ran still waits for its own turn; so does one to a harness no test has run", () => {
    const steered = harnessCaseRow("steered-turn-ended");
    const on = (driver: string) => ({ ...steered, session: { ...steered.session!, providerName: driver, providerInstanceId: driver } });
    expect(runStateOfRow(on("claudeAgent"), null)).toEqual({ phase: "requested", since: steered.latestUserMessageAt });
    expect(runStateOfRow(on("grok"), null).phase).toBe("requested");
  });

  it("a fresh reading of a settled 0.0.24 row (latestTurn back to null) is idle, not starting", () => {
    expect(runStateOfRow(recordedRow("t3-0.0.24/shell-row-interrupted.json"), null).phase).toBe("idle");
    expect(runStateOfRow(recordedRow("t3-0.0.24/shell-row-approval-done.json"), null).phase).toBe("idle");
  });

  it("reads interrupted from latestTurn.state, not only from the session", () => {
    const row = recordedShellRow("t3-0.0.33/http-shell-after-d-interrupted.json", "thread-d");
    expect(row.session?.status).toBe("ready");
    expect(runStateOfRow(row, null).phase).toBe("interrupted");
  });

  it("a stale latestTurn running without an active turn is not running", () => {
    const row = running();
    expect(runStateOfRow({ ...row, session: { ...row.session!, status: "ready", activeTurnId: null } }, null).phase).toBe("idle");
  });

  it("a turn that could not start (ready with lastError after the message) is failed with that error", () => {
    const row = completed();
    const failedStart = {
      ...row,
      latestUserMessageAt: "2026-11-30T00:24:00.000Z",
      session: { ...row.session!, lastError: "Requested provider instance 'x' is not configured in this build.", updatedAt: "2026-11-30T00:24:01.000Z" },
    };
    expect(runStateOfRow(failedStart, null)).toEqual({ phase: "failed", reason: expect.stringContaining("not configured") });
  });

  it("an approval T3 still lists under a session that did not survive its restart can no longer be answered, in T3's words (issue 39)", () => {
    const row = harnessCaseRow("approval-across-restart");
    expect(row).toMatchObject({ hasPendingApprovals: true, session: { status: "error", activeTurnId: null } });
    const facts = new Protocol1Rows().facts(row);
    expect(facts.blockedBy).toEqual({ kind: "approval", requestId: null, since: null, unanswerable: row.session!.lastError });
    expect(deriveStatus(facts, undefined)).toEqual({
      status: "failed",
      reason: "The approval can no longer be answered: Provider session did not survive a server restart. Send a new message to continue.",
    });
    // The same row while its session runs is an approval to answer.
    const live = { ...row, session: { ...row.session!, status: "running" as const, activeTurnId: row.latestTurn!.turnId, lastError: null } };
    expect(deriveStatus(new Protocol1Rows().facts(live), undefined).status).toBe("needs-approval");
  });

  it("offers what each harness was seen to do with a message while it runs: Codex and OpenCode take it in the turn, Claude in a new turn, an unrun harness is unobserved", () => {
    const mapper = new Protocol1Rows();
    const on = (driver: string) => ({ ...running(), session: { ...running().session!, providerName: driver, providerInstanceId: driver } });
    expect(mapper.facts(on("codex")).capabilities).toMatchObject({ whileRunning: ["steer"], runningMessage: "interrupts-reply" });
    expect(mapper.facts(on("opencode")).capabilities).toMatchObject({ whileRunning: ["steer"], runningMessage: "after-reply" });
    expect(mapper.facts(on("claudeAgent")).capabilities).toMatchObject({ whileRunning: ["queue"], runningMessage: "next-turn" });
    const grok = { ...running(), modelSelection: { instanceId: "grok", model: "grok-4", options: [] }, session: null };
    expect(mapper.facts(grok).capabilities).toMatchObject({ whileRunning: ["queue"], runningMessage: "unobserved" });
    expect(mapper.facts(on("cursor")).capabilities.runningMessage).toBe("unobserved");
  });

  it("links sub.<parent>.<suffix> children by the id convention", () => {
    expect(parentThreadIdOf("sub.planner.worker1")).toBe("planner");
    expect(parentThreadIdOf("sub.sub.planner.w1.deep")).toBe("sub.planner.w1");
    expect(parentThreadIdOf("planner")).toBeNull();
    expect(new Protocol1Rows().facts({ ...completed(), id: "sub.planner.w1" }).parent).toEqual({ threadId: "planner", relationship: "child-id" });
  });

  it("carries provider, model, effort, mode, title and the project's title", () => {
    const mapper = new Protocol1Rows();
    const row = { ...running(), modelSelection: { instanceId: "codex", model: "gpt-5-codex", options: [{ id: "reasoningEffort", value: "high" }] } };
    mapper.setProject(row.projectId, "Fleet");
    expect(mapper.facts(row)).toMatchObject({
      title: "Slow worker",
      projectTitle: "Fleet",
      provider: { instanceId: "codex", driver: "codex", model: "gpt-5-codex", effort: "high" },
      runtimeMode: "full-access",
      lifecycle: "active",
      activeRunId: row.session!.activeTurnId,
    });
  });

  it("offers T3's snooze only where the descriptor advertises it, and carries the server's wake time whoever snoozed", () => {
    const mapper = new Protocol1Rows();
    expect(mapper.facts(completed()).capabilities.snooze).toBe(false);
    mapper.snoozeSupported = true;
    const snoozed = mapper.facts(completed());
    expect(snoozed.capabilities).toMatchObject({ snooze: true, settle: false });
    expect(snoozed.snoozedUntil).toBeNull();
    expect(mapper.facts(recordedRow("t3-0.0.42/shell-row-completed.json", { snoozedUntil: "2026-12-01T16:05:00.000Z" })).snoozedUntil).toBe(
      "2026-12-01T16:05:00.000Z",
    );
  });
});
