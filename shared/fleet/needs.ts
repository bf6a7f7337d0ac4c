// "Needs you", defined once (docs/architecture.md, "Needs you"). The top bar, the Inbox badge, the
// tab's title and icon, the tray and `n` all count and order with these rules, so they always agree.
// Pure.
import { hasFailedSubagent } from "./subagents";
import type { AgentStatus, AgentView } from "./types";

/**
 * What an agent needs from the user, most urgent first:
 * - "decision": an approval, a question or a provider login blocks it until the user answers;
 * - "failure": its turn failed, one of its native subagents failed, or its start is stuck (stop it or send anyway);
 * - "stall": it runs but nothing happened for the stall time, or the provider holds it up;
 * - "review": its turn ended with changed files the user has not marked reviewed (only when they
 *   asked for these in Settings; `awaitsReview`, applied by the model as `AgentView.review`).
 */
export type NeedClass = "decision" | "failure" | "stall" | "review";

export const NEED_CLASSES: readonly NeedClass[] = ["decision", "failure", "stall", "review"];

/** The status to judge a need by: while its machine is away, what was last confirmed (shown "as of" then). */
export function asOfStatus(agent: Pick<AgentView, "status" | "lastKnownStatus">): AgentStatus {
  return agent.status === "unknown" ? agent.lastKnownStatus : agent.status;
}

/** What a need is judged by: the agent's status, its stall and its native subagents (a failed one is the agent's failure to look at). */
export type NeedInput = Pick<AgentView, "status" | "lastKnownStatus" | "stalled" | "subagents" | "review">;

/** The class of what the agent needs from the user, or null when it needs nothing. Acknowledgements and snoozes are not applied here. */
export function needClass(agent: NeedInput): NeedClass | null {
  switch (asOfStatus(agent)) {
    case "needs-approval":
    case "needs-input":
    case "needs-auth":
      return "decision";
    case "failed":
    case "stuck":
      return "failure";
    default:
      if (subagentFailed(agent)) return "failure";
      if (asOfStatus(agent) === "running" && agent.stalled) return "stall";
      return agent.review ? "review" : null;
  }
}

/** Statuses in which an agent's turn has ended: nothing runs, starts or waits for it. */
const TURN_ENDED = new Set<AgentStatus>(["idle", "interrupted", "ended"]);

/**
 * Its latest turn ended (as of, while its machine is away) with changed files T3 could read, newer
 * than the last turn the user marked reviewed (`reviewedTurn`, the turn's count). The model applies
 * it as `AgentView.review` while the user lists these in the inbox (Settings).
 */
export function awaitsReview(agent: Pick<AgentView, "status" | "lastKnownStatus" | "changes">, reviewedTurn: number | undefined): boolean {
  const latest = agent.changes?.at(-1);
  return (
    latest !== undefined &&
    latest.status === "ready" &&
    (latest.totals?.files ?? latest.files.length) > 0 &&
    TURN_ENDED.has(asOfStatus(agent)) &&
    latest.turnCount > (reviewedTurn ?? 0)
  );
}

/**
 * A native subagent failed while its parent went on or rests: still a failure to look at. Not once
 * the parent's thread was archived, deleted or its session stopped: nothing of it waits on the user.
 */
function subagentFailed(agent: Pick<AgentView, "status" | "lastKnownStatus" | "subagents">): boolean {
  const status = asOfStatus(agent);
  return status !== "deleted" && status !== "ended" && hasFailedSubagent(agent);
}

/** A failure that turns the tray and the tab red: the agent's own failed turn, or a native subagent's. */
export function failedNow(agent: Pick<AgentView, "status" | "lastKnownStatus" | "subagents">): boolean {
  return asOfStatus(agent) === "failed" || subagentFailed(agent);
}

/**
 * Needs the user, snoozes aside: a decision always (it is answered, never acknowledged away); a
 * failure, stuck start or stall until the user acknowledges that condition. An agent whose machine
 * is away keeps what it last needed, so the count holds through an outage and nothing waiting for
 * the user hides behind it.
 */
export function needsYou(agent: NeedInput & Pick<AgentView, "acknowledged">): boolean {
  const need = needClass(agent);
  // A review is marked reviewed (which ends it), never acknowledged away.
  return need === "decision" || need === "review" || (need !== null && !agent.acknowledged);
}

/** Since when the agent has waited for the user: its oldest open request, else its last activity. */
export function waitingSince(agent: Pick<AgentView, "pending" | "lastActivityAt">): string {
  return agent.pending.reduce((oldest, request) => (request.createdAt < oldest ? request.createdAt : oldest), agent.lastActivityAt);
}

/** The order of what needs you: by class (decisions, failures, stalls), then what has waited longest. */
export function byUrgency(a: AgentView, b: AgentView): number {
  return urgencyRank(a) - urgencyRank(b) || waitingSince(a).localeCompare(waitingSince(b)) || a.title.localeCompare(b.title) || a.key.localeCompare(b.key);
}

function urgencyRank(agent: AgentView): number {
  const need = needClass(agent);
  return need === null ? NEED_CLASSES.length : NEED_CLASSES.indexOf(need);
}

/** Whether a snooze holds for an agent now (the window's and T3's: shared/fleet/snooze.ts). */
export type SnoozedNow = (agent: AgentView) => boolean;

export interface NeedsTally {
  /** What needs you now, most urgent first: the one count every surface shows. */
  needYou: AgentView[];
  /** Would need you but snoozed: counted apart, never in the count. */
  snoozed: AgentView[];
  /** Failures and stalls the user acknowledged and that did not change since: counted apart. */
  acknowledged: number;
  /** Of `needYou`, those whose machine is not online: counted as of when it was last confirmed. */
  asOf: number;
  /** Of `needYou`, failed turns: what turns the tray and the tab red. */
  failed: number;
}

/** Who needs you across the whole fleet, never filtered: the window's filters narrow what a list shows, not the count. */
export function tallyNeeds(agents: Iterable<AgentView>, snoozedNow: SnoozedNow = () => false): NeedsTally {
  const tally: NeedsTally = { needYou: [], snoozed: [], acknowledged: 0, asOf: 0, failed: 0 };
  for (const agent of agents) {
    if (!needsYou(agent)) {
      if (agent.acknowledged && needClass(agent) !== null) tally.acknowledged++;
      continue;
    }
    if (snoozedNow(agent)) {
      tally.snoozed.push(agent);
      continue;
    }
    tally.needYou.push(agent);
    if (agent.status === "unknown") tally.asOf++;
    if (failedNow(agent)) tally.failed++;
  }
  tally.needYou.sort(byUrgency);
  tally.snoozed.sort(byUrgency);
  return tally;
}
