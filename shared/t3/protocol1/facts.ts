// Protocol 1 → neutral facts (docs/t3-protocols.md, "Protocol 1: wire → facts"): how a shell row
// of a protocol-1 server (both auth generations) becomes an agent's facts. Pure; the stateful parts
// of the protocol-1 adapter live in electron/fleet/t3/protocol1/ (adapter.ts, fleet-stream.ts).
import type { AgentCapabilities, AgentFacts, RunState } from "../../fleet/facts";
import { StringPool, TIMESTAMP_POOL_LIMIT } from "../../fleet/string-pool";
import { observedHarness, runningModeOf } from "./harnesses";
import type { ThreadShell } from "./schemas";

const CHILD_THREAD_ID = /^sub\.(.+)\.([^.]+)$/;

/** `sub.<parentThreadId>.<suffix>` → parent id; null for ordinary threads. */
export function parentThreadIdOf(threadId: string): string | null {
  return CHILD_THREAD_ID.exec(threadId)?.[1] ?? null;
}

/** Effort or reasoning option of a model selection, whatever the provider calls it. */
export function effortOf(options: readonly { id: string; value: string | boolean | number }[]): string | null {
  const option = options.find((candidate) => ["reasoningEffort", "effort", "reasoning", "variant"].includes(candidate.id));
  return option ? String(option.value) : null;
}

/** The capability sets in use, each one frozen object shared by every row that has it. */
const CAPABILITIES = new Map<string, AgentCapabilities>();

/** What the fleet can do with a protocol-1 thread of `driver`: what that harness was seen to do (./harnesses.ts). */
export function protocol1Capabilities(driver: string, settle = false, snooze = false, observed = true): AgentCapabilities {
  const { runningMessage } = observed ? observedHarness(driver) : observedHarness(null);
  const key = `${runningMessage}:${settle}:${snooze}`;
  let capabilities = CAPABILITIES.get(key);
  if (!capabilities) {
    capabilities = Object.freeze({
      whileRunning: Object.freeze([runningModeOf(runningMessage)]) as AgentCapabilities["whileRunning"],
      runningMessage,
      interrupt: true,
      stop: true,
      cancelQueued: false,
      answer: true,
      settle,
      snooze,
    });
    CAPABILITIES.set(key, capabilities);
  }
  return capabilities;
}

/** Run states without data are shared (frozen) rather than allocated per row. */
const IDLE: RunState = Object.freeze({ phase: "idle" });
const STOPPED: RunState = Object.freeze({ phase: "stopped" });
const INTERRUPTED: RunState = Object.freeze({ phase: "interrupted" });

/**
 * The run state a row shows. `requestedAt` is the latest user message the adapter saw waiting for a
 * turn (see `Protocol1Rows`): between "starting" and "running" real servers report the session ready
 * with no active turn for up to 2 s, which is still a turn asked for, not idle.
 */
export function runStateOfRow(row: ThreadShell, requestedAt: string | null): RunState {
  const session = row.session;
  const turn = row.latestTurn;
  const activeTurnId = session?.activeTurnId ?? null;
  const userAt = row.latestUserMessageAt ?? null;
  if (session?.status === "error") return { phase: "failed", reason: session.lastError };
  if (session?.status === "running" && activeTurnId) return { phase: "running", since: turn?.turnId === activeTurnId ? turn.startedAt : null, note: null };
  // A message newer than the latest turn: a turn was asked for and none started for it yet, unless
  // the turn took it in while it ran (a steer; T3 keeps the turn's requestedAt).
  const requested =
    userAt !== null &&
    activeTurnId === null &&
    (turn
      ? userAt > turn.requestedAt && !foldedIntoTurn(userAt, turn, session?.providerName ?? null)
      : session === null || userAt > session.updatedAt || requestedAt === userAt);
  if (turn?.state === "error" && !requested) return { phase: "failed", reason: session?.lastError ?? null };
  if (session?.status === "starting") return { phase: "starting", since: userAt ?? session.updatedAt };
  // A turn that could not start sends the session back to ready (or stopped) with lastError (docs/t3-protocols.md).
  if (session?.lastError && userAt !== null && session.updatedAt >= userAt && activeTurnId === null) return { phase: "failed", reason: session.lastError };
  if (requested) return { phase: "requested", since: userAt };
  if (row.backgroundLiveness === "working") return { phase: "waiting", note: "Subagents still working" };
  if (session?.status === "stopped") return STOPPED;
  if (turn?.state === "interrupted" || session?.status === "interrupted") return INTERRUPTED;
  if (turn?.state === "completed") return { phase: "completed", at: turn.completedAt };
  return IDLE;
}

