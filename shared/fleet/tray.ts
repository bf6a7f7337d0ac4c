// The tray glance (design §5), pure: which icon variant, what tooltip, which menu. The Electron
// shell renders it; nothing here knows about Electron.
import { STATUS_WORDS } from "./words";
import type { AgentView, DisplayStatus, EnvironmentView, FleetCounts } from "./types";
import { needsYouNow } from "./types";

export type TrayVariant = "nothing-paired" | "failed" | "needs-you" | "host-offline" | "working" | "all-clear";

export type TrayItem =
  | { kind: "label"; label: string }
  | { kind: "separator" }
  | { kind: "agent"; label: string; agentKey: string }
  | { kind: "action"; label: string; action: "open" | "pair" | "pause" | "resume" | "quit" };

export interface TrayModel {
  variant: TrayVariant;
  tooltip: string;
  items: TrayItem[];
}

/** Agents listed in the menu at most; the window shows the rest. */
export const TRAY_AGENT_LIMIT = 10;

export function trayVariant(counts: FleetCounts): TrayVariant {
  if (counts.environments === 0) return "nothing-paired";
  if ((counts.byStatus.failed ?? 0) > 0) return "failed";
  if (counts.needsYou > 0) return "needs-you";
  if (counts.hostsDown > 0) return "host-offline";
  if ((counts.byStatus.running ?? 0) + (counts.byStatus.starting ?? 0) > 0) return "working";
  return "all-clear";
}

function countsText(counts: Partial<Record<DisplayStatus, number>>): string {
  const parts = (Object.entries(counts) as [DisplayStatus, number][]).filter(([, n]) => n > 0).map(([status, n]) => `${n} ${STATUS_WORDS[status]}`);
  return parts.length ? parts.join(", ") : "no agents";
}

function phaseWord(env: EnvironmentView): string {
  return env.connection.phase === "online" ? "online" : env.connection.phase === "unauthorized" ? "needs pairing" : env.connection.phase;
}

export function trayModel(environments: EnvironmentView[], agents: Iterable<AgentView>, counts: FleetCounts, notificationsPaused: boolean): TrayModel {
  const variant = trayVariant(counts);
  const headline =
    variant === "nothing-paired"
      ? "No machine paired"
      : [
          counts.needsYou ? `${counts.needsYou} need${counts.needsYou === 1 ? "s" : ""} you` : null,
          counts.hostsDown ? `${counts.hostsDown} host${counts.hostsDown === 1 ? "" : "s"} not online` : null,
          `${counts.agents} agent${counts.agents === 1 ? "" : "s"} on ${counts.environments} machine${counts.environments === 1 ? "" : "s"}`,
        ]
          .filter(Boolean)
          .join(" · ");
  const labels = new Map(environments.map((env) => [env.environmentId, env.label]));
  const waiting = [...agents].filter((agent) => needsYouNow(agent)).sort((a, b) => a.title.localeCompare(b.title));
  const items: TrayItem[] = [{ kind: "label", label: `T3 Fleet — ${headline}` }];
  const sortedEnvs = [...environments].sort((a, b) => a.label.localeCompare(b.label));
  if (sortedEnvs.length) items.push({ kind: "separator" });
  for (const env of sortedEnvs) items.push({ kind: "label", label: `${env.label}: ${phaseWord(env)} · ${countsText(env.counts)}` });
  if (waiting.length) {
    items.push({ kind: "separator" });
    for (const agent of waiting.slice(0, TRAY_AGENT_LIMIT)) {
      items.push({ kind: "agent", agentKey: agent.key, label: `${agent.title} (${labels.get(agent.environmentId) ?? "?"}) — ${STATUS_WORDS[agent.status]}` });
    }
    if (waiting.length > TRAY_AGENT_LIMIT) items.push({ kind: "label", label: `…and ${waiting.length - TRAY_AGENT_LIMIT} more` });
  }
  items.push(
    { kind: "separator" },
    { kind: "action", label: "Open T3 Fleet", action: "open" },
    { kind: "action", label: "Pair a machine…", action: "pair" },
    notificationsPaused ? { kind: "action", label: "Resume notifications", action: "resume" } : { kind: "action", label: "Pause notifications", action: "pause" },
    { kind: "action", label: "Quit", action: "quit" },
  );
  const perEnv = sortedEnvs.map((env) => `${env.label}: ${phaseWord(env)}, ${countsText(env.counts)}`);
  return { variant, tooltip: [`T3 Fleet — ${headline}`, ...perEnv].join("\n"), items };
}
