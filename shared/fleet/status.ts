// Status derivation (design §3), pure: from a thread's shell row, the facts its thread stream
// revealed, and the environment's connection phase.
import type { ThreadShell } from "../t3/schemas";
import type { ThreadFacts } from "./thread-projection";
import type { AgentStatus, ConnectionPhase, DisplayStatus } from "./types";

export interface DerivedStatus {
  status: AgentStatus;
  reason: string | null;
}

/** Precedence: needs-approval, needs-input, failed, starting, running, idle, ended. */
export function deriveStatus(row: ThreadShell, facts: ThreadFacts | undefined, removed = false): DerivedStatus {
  const session = row.session;
  const approval = facts?.pending.find((request) => request.kind === "approval");
  const input = facts?.pending.find((request) => request.kind === "input");
  if (row.hasPendingApprovals) return { status: "needs-approval", reason: approval?.detail ?? "Approval requested" };
  if (row.hasPendingUserInput) return { status: "needs-input", reason: input?.detail ?? "Input requested" };
  if (removed || row.archivedAt || row.deletedAt) return { status: "ended", reason: row.deletedAt ? "Deleted" : "Archived" };
  if (session?.status === "error" || row.latestTurn?.state === "error") {
    return { status: "failed", reason: session?.lastError ?? facts?.lastErrorText ?? "Turn failed" };
  }
  if (facts?.capacityWarning && session?.activeTurnId) return { status: "failed", reason: facts.capacityWarning };
  if (facts?.startFailure) return { status: "failed", reason: facts.startFailure };
  if (session?.status === "starting") return { status: "starting", reason: null };
  if (session?.status === "running" && session.activeTurnId) return { status: "running", reason: null };
  if (row.backgroundLiveness === "working") return { status: "running", reason: "Subagents still working" };
  if (session?.status === "stopped") return { status: "ended", reason: "Session stopped" };
  if (turnRequested(row)) return { status: "starting", reason: "Turn requested" };
  return { status: "idle", reason: null };
}

/** A user message newer than the session: a turn was asked for and has not started yet (design §3). */
export function turnRequested(row: ThreadShell): boolean {
  if (!row.latestUserMessageAt) return false;
  if (!row.session) return true;
  return row.latestUserMessageAt > row.session.updatedAt && row.session.activeTurnId === null;
}

/** Whether the fleet must follow this thread's stream to know its truth (design §3). */
export function needsFollowing(row: ThreadShell, status: AgentStatus): boolean {
  return status === "starting" || status === "running" || status === "needs-approval" || status === "needs-input" || turnRequested(row);
}

/** When the environment is not online, nothing it said can be shown as current (design §3). */
export function displayStatus(status: AgentStatus, phase: ConnectionPhase): { status: DisplayStatus; asOf: string | null } {
  if (phase.phase === "online") return { status, asOf: null };
  return { status: "unknown", asOf: "lastConfirmedAt" in phase ? phase.lastConfirmedAt : null };
}

/** Effort or reasoning option of a model selection, whatever the provider calls it (§4.4). */
export function effortOf(options: readonly { id: string; value: string | boolean | number }[]): string | null {
  const option = options.find((candidate) => ["reasoningEffort", "effort", "reasoning", "variant"].includes(candidate.id));
  return option ? String(option.value) : null;
}