/**
 * A message sent while `turn` ran, to a harness that takes such a message into the running turn
 * (./harnesses.ts: Codex and OpenCode), ended with that turn: T3 0.0.42 then shows it newer than the
 * turn's request with no turn to come (../../../docs/t3-protocols.md, "Harnesses under T3"). Claude's
 * waits for a turn of its own, and a harness no test has run is not assumed to steer.
 */
function foldedIntoTurn(userAt: string, turn: NonNullable<ThreadShell["latestTurn"]>, driver: string | null): boolean {
  if (turn.state === "running" || turn.completedAt === null || userAt > turn.completedAt) return false;
  if (turn.startedAt !== null && userAt < turn.startedAt) return false;
  return runningModeOf(observedHarness(driver).runningMessage) === "steer";
}

/** Whether a run state still waits for its turn to run, so the request is remembered. */
function waitsForTurn(run: RunState): boolean {
  return run.phase === "requested" || run.phase === "starting";
}

/**
 * One environment's protocol-1 rows → facts. Remembers, per thread, the user message that asked
 * for a turn until the turn runs or fails, so the ready-without-turn gap reads as starting.
 */
export class Protocol1Rows {
  private readonly requested = new Map<string, string>();
  private readonly projectTitles = new Map<string, string>();
  private readonly projectRoots = new Map<string, string>();
  /** The descriptor advertises T3's thread settlement (`capabilities.threadSettlement`). */
  settleSupported = false;
  /** The descriptor advertises T3's thread snooze (`capabilities.threadSnooze`). */
  snoozeSupported = false;
  /**
   * The harness table (./harnesses.ts) was observed on upstream servers (0.0.42); no real harness ran
   * under a fork-era server (0.0.24), so there every harness is unobserved.
   */
  harnessesObserved = true;
  /** Names rows repeat, shared across this environment's facts; timestamps apart, so they cannot evict the names. */
  private readonly names = new StringPool();
  private readonly times = new StringPool(TIMESTAMP_POOL_LIMIT);

  setProject(projectId: string, title: string | null, workspaceRoot?: string): void {
    if (title === null) this.projectTitles.delete(projectId);
    else this.projectTitles.set(projectId, title);
    if (title === null || workspaceRoot === undefined) this.projectRoots.delete(projectId);
    else this.projectRoots.set(projectId, workspaceRoot);
  }

  /** The environment's projects as the shell lists them (not deleted), for the "New agent" form. */
  projects(): { id: string; title: string; workspaceRoot: string | null }[] {
    return [...this.projectTitles].map(([id, title]) => ({ id, title, workspaceRoot: this.projectRoots.get(id) ?? null }));
  }

  /** Facts of one row; `lifecycle` overrides what the row says (a removal seen on the stream). */
  facts(row: ThreadShell): AgentFacts {
    const run = runStateOfRow(row, this.requested.get(row.id) ?? null);
    if (waitsForTurn(run) && row.latestUserMessageAt) this.requested.set(row.id, row.latestUserMessageAt);
    else this.requested.delete(row.id);
    const session = row.session;
    const intern = <T extends string | null | undefined>(value: T) => this.names.intern(value);
    const time = <T extends string | null | undefined>(value: T) => this.times.intern(value);
    const instanceId = intern(session?.providerInstanceId ?? row.modelSelection.instanceId);
    const driver = intern(session?.providerName ?? null);
    const parentId = parentThreadIdOf(row.id);
    return {
      threadId: row.id,
      projectId: intern(row.projectId),
      projectTitle: this.projectTitles.get(row.projectId) ?? null,
      workspaceRoot: this.projectRoots.get(row.projectId) ?? null,
      branch: intern(row.branch),
      worktreePath: row.worktreePath,
      title: row.title,
      provider: { instanceId, driver, model: intern(row.modelSelection.model), effort: intern(effortOf(row.modelSelection.options)) },
      runtimeMode: intern(row.runtimeMode),
      interactionMode: intern(row.interactionMode),
      parent: parentId ? { threadId: intern(parentId), relationship: "child-id" } : null,
      lifecycle: row.deletedAt ? "deleted" : row.archivedAt ? "archived" : "active",
      run: internRun(run, time),
      activeRunId: session?.activeTurnId ?? null,
      blockedBy: blockedByOf(row),
      updatedAt: time(row.updatedAt),
      latestUserMessageAt: time(row.latestUserMessageAt ?? null),
      capabilities: protocol1Capabilities(driver ?? instanceId, this.settleSupported, this.snoozeSupported, this.harnessesObserved),
      snoozedUntil: time(row.snoozedUntil ?? null),
    };
  }

