// One server cannot take the fleet down: each environment may hold at most so many agents and so
// many bytes of agent facts in the fleet model. A server that sends more keeps its most recently
// updated agents within the budget; the rest are left out and counted, and the user is told once
// (environments.ts, service.ts). Other machines are unaffected: the budget is per environment.
// A followed thread's changes (each turn's files, already capped at decode, shared/t3/turn-files.ts)
// count in the same bytes: changes that do not fit keep each turn's counts without its file list.
import { turnTotals } from "../../shared/fleet/changes-usage";
import type { AgentFacts, TurnChanges } from "../../shared/fleet/facts";

export interface BudgetLimits {
  /** Agents (threads) kept per environment. Real fleets hold hundreds to a few thousand per machine. */
  maxThreads: number;
  /** Approximate bytes of agent facts kept per environment (text is already capped per field, shared/t3/text.ts). */
  maxBytes: number;
}

export const DEFAULT_BUDGET: BudgetLimits = { maxThreads: 20_000, maxBytes: 64 * 1024 * 1024 };

export interface BudgetReport {
  /** Agents the server offered in its last snapshot plus those added since. */
  offeredThreads: number;
  keptThreads: number;
  /** The kept agents' facts and the followed threads' changes. */
  keptBytes: number;
  limits: BudgetLimits;
}

/** Size of a facts object as the fleet holds it: UTF-16 strings, 8-byte numbers, a small overhead per field. */
export function approximateBytes(value: unknown): number {
  if (typeof value === "string") return 16 + value.length * 2;
  if (typeof value !== "object" || value === null) return 8;
  let total = 16;
  if (Array.isArray(value)) {
    for (const item of value) total += approximateBytes(item);
    return total;
  }
  for (const [key, field] of Object.entries(value)) total += key.length + approximateBytes(field);
  return total;
}

/** The turns with their counts and no file lists: what a thread keeps of its changes when they do not fit. */
export function countsOnly(turns: readonly TurnChanges[]): TurnChanges[] {
  return turns.map((turn) => ({ ...turn, files: [], totals: turnTotals(turn) }));
}

export class EnvironmentBudget {
  private readonly kept = new Map<string, number>();
  /** Followed threads' changes: the list last seen (the projections keep one until the changes change) and the bytes it was counted at. */
  private readonly changes = new Map<string, { seen: readonly TurnChanges[]; kept: TurnChanges[]; bytes: number }>();
  private bytes = 0;
  private dropped = new Set<string>();
  private reported = false;

  constructor(
    private readonly limits: BudgetLimits = DEFAULT_BUDGET,
    /** Called once each time the environment goes over its budget (again after it was back within). */
    private readonly onExceeded: (report: BudgetReport) => void = () => {},
  ) {}

  /** A new snapshot: the most recently updated agents that fit are kept. */
  snapshot(agents: readonly AgentFacts[]): AgentFacts[] {
    this.kept.clear();
    this.dropped = new Set();
    // The followed threads' changes stay counted (and first), but only those of agents still offered:
    // a snapshot is the whole fleet, and the model lets the others go with it (shared/fleet/model.ts).
    const offered = new Set(agents.map((agent) => agent.threadId));
    for (const threadId of this.changes.keys()) if (!offered.has(threadId)) this.changes.delete(threadId);
    this.bytes = [...this.changes.values()].reduce((sum, entry) => sum + entry.bytes, 0);
    const newestFirst =
      agents.length > this.limits.maxThreads ? [...agents].sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0)) : agents;
    const admitted: AgentFacts[] = [];
    for (const agent of newestFirst) if (this.admit(agent)) admitted.push(agent);
    // An agent left out has no row, so nothing shows its changes either.
    for (const threadId of this.dropped) this.releaseChanges(threadId);
    this.check();
    return admitted;
  }

  /** An upsert: true when the agent is (still) kept. */
  upsert(agent: AgentFacts): boolean {
    const admitted = this.admit(agent);
    this.check();
    return admitted;
  }

  /**
   * A followed thread's changes as the environment keeps them: whole while its bytes allow, else
   * each turn's counts without its file list (the panel then says "and N more files"). The counts
   * are kept even past the limit: a few hundred bytes a turn, and what the fleet shows of them.
   */
  admitChanges(threadId: string, turns: readonly TurnChanges[] | undefined): TurnChanges[] | undefined {
    if (!turns) return undefined;
    // Counted only while its agent is kept: a thread followed after it left (a send still settling)
    // or before its row came would otherwise stay counted, and held here, after it is gone, one
    // entry per departure (issue 43: thousands an hour in the soak's churn). Its row, if it has one,
    // is a departed one that goes within minutes.
    if (!this.kept.has(threadId)) return turns as TurnChanges[];
    const known = this.changes.get(threadId);
    if (known?.seen === turns) return known.kept;
    const released = this.bytes - (known?.bytes ?? 0);
    const whole = approximateBytes(turns);
    const fits = released + whole <= this.limits.maxBytes;
    const kept = fits ? (turns as TurnChanges[]) : countsOnly(turns);
    const bytes = fits ? whole : approximateBytes(kept);
    this.changes.set(threadId, { seen: turns, kept, bytes });
    this.bytes = released + bytes;
    return kept;
  }

  removed(threadId: string): void {
    this.releaseChanges(threadId);
    this.bytes -= this.kept.get(threadId) ?? 0;
    this.kept.delete(threadId);
    this.dropped.delete(threadId);
    if (this.dropped.size === 0) this.reported = false;
  }

  get report(): BudgetReport {
    return { offeredThreads: this.kept.size + this.dropped.size, keptThreads: this.kept.size, keptBytes: this.bytes, limits: this.limits };
  }

  private releaseChanges(threadId: string): void {
    this.bytes -= this.changes.get(threadId)?.bytes ?? 0;
    this.changes.delete(threadId);
  }

  private admit(agent: AgentFacts): boolean {
    const size = approximateBytes(agent);
    const previous = this.kept.get(agent.threadId);
    const isNew = previous === undefined;
    if ((isNew && this.kept.size >= this.limits.maxThreads) || this.bytes - (previous ?? 0) + size > this.limits.maxBytes) {
      // A new agent is left out; one that grew past the budget keeps its last facts that fit.
      if (isNew) this.dropped.add(agent.threadId);
      return false;
    }
    this.kept.set(agent.threadId, size);
    this.bytes += size - (previous ?? 0);
    this.dropped.delete(agent.threadId);
    return true;
  }

  private check(): void {
    if (this.dropped.size === 0 || this.reported) return;
    this.reported = true;
    this.onExceeded(this.report);
  }
}

/** The words the user reads when a machine goes over its budget (said once, when it first does). */
export function budgetNotice(label: string, report: BudgetReport): string {
  const { maxThreads, maxBytes } = report.limits;
  return `${label} sent more than T3 Fleet keeps for one machine (${maxThreads.toLocaleString("en-US")} agents, ${Math.round(maxBytes / 1024 / 1024)} MB): the ${report.keptThreads.toLocaleString("en-US")} most recently updated agents are shown, the rest are left out. Other machines are not affected.`;
}
