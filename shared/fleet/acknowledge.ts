// Acknowledging a failed or stalled agent, or its failed native subagents (issue 10 point 2, issue 39): the user has seen it, so it leaves
// "need you", the tray and `n` until it changes again. An acknowledgement names the condition it
// covers (its fingerprint); a new failure or a status change has another fingerprint, so it counts
// again. Pure: the fleet service stores acknowledgements, the model applies them.
import type { AgentFacts } from "./facts";
import { failedSubagents } from "./subagents";
import type { AgentView } from "./types";

/**
 * The condition an acknowledgement would cover, or null when there is nothing to acknowledge
 * (approvals and questions are answered, not acknowledged; a stuck start is stopped or sent to).
 */
export function attentionFingerprint(
  view: Pick<AgentView, "lastKnownStatus" | "stalled" | "activeRunId" | "subagents">,
  facts: Pick<AgentFacts, "latestUserMessageAt" | "updatedAt">,
): string | null {
  const own = ownCondition(view, facts);
  // Failed native subagents, by id: acknowledging covers those shown, and a new one counts again.
  const subagents = view.lastKnownStatus === "deleted" || view.lastKnownStatus === "ended" ? [] : failedSubagents(view).map((subagent) => subagent.id);
  if (subagents.length === 0) return own;
  return [own ?? "", `subagents-failed|${subagents.sort().join(",")}`].join("|");
}

function ownCondition(
  view: Pick<AgentView, "lastKnownStatus" | "stalled" | "activeRunId">,
  facts: Pick<AgentFacts, "latestUserMessageAt" | "updatedAt">,
): string | null {
  if (view.lastKnownStatus === "failed") {
    // Every new turn starts from a new user message, so the message that started the failing turn
    // names one failure. Not the reason text (it gets more precise once the thread stream is read)
    // and not the row's update time (T3 touches rows for unrelated reasons, such as settling).
    return `failed|${facts.latestUserMessageAt ?? facts.updatedAt}`;
  }
  if (view.lastKnownStatus === "running" && view.stalled) return `stalled|${view.activeRunId ?? ""}`;
  return null;
}
