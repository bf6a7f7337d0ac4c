// The truth oracle at the soak's end (issue 39; electron/fleet/truth-oracle.testkit.ts): what each
// machine it can read stored against what the fleet says, as the page's bridge tells it (status and
// reason, roll-up, the inbox's needs, each receipt's last word). Notifications are left to the
// soak's own ledger (bench/soak/bridge-client.ts), which counts them across the service's restarts.
import { type Contradiction, type FleetTruth, type ServerTruth, contradictions } from "../../electron/fleet/truth-oracle.testkit";
import { needClass, tallyNeeds } from "../../shared/fleet/needs";
import { subagentRollup } from "../../shared/fleet/subagents";
import { type AgentView, type RollupStatus, rollupStatus, worstOf } from "../../shared/fleet/types";
import type { FleetState } from "./bridge-client";

/** A machine the soak reads: null where it cannot (a protocol-2 machine: no thread read on its control API). */
export interface TruthSource {
  label: string;
  environmentId: string;
  truth(alsoRead: Iterable<string>): Promise<ServerTruth | null>;
}

export interface TruthReport {
  found: { machine: string; item: Contradiction }[];
  read: string[];
  notRead: string[];
}

/** A parent's roll-up as the fleet model makes it (shared/fleet/model.ts, rollup): its descendants and their native subagents. */
function rollupOf(agents: AgentView[], view: AgentView): RollupStatus | null {
  const statuses: RollupStatus[] = [];
  const walk = (parent: AgentView, depth: number) => {
    statuses.push(...parent.subagents.flatMap((subagent) => subagentRollup(subagent) ?? []));
    if (depth > 32) return;
    for (const child of agents.filter((candidate) => candidate.parentThreadId === parent.threadId)) {
      statuses.push(rollupStatus(child));
      walk(child, depth + 1);
    }
  };
  walk(view, 0);
  return worstOf(statuses);
}

function fleetSide(state: FleetState, environmentId: string): FleetTruth {
  const agents = [...state.agents.values()].filter((view) => view.environmentId === environmentId);
  const tally = tallyNeeds(agents);
  return {
    agents,
    rollups: new Map(agents.map((view) => [view.key, rollupOf(agents, view)])),
    needs: new Map([...tally.needYou, ...tally.snoozed].map((view) => [view.key, needClass(view)!])),
    notifications: [],
    deliveries: [...state.deliveries.values()],
  };
}

async function compareAll(state: FleetState, sources: TruthSource[]): Promise<TruthReport> {
  const report: TruthReport = { found: [], read: [], notRead: [] };
  for (const source of sources) {
    const shown = [...state.agents.values()].filter((view) => view.environmentId === source.environmentId).map((view) => view.threadId);
    const server = await source.truth(shown).catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
    if (server === null || typeof server === "string") {
      report.notRead.push(server ? `${source.label} (${server})` : source.label);
      continue;
    }
    report.read.push(source.label);
    const phase = state.environments.get(source.environmentId)?.connection.phase;
    const found =
      phase === "online"
        ? contradictions(server, fleetSide(state, source.environmentId))
        : [{ kind: "status" as const, threadId: "(machine)", server: "serving", fleet: `connection ${phase ?? "unknown"}` }];
    report.found.push(...found.map((item) => ({ machine: source.label, item })));
  }
  return report;
}

/**
 * Compares once both sides have settled: again after each bridge event until no contradiction is
 * left or `settleMs` passed, then once more; the report is the last comparison's.
 */
export async function soakTruth(state: FleetState, sources: TruthSource[], settleMs = 30_000): Promise<TruthReport> {
  const deadline = Date.now() + settleMs;
  for (;;) {
    let stop = () => {};
    const changed = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
      const off = state.onChange(() => resolve());
      stop = () => {
        clearTimeout(timer);
        off();
        resolve();
      };
    });
    const report = await compareAll(state, sources);
    if (report.found.length === 0 || Date.now() >= deadline) {
      stop();
      return report;
    }
    await changed;
    stop();
  }
}

/** The report's lines for the soak's figures: which machines were read, and up to eight contradictions with both sides. */
export function truthLines(report: TruthReport): string[] {
  return [
    `  truth oracle: read ${report.read.join(", ") || "none"}; not read ${report.notRead.join(", ") || "none"}; contradictions ${report.found.length}`,
    ...report.found
      .slice(0, 8)
      .map(({ machine, item }) => `    ${item.kind} ${machine}/${item.threadId}: T3 stored ${item.server}; the fleet says ${item.fleet}`),
  ];
}