  forget(threadId: string): void {
    this.requested.delete(threadId);
  }
}

const BLOCKED_BY_APPROVAL: AgentFacts["blockedBy"] = Object.freeze({ kind: "approval", requestId: null, since: null });
const BLOCKED_BY_INPUT: AgentFacts["blockedBy"] = Object.freeze({ kind: "input", requestId: null, since: null });

/**
 * What the row says blocks the agent on the user. After a restart T3 0.0.42 sets the session `error`
 * ("Provider session did not survive a server restart…") and keeps `hasPendingApprovals`, but an
 * answer then fails as stale (fixtures/t3-0.0.42-harness-cases/approval-across-restart.json): a
 * request under a session in error with no active turn can no longer be answered, and the
 * session's error says why.
 */
export function blockedByOf(row: Pick<ThreadShell, "hasPendingApprovals" | "hasPendingUserInput" | "session">): AgentFacts["blockedBy"] {
  const blocked = row.hasPendingApprovals ? BLOCKED_BY_APPROVAL : row.hasPendingUserInput ? BLOCKED_BY_INPUT : null;
  if (!blocked || !sessionLost(row.session)) return blocked;
  return { ...blocked, unanswerable: row.session!.lastError ?? "T3 reports the agent's session in error." };
}

/** A provider session in error with no turn running: nothing it asked for can still be answered. */
export function sessionLost(session: ThreadShell["session"]): boolean {
  return session?.status === "error" && session.activeTurnId === null;
}

/** What a followed thread's stream knows of the run, to set beside its shell row (`withNewerRun`). */
export interface StreamRun {
  session: ThreadShell["session"];
  latestTurn: ThreadShell["latestTurn"];
  latestUserMessageAt: string | null;
  /** The stream holds the latest turn's checkpoint: how the turn ended (completed, interrupted, error) is known. */
  turnSettled: boolean;
}

/**
 * The row with the run as the newer of the two sources knows it. T3 0.0.42 sends a followed
 * thread's `thread.session-set` on its thread stream before the shell row that carries the same
 * session (the shell coalesces its updates; bench/peer.bench.ts saw a turn's end 428 ms earlier
 * there), so the run is read from the newer one (docs/t3-protocols.md, "Repairs (inside the
 * protocol-1 adapter)"). Only where the stream is unambiguous: a session starting, running or in
 * error, or a turn whose checkpoint told how it ended (before it, a session back to ready could be
 * a completed or an interrupted turn). Otherwise, and when the stream's session is not newer, the
 * row stands; a later shell row with the same session yields the same run.
 */
export function withNewerRun(row: ThreadShell, stream: StreamRun | null): ThreadShell {
  const session = stream?.session;
  if (!session || (row.session && session.updatedAt <= row.session.updatedAt)) return row;
  const told =
    (session.status === "running" && session.activeTurnId !== null) || session.status === "starting" || session.status === "error" || stream.turnSettled;
  if (!told) return row;
  const rowUserAt = row.latestUserMessageAt ?? null;
  const streamUserAt = stream.latestUserMessageAt;
  return {
    ...row,
    session,
    latestTurn: stream.latestTurn ?? row.latestTurn,
    latestUserMessageAt: rowUserAt !== null && (streamUserAt === null || rowUserAt > streamUserAt) ? rowUserAt : streamUserAt,
  };
}

/** A completed run's time is a timestamp many rows share after a restart. */
function internRun(run: RunState, intern: (value: string | null) => string | null): RunState {
  return run.phase === "completed" ? { phase: "completed", at: intern(run.at) } : run;
}
