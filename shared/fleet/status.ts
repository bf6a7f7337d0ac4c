// Status rules (docs/architecture.md, "The fleet model and its rules"), pure and protocol-neutral: from an agent's facts (shared/fleet/facts.ts),
// what its followed thread stream revealed, the time, and the environment's connection phase.
import type { AgentFacts, BlockedBy, RunState, ThreadDetailFacts } from "./facts";
import type { AgentStatus, ConnectionPhase, DisplayStatus } from "./types";

export interface DerivedStatus {
  status: AgentStatus;
  reason: string | null;
  /**
   * Running, but the provider says the run waits (a capacity limit it retries through): not a
   * failure, since the run goes on by itself, but held up like a stalled run.
   */
  heldUp?: boolean;
}

/**
 * A session or run still starting after this long is shown as stuck, with a way out (stop, or send
 * anyway). Real servers go from a request to a running turn in 0.5-3 s; a crash can leave a
 * protocol-1 session "starting" for good.
 */
export const STUCK_STARTING_MS = 120_000;

/** The run phases in which a turn was asked for and has not run yet. */
const STARTING_PHASES = new Set<RunState["phase"]>(["requested", "preparing", "starting"]);

/** Whether a turn was asked for and has not run yet (requested, preparing, starting). */
export function isStarting(run: RunState): boolean {
  return STARTING_PHASES.has(run.phase);
}

/** Server time since which an agent is starting, if it is (shown to the user). */
export function startingSince(run: RunState): string | null {
  return run.phase === "requested" || run.phase === "preparing" || run.phase === "starting" ? run.since : null;
}

/**
 * How long the fleet has seen the agent starting, by the fleet's own clock (server clocks may be
 * skewed), and the bound after which that counts as stuck.
 */
export interface StartingClock {
  startingForMs: number;
  stuckAfterMs?: number;
}

/** What a request is called in a sentence about it. */
const REQUEST_WORDS: Record<BlockedBy["kind"], string> = { approval: "The approval", input: "The question", "auth-refresh": "The provider's login request" };

/** Why a request the server still lists can take no answer, in the server's words (`unanswerable`). */
export function unanswerableWords(blocked: Pick<BlockedBy, "kind" | "unanswerable">): string {
  return `${REQUEST_WORDS[blocked.kind]} can no longer be answered: ${blocked.unanswerable ?? ""}`;
}

/**
 * Precedence: deleted (nothing on it can be answered any more), a request that can no longer be
 * answered (failed), blocked on the user (approval, question, provider login), archived, failed, held up (running, waiting on the provider), stuck
 * starting, then the run's phase.
 */
export function deriveStatus(agent: AgentFacts, detail: ThreadDetailFacts | undefined, clock: StartingClock = { startingForMs: 0 }): DerivedStatus {
  if (agent.lifecycle === "deleted") return { status: "deleted", reason: null };
  const blocked = agent.blockedBy;
  // The server still lists a request it can no longer pass an answer to: a failure, in its words.
  if (blocked?.unanswerable !== undefined) return { status: "failed", reason: unanswerableWords(blocked) };
  if (blocked) {
    const request = detail?.pending.find((candidate) => candidate.kind === blocked.kind);
    switch (blocked.kind) {
      case "approval":
        return { status: "needs-approval", reason: request?.detail ?? "Approval requested" };
      case "input":
        return { status: "needs-input", reason: request?.detail ?? "Input requested" };
      case "auth-refresh":
        return { status: "needs-auth", reason: request?.detail ?? "The provider's login on this machine must be refreshed" };
    }
  }
  if (agent.lifecycle === "archived") return { status: "ended", reason: "Archived" };
  const run = agent.run;
  if (run.phase === "failed") return { status: "failed", reason: run.reason ?? detail?.lastErrorText ?? "Turn failed" };
  const hidden = detail?.hiddenFailure;
  const superseded = hidden?.at !== undefined && agent.latestUserMessageAt !== null && agent.latestUserMessageAt > hidden.at;
  if (hidden && hidden.runId === agent.activeRunId && !superseded) {
    // On the active run the provider retries (T3 keeps the run running and its error item open);
    // with no run (run id null) the provider never started, which is a failure.
    if (hidden.runId !== null) return { status: "running", reason: hidden.reason, heldUp: true };
    return { status: "failed", reason: hidden.reason };
  }
  if (STARTING_PHASES.has(run.phase)) {
    if (clock.startingForMs >= (clock.stuckAfterMs ?? STUCK_STARTING_MS)) {
      const minutes = Math.max(1, Math.round(clock.startingForMs / 60_000));
      return { status: "stuck", reason: `Starting for ${minutes} min: the session may be stuck. Stop it, or send anyway.` };
    }
    return { status: "starting", reason: run.phase === "requested" ? "Turn requested" : null };
  }
  switch (run.phase) {
    case "queued": {
      // Protocol-2 shell rows carry no queue position; the followed thread stream does.
      const position = run.position ?? (detail?.run?.phase === "queued" ? detail.run.position : null);
      return { status: "queued", reason: position === null ? "Queued after the active run" : `Queued (position ${position})` };
    }
    case "running":
      return { status: "running", reason: run.note };
    case "waiting":
      return { status: "waiting", reason: run.note ?? "The answer is final; background work is finishing" };
    case "interrupted":
      return { status: "interrupted", reason: null };
    case "cancelled":
      return { status: "interrupted", reason: "Cancelled" };
    case "rolled-back":
      return { status: "interrupted", reason: "Rolled back" };
    case "stopped":
      return { status: "ended", reason: "Session stopped" };
    default:
      return { status: "idle", reason: null };
  }
}

/** Statuses whose truth needs the thread stream: blocked (request contents), or a run in progress (failures the row never shows). */
const FOLLOWED = new Set<AgentStatus>(["needs-approval", "needs-input", "needs-auth", "starting", "stuck", "queued", "running", "waiting"]);

/** Whether the fleet must follow this thread's stream to know its truth. */
export function needsFollowing(status: AgentStatus): boolean {
  return FOLLOWED.has(status);
}

/** When the environment is not online, nothing it said can be shown as current. */
export function displayStatus(status: AgentStatus, phase: ConnectionPhase): { status: DisplayStatus; asOf: string | null } {
  if (phase.phase === "online") return { status, asOf: null };
  return { status: "unknown", asOf: "lastConfirmedAt" in phase ? phase.lastConfirmedAt : null };
}
