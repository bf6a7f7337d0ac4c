// One agent's row as the fleet shows it, built from its facts and what the model derived of them
// (shared/fleet/model.ts keeps the derivation's state; this is the pure part).
import type { AgentFacts, ThreadDetailFacts } from "./facts";
import type { displayStatus } from "./status";
import { type DerivedStatus, startingSince } from "./status";
import type { AgentView } from "./types";

/** Most agents have no pending request and no subagent: they share one frozen empty list. */
const NONE = Object.freeze([]) as unknown as never[];

/** Agents seen in the same millisecond (a cold start) share one ISO string for it. */
let lastIso: { ms: number; iso: string } = { ms: Number.NaN, iso: "" };
function isoOf(ms: number): string {
  if (lastIso.ms !== ms) lastIso = { ms, iso: new Date(ms).toISOString() };
  return lastIso.iso;
}

export interface AgentViewInputs {
  key: string;
  environmentId: string;
  threadId: string;
  facts: AgentFacts;
  detail: ThreadDetailFacts | undefined;
  derived: DerivedStatus;
  /** The status shown, by the machine's connection (displayStatus). */
  shown: ReturnType<typeof displayStatus>;
  stalled: boolean;
  heldUp: boolean;
  lastActivityMs: number;
  /** Whether the fleet shows a row for another thread of the same machine. */
  shows: (threadId: string) => boolean;
}

/** The row, before the user's own marks (acknowledged, snoozed, reviewed) are set on it. */
export function agentViewOf(input: AgentViewInputs): AgentView {
  const { facts, detail, derived, shown } = input;
  const parentThreadId = facts.parent?.threadId ?? null;
  return {
    key: input.key,
    environmentId: input.environmentId,
    threadId: input.threadId,
    parentThreadId,
    relationship: facts.parent?.relationship ?? null,
    orphaned: parentThreadId !== null && !input.shows(parentThreadId),
    title: facts.title,
    projectId: facts.projectId,
    projectTitle: facts.projectTitle,
    providerInstanceId: facts.provider.instanceId,
    providerDriver: facts.provider.driver,
    model: facts.provider.model,
    effort: facts.provider.effort,
    runtimeMode: facts.runtimeMode,
    status: shown.status,
    lastKnownStatus: derived.status,
    asOf: shown.asOf,
    stalled: input.stalled,
    heldUp: input.heldUp,
    reason: derived.reason,
    lifecycle: facts.lifecycle,
    activeRunId: facts.activeRunId,
    queuePosition: facts.run.phase === "queued" ? facts.run.position : null,
    startingSince: startingSince(facts.run),
    capabilities: facts.capabilities,
    pending: detail?.pending ?? NONE,
    subagents: detail?.subagents.length ? detail.subagents.filter((subagent) => subagent.childThreadId === null || !input.shows(subagent.childThreadId)) : NONE,
    updatedAt: facts.updatedAt,
    lastActivityAt: isoOf(input.lastActivityMs),
    acknowledged: false,
    workspaceRoot: facts.workspaceRoot ?? null,
    branch: facts.branch ?? null,
    worktreePath: facts.worktreePath ?? null,
    snoozedUntil: facts.snoozedUntil ?? null,
    ...(detail?.changes?.length && { changes: detail.changes }),
    ...(detail?.usage && { usage: detail.usage }),
  };
}
