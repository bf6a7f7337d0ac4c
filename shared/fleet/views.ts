// Derived fleet views shared by every UI (window, tray, browser tab): who needs the user, triage
// order, counts, and the words for what a machine's connection is doing. Pure; computed from the
// views the service sends, never stored.
import { asOfStatus, byUrgency, failedNow, needClass, needsYou, type SnoozedNow, tallyNeeds } from "./needs";
import { failedSubagents } from "./subagents";
import type { AgentView, ConnectionPhase, DisplayStatus, EnvironmentView, FleetCounts, RollupStatus } from "./types";
import { ROLLUP_WORDS } from "./words";

export { needsYou, waitingSince } from "./needs";

/** A repository name, where a server reports one (the project's folder stands in otherwise). */
export interface AgentViewExtras {
  repository?: string | null;
}

export function extrasOf(agent: AgentView): AgentViewExtras {
  return agent as AgentView & AgentViewExtras;
}

/** A failure (its own or a native subagent's) or a stall the user can acknowledge (as of, while its machine is away); a stuck start is stopped or sent to instead. */
export function acknowledgeable(agent: AgentView): boolean {
  if (agent.acknowledged) return false;
  return failedNow(agent) || needClass(agent) === "stall";
}

/** Working: a run is starting, queued, running or finishing. */
const WORKING = new Set<DisplayStatus>(["starting", "queued", "running", "waiting"]);

/** 0: needs you, 1: working, 2: the rest. */
export function triageRank(agent: AgentView): 0 | 1 | 2 {
  if (needsYou(agent)) return 0;
  if (WORKING.has(agent.status)) return 1;
  return 2;
}

/** Triage order: needs you, then running, then the rest; most recent activity first within each. */
export function byTriage(rank: (agent: AgentView) => number = triageRank): (a: AgentView, b: AgentView) => number {
  return (a, b) => rank(a) - rank(b) || b.lastActivityAt.localeCompare(a.lastActivityAt) || a.title.localeCompare(b.title) || a.key.localeCompare(b.key);
}

/** Every agent that needs the user now (snoozed ones apart), most urgent first: the count and what `n` visits. */
export function needYouOrder(agents: Iterable<AgentView>, snoozedNow?: SnoozedNow): AgentView[] {
  return tallyNeeds(agents, snoozedNow).needYou;
}

/** Idle or ended with nothing for longer than `olderThanMs`: folded under "N older". */
export function isOlder(agent: AgentView, now: number, olderThanMs: number): boolean {
  if (triageRank(agent) !== 2) return false;
  const at = Date.parse(agent.lastActivityAt);
  return Number.isFinite(at) && now - at > olderThanMs;
}

export interface FleetGlance extends FleetCounts {
  /** Failures needing you (not acknowledged, not snoozed): what turns the tray and the tab red. */
  failedNeedingYou: number;
  /** Would need you but snoozed: counted apart from `needsYou`. */
  snoozed: number;
  /** Failures and stalls the user acknowledged: counted apart from `needsYou`. */
  acknowledged: number;
}

/** The fleet at a glance; `needsYou` is the one count (shared/fleet/needs.ts), over the whole fleet. */
export function fleetCounts(environments: Iterable<EnvironmentView>, agents: Iterable<AgentView>, snoozedNow?: SnoozedNow): FleetGlance {
  const agentList = [...agents];
  const byStatus: Partial<Record<DisplayStatus, number>> = {};
  for (const agent of agentList) byStatus[agent.status] = (byStatus[agent.status] ?? 0) + 1;
  const needs = tallyNeeds(agentList, snoozedNow);
  let hostsDown = 0;
  let environmentCount = 0;
  for (const env of environments) {
    environmentCount++;
    if (env.connection.phase !== "online") hostsDown++;
  }
  return {
    byStatus,
    needsYou: needs.needYou.length,
    failedNeedingYou: needs.failed,
    snoozed: needs.snoozed.length,
    acknowledged: needs.acknowledged,
    hostsDown,
    environments: environmentCount,
    agents: agentList.length,
  };
}

