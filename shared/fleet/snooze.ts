// When an agent is snoozed, and where (the inbox rule). Two kinds of snooze meet here:
// - T3's own, time-based snooze, carried by the agent's facts (`snoozedUntil`) whoever made it: this
//   window, another fleet window or T3's own UI. T3 wakes the thread itself on new activity.
// - T3 Fleet's own snooze, kept by the service (electron/fleet/snoozes.ts) and carried by the agent's
//   view (`fleetSnooze`), so every window and the tray agree and it survives a reload: "until it
//   changes" (T3 has no such thing, keyed on what the agent needs), or for a while where T3 could not
//   take it. A window passes the snooze it just made (`own`) until the service's view carries it.
// A snooze T3 Fleet keeps ends as soon as what the agent needs changes, even while T3's wake time
// has not come. Pure.
import type { AgentView, FleetSnooze } from "./types";
import { needFingerprint, needsYou } from "./views";

/** A snooze kept by T3 Fleet (the service's record, or the one a window just made and sent it). */
export type WindowSnooze = FleetSnooze;

export type SnoozeState = { where: "server"; until: number } | { where: "fleet"; until: number | null; note: string | null };

/** The snooze that holds now, or null when the agent is awake; `own`: the window's newer record, else the service's (`fleetSnooze`). */
export function activeSnooze(
  agent: Pick<AgentView, "snoozedUntil" | "fleetSnooze"> & Parameters<typeof needFingerprint>[0],
  own: WindowSnooze | undefined,
  now: number,
): SnoozeState | null {
  own ??= agent.fleetSnooze;
  if (own && own.fingerprint !== needFingerprint(agent)) return null;
  const serverUntil = agent.snoozedUntil ? Date.parse(agent.snoozedUntil) : NaN;
  if (serverUntil > now) return { where: "server", until: serverUntil };
  if (own && (own.until === null || now < own.until)) return { where: "fleet", until: own.until, note: own.note ?? null };
  return null;
}

/** What the UI says of a snooze: "Snoozed on the server until 16:05", "Snoozed by T3 Fleet until it changes". */
export function snoozeWords(snooze: SnoozeState, time: (ms: number) => string): string {
  if (snooze.where === "server") return `Snoozed on the server until ${time(snooze.until)}`;
  return `Snoozed by T3 Fleet ${snooze.until === null ? "until it changes" : `until ${time(snooze.until)}`}`;
}

export interface SnoozedAgent {
  agent: AgentView;
  snooze: SnoozeState;
}

/**
 * The agents that need the user but are snoozed, across the fleet: the soonest to wake first, those
 * snoozed until what they need changes last (each group by title).
 */
export function snoozedAgents(agents: Iterable<AgentView>, own: ReadonlyMap<string, WindowSnooze>, now: number): SnoozedAgent[] {
  const list: SnoozedAgent[] = [];
  for (const agent of agents) {
    if (!needsYou(agent)) continue;
    const snooze = activeSnooze(agent, own.get(agent.key), now);
    if (snooze) list.push({ agent, snooze });
  }
  const wake = (entry: SnoozedAgent) => entry.snooze.until ?? Number.POSITIVE_INFINITY;
  return list.sort((a, b) => wake(a) - wake(b) || a.agent.title.localeCompare(b.agent.title));
}

/** Why and until when, for the snoozed list: "wakes at 16:05 (kept by T3)", "until what it needs changes (kept by T3 Fleet)". */
export function wakeDescription(snooze: SnoozeState, time: (ms: number) => string): string {
  if (snooze.until === null) return "until what it needs changes (kept by T3 Fleet)";
  return `wakes at ${time(snooze.until)} (${snooze.where === "server" ? "kept by T3" : "kept by T3 Fleet only"})`;
}
