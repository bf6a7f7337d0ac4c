// Native subagents as the fleet judges them (issue 39): a subagent that failed inside its parent's
// run is the parent's failure to look at (the inbox, every count, one notification, the parent's
// roll-up), named by the subagent; one that completed needs nothing. Pure and protocol-neutral: it
// reads the `SubagentFacts` either adapter makes (shared/fleet/facts.ts).
import type { SubagentFacts, SubagentStatus } from "./facts";
import type { AgentView, DisplayStatus } from "./types";

/** A subagent's status as the tree's chips and its parent's roll-up read it. */
export const SUBAGENT_DISPLAY: Record<SubagentStatus, DisplayStatus> = {
  pending: "starting",
  running: "running",
  waiting: "waiting",
  failed: "failed",
  interrupted: "interrupted",
  cancelled: "interrupted",
  completed: "ended",
  stopped: "ended",
};

/** What a subagent adds to its parent's roll-up: a run going on or a failure; one that finished adds nothing. */
export function subagentRollup(subagent: Pick<SubagentFacts, "status">): DisplayStatus | null {
  const shown = SUBAGENT_DISPLAY[subagent.status];
  return shown === "ended" || shown === "interrupted" ? null : shown;
}

/** The agent's native subagents that failed (those not carried by a child thread the fleet shows, which count as themselves). */
export function failedSubagents(agent: Pick<AgentView, "subagents">): SubagentFacts[] {
  return agent.subagents.filter((subagent) => subagent.status === "failed");
}

export function hasFailedSubagent(agent: Pick<AgentView, "subagents">): boolean {
  return agent.subagents.some((subagent) => subagent.status === "failed");
}

/** How the user knows a subagent: its task's title, else its kind, else its id. */
export function subagentName(subagent: Pick<SubagentFacts, "id" | "title" | "kind">): string {
  return subagent.title ?? subagent.kind ?? subagent.id;
}

/** 'subagent "Scripted subtask" failed: Agent terminated early…', newest failure first when several did. */
export function failedSubagentWords(agent: Pick<AgentView, "subagents">): string | null {
  const failed = failedSubagents(agent).sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
  const newest = failed[0];
  if (!newest) return null;
  const more = failed.length > 1 ? ` (and ${failed.length - 1} more)` : "";
  return `subagent "${subagentName(newest)}" failed${newest.reason ? `: ${newest.reason}` : ""}${more}`;
}