/** Counts as words in severity order ("1 needs approval", "1 stalled", "2 running"), for rows, menus and tooltips. */
export function countWords(counts: Partial<Record<RollupStatus, number>>): { status: RollupStatus; count: number; words: string }[] {
  return (Object.keys(ROLLUP_WORDS) as RollupStatus[]).flatMap((status) => {
    const count = counts[status] ?? 0;
    return count > 0 ? [{ status, count, words: `${count} ${ROLLUP_WORDS[status]}` }] : [];
  });
}

export type ConnectionAction = "retry" | "pair" | null;

/** What a machine's connection is doing, in words, and the one action that helps. */
export function connectionWords(phase: ConnectionPhase, now: number): { words: string; action: ConnectionAction } {
  switch (phase.phase) {
    case "online":
      return { words: "online", action: null };
    case "connecting":
      return { words: phase.lastConfirmedAt ? "checking now" : "connecting", action: null };
    case "offline":
    case "backoff": {
      const seconds = Math.ceil((Date.parse(phase.nextAttemptAt) - now) / 1000);
      const when = Number.isFinite(seconds) && seconds > 0 ? `retrying in ${seconds} s` : "retrying now";
      return { words: `${phase.phase === "offline" ? "offline" : "failing"} · ${when}`, action: "retry" };
    }
    case "unauthorized":
      return { words: "needs pairing again", action: "pair" };
    case "incompatible":
      return { words: `incompatible: ${phase.error}`, action: "pair" };
  }
}

export const CONNECTION_ACTION_WORDS: Record<Exclude<ConnectionAction, null>, string> = { retry: "Retry now", pair: "Pair again" };

/** The thread in its machine's T3 web app: `/<environmentId>/<threadId>` upstream, `/<threadId>` on the 0.0.24 fork. */
export function t3ThreadUrl(env: Pick<EnvironmentView, "baseUrl" | "environmentId" | "generation">, threadId: string): string | null {
  if (!URL.canParse(env.baseUrl)) return null;
  const path = env.generation === "fork" ? encodeURIComponent(threadId) : `${encodeURIComponent(env.environmentId)}/${encodeURIComponent(threadId)}`;
  return new URL(path, env.baseUrl.endsWith("/") ? env.baseUrl : `${env.baseUrl}/`).href;
}

/** Project title, repository and branch where T3 gave them; the project id otherwise. */
export function projectOf(agent: AgentView): { id: string; title: string; repository: string | null; branch: string | null } {
  const extras = extrasOf(agent);
  return {
    id: agent.projectId,
    title: agent.projectTitle || agent.projectId,
    repository: extras.repository ?? agent.workspaceRoot ?? null,
    branch: agent.branch ?? null,
  };
}

/**
 * What a machine runs, in words: "T3 0.0.33 · protocol 2". The protocol is what the server
 * announced on the latest connect; a machine not reached yet shows its version alone.
 */
export function serverWords(server: { serverVersion: string | null; protocol?: number | null | undefined }): string {
  const version = `T3 ${server.serverVersion ?? "?"}`;
  return server.protocol ? `${version} · protocol ${server.protocol}` : version;
}

/**
 * What an agent needs from the user, as one string: a snooze "until it changes" ends when this does.
 * Judged as of (shared/fleet/needs.ts): a machine dropping off and coming back changes nothing.
 */
export function needFingerprint(agent: AgentView): string {
  const subagents = failedSubagents(agent).map((subagent) => `subagent:${subagent.id}`);
  return [asOfStatus(agent), agent.stalled ? "stalled" : "", agent.reason ?? "", ...agent.pending.map((request) => request.requestId), ...subagents].join("|");
}

/** The inbox's order: by urgency (decisions, failures, stalls), then what has waited longest, across machines. */
export function inboxOrder(agents: Iterable<AgentView>): AgentView[] {
  return [...agents].filter(needsYou).sort(byUrgency);
}
