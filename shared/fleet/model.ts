// The merged fleet: every environment's shell rows and followed-thread facts, with derived agent
// views kept up to date incrementally. Applying one stream item touches only that thread (and its
// parent's children index), never the whole fleet (design §7: O(changed)).
import type { ShellDelta, ShellSnapshot, ThreadShell } from "../t3/schemas";
import { type DerivedStatus, deriveStatus, displayStatus, effortOf } from "./status";
import type { ThreadFacts } from "./thread-projection";
import {
  type AgentView,
  type ConnectionPhase,
  type DisplayStatus,
  type EnvironmentMeta,
  type EnvironmentView,
  type FleetCounts,
  agentKey,
  parentThreadIdOf,
  worstOf,
} from "./types";

export interface FleetChange {
  agents: AgentView[];
  removed: string[];
  environments: EnvironmentView[];
  removedEnvironments: string[];
}

export interface FleetModelOptions {
  /** A running agent with no new event for this long is flagged stalled. */
  stalledAfterMs: number;
  now: () => number;
}

interface Entry {
  row: ThreadShell;
  facts: ThreadFacts | undefined;
  removed: boolean;
  derived: DerivedStatus;
  lastActivityMs: number;
  view: AgentView;
}

interface EnvState {
  meta: EnvironmentMeta;
  phase: ConnectionPhase;
  entries: Map<string, Entry>;
  /** parentThreadId → child thread ids, including children whose parent is absent. */
  children: Map<string, Set<string>>;
  counts: Map<DisplayStatus, number>;
}

/** Changes collected inside one batch: environments by id, published as their final view. */
interface PendingChange {
  agents: AgentView[];
  removed: string[];
  environments: Set<string>;
  removedEnvironments: string[];
}

export class FleetModel {
  private readonly envs = new Map<string, EnvState>();
  private readonly listeners = new Set<(change: FleetChange) => void>();
  private pending: PendingChange | undefined;
  private readonly running = new Set<string>();

  private readonly options: FleetModelOptions;

  constructor(options: FleetModelOptions) {
    this.options = { ...options };
  }

  /** The quiet time after which a running agent counts as stalled (a user setting). */
  setStalledAfter(ms: number): void {
    this.options.stalledAfterMs = ms;
    // Either direction: running agents may become stalled or stop being stalled.
    this.batch(() => {
      for (const key of [...this.running]) {
        const [environmentId, threadId] = splitKey(key);
        const env = this.envs.get(environmentId);
        if (env) this.refresh(env, threadId);
      }
    });
  }

