// The tray glance, pure: which icon variant, what tooltip, which menu. The Electron
// shell renders it; nothing here knows about Electron. Counts, "need you" and the connection words
// come from shared/fleet/views.ts and the actions from shared/fleet/action-registry.ts, so the
// tray and the window always say the same thing.
import { ACTIONS, type ActionContext, type ActionId } from "./action-registry";
import type { AgentView, EnvironmentView, FleetCounts } from "./types";
import { activeSnooze } from "./snooze";
import { connectionWords, countWords, fleetCounts, type FleetGlance, needYouOrder } from "./views";
import { lastKnownWords } from "./words";

export type TrayVariant = "nothing-paired" | "failed" | "needs-you" | "host-offline" | "working" | "all-clear";

export type TrayItem =
  | { kind: "label"; label: string }
  | { kind: "separator" }
  | { kind: "agent"; label: string; agentKey: string }
  /** A registry command on the tray surface, run by the shell (electron/main/tray-commands.ts). */
  | { kind: "action"; label: string; command: ActionId };

export interface TrayModel {
  variant: TrayVariant;
  tooltip: string;
  items: TrayItem[];
}

/** Agents listed in the menu at most; the window shows the rest. */
export const TRAY_AGENT_LIMIT = 10;

export function trayVariant(counts: FleetCounts & { failedNeedingYou?: number }): TrayVariant {
  if (counts.environments === 0) return "nothing-paired";
  if ((counts.failedNeedingYou ?? counts.byStatus.failed ?? 0) > 0) return "failed";
  if (counts.needsYou > 0) return "needs-you";
  if (counts.hostsDown > 0) return "host-offline";
  if ((counts.byStatus.running ?? 0) + (counts.byStatus.starting ?? 0) > 0) return "working";
  return "all-clear";
}

/**
 * The browser tab's title: the one "needs you" count first, said once ("7 need you", never
 * "(7) 7 need you"), and nothing that flaps with a machine's connection, so it changes only when
 * what needs the user does. "(N)" stays while the service is unreachable (the needs are then as of
 * when it was lost).
 */
export function tabTitle(needsYou: number, serviceReachable: boolean): string {
  if (!serviceReachable) return `${needsYou > 0 ? `(${needsYou}) ` : ""}T3 Fleet — service not reachable`;
  return needsYou > 0 ? `${needsYou} need${needsYou === 1 ? "s" : ""} you — T3 Fleet` : "T3 Fleet — nothing needs you";
}

/** The tab's icon: what needs the user, or that the service cannot say. */
export type TabVariant = Extract<TrayVariant, "nothing-paired" | "failed" | "needs-you" | "all-clear"> | "service-lost";

/**
 * The browser tab's icon, by the one "needs you" rule (shared/fleet/needs.ts) only: a failure that
 * needs the user, anything else that does, or nothing. Unlike the tray's variant it never shows a
 * machine's connection or what runs: a machine that drops off and comes back (its agents judged as
 * of their last contact meanwhile) changes no need, so it changes neither the icon nor the title.
 */
export function tabVariant(counts: Pick<FleetGlance, "environments" | "needsYou" | "failedNeedingYou">, serviceReachable: boolean): TabVariant {
  if (!serviceReachable) return "service-lost";
  if (counts.environments === 0) return "nothing-paired";
  if (counts.failedNeedingYou > 0) return "failed";
  return counts.needsYou > 0 ? "needs-you" : "all-clear";
}

/** The one-line state of the fleet: the tray's first line. */
export function fleetHeadline(counts: FleetCounts): string {
  if (counts.environments === 0) return "No machine paired";
  return [
    counts.needsYou ? `${counts.needsYou} need${counts.needsYou === 1 ? "s" : ""} you` : null,
    counts.hostsDown ? `${counts.hostsDown} host${counts.hostsDown === 1 ? "" : "s"} not online` : null,
    `${counts.agents} agent${counts.agents === 1 ? "" : "s"} on ${counts.environments} machine${counts.environments === 1 ? "" : "s"}`,
  ]
    .filter(Boolean)
    .join(" · ");
}

/** A machine's agents in words; those of a machine away as of its last confirmation ("7 agents as of 14:05"), never a bare "7 unknown". */
function countsText(env: EnvironmentView): string {
  const lastConfirmed = env.connection.phase === "online" ? null : env.connection.lastConfirmedAt;
  const words = countWords(env.counts).map((entry) =>
    entry.status === "unknown"
      ? `${entry.count} agent${entry.count === 1 ? "" : "s"} ${lastConfirmed ? `as of ${timeOfDay(lastConfirmed)}` : "not reached yet"}`
      : entry.words,
  );
  return words.length ? words.join(", ") : "no agents";
}

export function trayModel(environments: EnvironmentView[], agents: Iterable<AgentView>, notificationsPaused: boolean, now: number = Date.now()): TrayModel {
  const agentList = [...agents];
  // T3's snoozes and T3 Fleet's own (carried by the agents' views) count apart, as in every window (docs/architecture.md, "Needs you").
  const snoozedNow = (agent: AgentView) => activeSnooze(agent, undefined, now) !== null;
  const counts = fleetCounts(environments, agentList, snoozedNow);
  const variant = trayVariant(counts);
  const headline = fleetHeadline(counts);
  const labels = new Map(environments.map((env) => [env.environmentId, env.label]));
  const waiting = needYouOrder(agentList, snoozedNow);
  const items: TrayItem[] = [{ kind: "label", label: `T3 Fleet — ${headline}` }];
  const sortedEnvs = [...environments].sort((a, b) => a.label.localeCompare(b.label));
  const perEnv = sortedEnvs.map((env) => `${env.label}: ${connectionWords(env.connection, now).words} · ${countsText(env)}`);
  if (sortedEnvs.length) items.push({ kind: "separator" });
  for (const line of perEnv) items.push({ kind: "label", label: line });
  if (waiting.length) {
    items.push({ kind: "separator" });
    for (const agent of waiting.slice(0, TRAY_AGENT_LIMIT)) {
      const what =
        agent.status === "unknown" ? `${lastKnownWords(agent)}, as of ${agent.asOf ? timeOfDay(agent.asOf) : "its last contact"}` : lastKnownWords(agent);
      items.push({ kind: "agent", agentKey: agent.key, label: `${agent.title} (${labels.get(agent.environmentId) ?? "?"}) — ${what}` });
    }
    if (waiting.length > TRAY_AGENT_LIMIT) items.push({ kind: "label", label: `…and ${waiting.length - TRAY_AGENT_LIMIT} more` });
  }
  items.push({ kind: "separator" });
  const context: ActionContext = {
    agent: null,
    environment: null,
    agentPanelOpen: false,
    machines: environments.length,
    needYou: counts.needsYou,
    notificationsPaused,
    grouping: "machine",
  };
  for (const spec of ACTIONS) {
    if (spec.surfaces.includes("tray") && spec.enabled(context)) items.push({ kind: "action", label: spec.label, command: spec.id });
  }
  return { variant, tooltip: [`T3 Fleet — ${headline}`, ...perEnv].join("\n"), items };
}

/** "14:05" in the machine's local time, for as-of labels in menus. */
function timeOfDay(iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : `${String(at.getHours()).padStart(2, "0")}:${String(at.getMinutes()).padStart(2, "0")}`;
}