  subscribe(listener: (change: FleetChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ------------------------------------------------------------------ environments

  upsertEnvironment(meta: EnvironmentMeta, phase?: ConnectionPhase): void {
    this.batch(() => {
      const existing = this.envs.get(meta.environmentId);
      if (existing) {
        existing.meta = meta;
        if (phase) this.applyPhase(existing, phase);
      } else {
        const now = new Date(this.options.now()).toISOString();
        this.envs.set(meta.environmentId, {
          meta,
          phase: phase ?? { phase: "connecting", since: now, lastConfirmedAt: null },
          entries: new Map(),
          children: new Map(),
          counts: new Map(),
        });
      }
      this.touchEnv(meta.environmentId);
    });
  }

  removeEnvironment(environmentId: string): void {
    const env = this.envs.get(environmentId);
    if (!env) return;
    this.batch(() => {
      for (const threadId of env.entries.keys()) {
        const key = agentKey(environmentId, threadId);
        this.running.delete(key);
        this.pending!.removed.push(key);
      }
      this.envs.delete(environmentId);
      this.pending!.removedEnvironments.push(environmentId);
    });
  }

  setPhase(environmentId: string, phase: ConnectionPhase): void {
    const env = this.envs.get(environmentId);
    if (!env) return;
    this.batch(() => this.applyPhase(env, phase));
  }

  private applyPhase(env: EnvState, phase: ConnectionPhase): void {
    const before = displayStatus("idle", env.phase);
    env.phase = phase;
    const after = displayStatus("idle", phase);
    // Going offline or back changes what every agent of this environment may claim (design §3).
    if (before.status !== after.status || before.asOf !== after.asOf) {
      for (const threadId of env.entries.keys()) this.refresh(env, threadId);
    }
    this.touchEnv(env.meta.environmentId);
  }

  // ------------------------------------------------------------------ shell stream

  applyShellSnapshot(environmentId: string, snapshot: ShellSnapshot): void {
    const env = this.envs.get(environmentId);
    if (!env) return;
    this.batch(() => {
      const seen = new Set<string>();
      for (const row of snapshot.threads) {
        seen.add(row.id);
        this.upsertRow(env, row);
      }
      for (const threadId of [...env.entries.keys()]) if (!seen.has(threadId)) this.deleteEntry(env, threadId);
      this.touchEnv(environmentId);
    });
  }

  applyShellDelta(environmentId: string, delta: ShellDelta): void {
    const env = this.envs.get(environmentId);
    if (!env) return;
    this.batch(() => {
      if (delta.kind === "thread-upserted") this.upsertRow(env, delta.thread);
      else if (delta.kind === "thread-removed") {
        const entry = env.entries.get(delta.threadId);
        if (entry) {
          // Archived or deleted: shown as ended for the rest of this session, not silently dropped.
          entry.removed = true;
          this.refresh(env, delta.threadId);
        }
      }
    });
  }

  setThreadFacts(environmentId: string, threadId: string, facts: ThreadFacts): void {
    const env = this.envs.get(environmentId);
    const entry = env?.entries.get(threadId);
    if (!env || !entry) return;
    this.batch(() => {
      entry.facts = facts;
      entry.lastActivityMs = this.options.now();
      this.refresh(env, threadId);
    });
  }

  /** Re-evaluates stalled flags; returns when the next one could flip (ms since epoch), or null. */
  checkStalls(): number | null {
    const now = this.options.now();
    let next: number | null = null;
    this.batch(() => {
      for (const key of this.running) {
        const [environmentId, threadId] = splitKey(key);
        const env = this.envs.get(environmentId);
        const entry = env?.entries.get(threadId);
        if (!env || !entry) continue;
        const deadline = entry.lastActivityMs + this.options.stalledAfterMs;
        if (deadline <= now) {
          if (!entry.view.stalled) this.refresh(env, threadId);
        } else if (next === null || deadline < next) {
          next = deadline;
        }
      }
    });
    return next;
  }

  // ------------------------------------------------------------------ reads

  environment(environmentId: string): EnvironmentView | undefined {
    const env = this.envs.get(environmentId);
    return env && this.envView(env);
  }

  environments(): EnvironmentView[] {
    return [...this.envs.values()].map((env) => this.envView(env));
  }

  agent(key: string): AgentView | undefined {
    const [environmentId, threadId] = splitKey(key);
    return this.envs.get(environmentId)?.entries.get(threadId)?.view;
  }

  *agents(): Iterable<AgentView> {
    for (const env of this.envs.values()) for (const entry of env.entries.values()) yield entry.view;
  }

  row(environmentId: string, threadId: string): ThreadShell | undefined {
    return this.envs.get(environmentId)?.entries.get(threadId)?.row;
  }

  phase(environmentId: string): ConnectionPhase | undefined {
    return this.envs.get(environmentId)?.phase;
  }

  meta(environmentId: string): EnvironmentMeta | undefined {
    return this.envs.get(environmentId)?.meta;
  }

  childrenOf(environmentId: string, threadId: string): AgentView[] {
    const env = this.envs.get(environmentId);
    const ids = env?.children.get(threadId);
    if (!env || !ids) return [];
    return [...ids].flatMap((id) => {
      const view = env.entries.get(id)?.view;
      return view ? [view] : [];
    });
  }

  /** The worst status among a parent's descendants (design §3 roll-ups). O(descendants). */
  rollup(environmentId: string, threadId: string): DisplayStatus | null {
    const statuses: DisplayStatus[] = [];
    const walk = (id: string) => {
      for (const child of this.childrenOf(environmentId, id)) {
        statuses.push(child.status);
        walk(child.threadId);
      }
    };
    walk(threadId);
    return worstOf(statuses);
  }

  counts(): FleetCounts {
    const byStatus: Partial<Record<DisplayStatus, number>> = {};
    let hostsDown = 0;
    let agents = 0;
    for (const env of this.envs.values()) {
      if (env.phase.phase !== "online") hostsDown++;
      for (const [status, count] of env.counts) {
        byStatus[status] = (byStatus[status] ?? 0) + count;
        agents += count;
      }
    }
    const needsYou = (byStatus["needs-approval"] ?? 0) + (byStatus["needs-input"] ?? 0) + (byStatus.failed ?? 0);
    return { byStatus, needsYou, hostsDown, environments: this.envs.size, agents };
  }

  // ------------------------------------------------------------------ internals

  private upsertRow(env: EnvState, row: ThreadShell): void {
    const existing = env.entries.get(row.id);
    if (existing) {
      if (existing.row !== row) existing.lastActivityMs = this.options.now();
      existing.row = row;
      existing.removed = false;
      this.refresh(env, row.id);
      return;
    }
    const parentId = parentThreadIdOf(row.id);
    if (parentId) {
      let siblings = env.children.get(parentId);
      if (!siblings) env.children.set(parentId, (siblings = new Set()));
      siblings.add(row.id);
    }
    const derived = deriveStatus(row, undefined);
    const entry: Entry = { row, facts: undefined, removed: false, derived, lastActivityMs: this.options.now(), view: undefined as unknown as AgentView };
    env.entries.set(row.id, entry);
    this.refresh(env, row.id);
    // A parent appearing adopts its orphans.
    for (const childId of env.children.get(row.id) ?? []) this.refresh(env, childId);
  }

  private deleteEntry(env: EnvState, threadId: string): void {
    const entry = env.entries.get(threadId);
    if (!entry) return;
    this.count(env, entry.view.status, -1);
    env.entries.delete(threadId);
    const key = agentKey(env.meta.environmentId, threadId);
    this.running.delete(key);
    const parentId = parentThreadIdOf(threadId);
    if (parentId) env.children.get(parentId)?.delete(threadId);
    this.pending!.removed.push(key);
    for (const childId of env.children.get(threadId) ?? []) this.refresh(env, childId);
  }

  /** Recomputes one agent's view from its facts; records the change. */
  private refresh(env: EnvState, threadId: string): void {
    const entry = env.entries.get(threadId);
    if (!entry) return;
    const { row, facts } = entry;
    const previous = entry.view as AgentView | undefined;
    entry.derived = deriveStatus(row, facts, entry.removed);
    const shown = displayStatus(entry.derived.status, env.phase);
    const key = agentKey(env.meta.environmentId, threadId);
    const now = this.options.now();
    const stalled = shown.status === "running" && now - entry.lastActivityMs >= this.options.stalledAfterMs;
    if (shown.status === "running") this.running.add(key);
    else this.running.delete(key);
    const parentThreadId = parentThreadIdOf(threadId);
    const view: AgentView = {
      key,
      environmentId: env.meta.environmentId,
      threadId,
      parentThreadId,
      orphaned: parentThreadId !== null && !env.entries.has(parentThreadId),
      title: row.title,
      projectId: row.projectId,
      providerInstanceId: row.session?.providerInstanceId ?? row.modelSelection.instanceId,
      providerDriver: row.session?.providerName ?? null,
      model: row.modelSelection.model,
      effort: effortOf(row.modelSelection.options),
      runtimeMode: row.runtimeMode,
      status: shown.status,
      lastKnownStatus: entry.derived.status,
      asOf: shown.asOf,
      stalled,
      reason: entry.derived.reason,
      activeTurnId: row.session?.activeTurnId ?? null,
      pending: facts?.pending ?? [],
      subagents: facts?.subagents ?? [],
      updatedAt: row.updatedAt,
      lastActivityAt: new Date(entry.lastActivityMs).toISOString(),
    };
    entry.view = view;
    if (previous) this.count(env, previous.status, -1);
    this.count(env, view.status, 1);
    this.pending!.agents.push(view);
    if (!previous || previous.status !== view.status) this.touchEnv(env.meta.environmentId);
  }

  private count(env: EnvState, status: DisplayStatus, delta: number): void {
    const next = (env.counts.get(status) ?? 0) + delta;
    if (next <= 0) env.counts.delete(status);
    else env.counts.set(status, next);
  }

  private touchEnv(environmentId: string): void {
    this.pending!.environments.add(environmentId);
  }

  private envView(env: EnvState): EnvironmentView {
    return { ...env.meta, connection: env.phase, counts: Object.fromEntries(env.counts) };
  }

  /** Collects every change made inside `fn` and publishes them once, the latest view per agent. */
  private batch(fn: () => void): void {
    if (this.pending) {
      fn();
      return;
    }
    this.pending = { agents: [], removed: [], environments: new Set(), removedEnvironments: [] };
    try {
      fn();
    } finally {
      const change = this.pending;
      this.pending = undefined;
      const latest = new Map<string, AgentView>();
      for (const view of change.agents) latest.set(view.key, view);
      for (const key of change.removed) latest.delete(key);
      const environments = [...change.environments].flatMap((id) => {
        const env = this.envs.get(id);
        return env ? [this.envView(env)] : [];
      });
      const published: FleetChange = { agents: [...latest.values()], removed: change.removed, environments, removedEnvironments: change.removedEnvironments };
      if (published.agents.length || published.removed.length || published.environments.length || published.removedEnvironments.length) {
        for (const listener of this.listeners) listener(published);
      }
    }
  }
}

export function splitKey(key: string): [string, string] {
  const slash = key.indexOf("/");
  return [key.slice(0, slash), key.slice(slash + 1)];
}
