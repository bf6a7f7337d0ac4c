// The merged fleet: every environment's agents as their protocol adapter reports them (neutral
// facts, shared/fleet/facts.ts) plus what followed thread streams revealed, with derived agent views
// kept up to date incrementally. Applying one change touches only that thread (and its parent's
// children index), never the whole fleet: O(changed).
import { attentionFingerprint } from "./acknowledge";
import type { AgentFacts, AgentLifecycle, ThreadDetailFacts } from "./facts";
import { type DerivedStatus, STUCK_STARTING_MS, deriveStatus, displayStatus, isStarting } from "./status";
import { activeSnooze } from "./snooze";
import { awaitsReview } from "./needs";
import { subagentRollup } from "./subagents";
import {
  type AgentView,
  type ConnectionPhase,
  type EnvironmentMeta,
  type EnvironmentView,
  type FleetSnooze,
  type RollupStatus,
  agentKey,
  rollupStatus,
  worstOf,
} from "./types";
import { type FleetGlance, fleetCounts } from "./views";
import { agentViewOf } from "./agent-view";

export interface FleetChange {
  agents: AgentView[];
  removed: string[];
  environments: EnvironmentView[];
  removedEnvironments: string[];
}

export interface FleetModelOptions {
  /** A running agent with no new event for this long is flagged stalled. */
  stalledAfterMs: number;
  /** A starting agent is stuck after this long (default STUCK_STARTING_MS). */
  stuckAfterMs?: number;
  /**
   * The clock quiet and stuck starts are measured on (ms, any origin; default `now`): a monotonic
   * one, which does not run while the computer sleeps, so an hour asleep (or the wall clock set
   * forward) is not an hour of quiet (issue 23; electron/fleet/wake-watch.ts re-checks the connections).
   */
  watchedNow?: () => number;
  /** How long a thread that left the fleet stream stays as a row (default LEFT_ROWS_KEPT_MS). */
  leftRowsKeptMs?: number;
  now: () => number;
}

/**
 * An archived or deleted thread stays in the tree this long, saying so, then leaves it: long
 * enough to see what happened, and a day of churn does not pile up rows (issue 23, bench/soak.ts).
 */
export const LEFT_ROWS_KEPT_MS = 5 * 60_000;

interface Entry {
  facts: AgentFacts;
  detail: ThreadDetailFacts | undefined;
  /** Left the fleet stream without saying whether archived or deleted: shown ended until it says. */
  removedUnsure: boolean;
  /** When it left the fleet stream (the fleet's clock), or null while it is in it. */
  leftAtMs: number | null;
  derived: DerivedStatus;
  /** Last real activity by the fleet's clock: a changed updatedAt or a new thread event. */
  lastActivityMs: number;
  /** The same on the watched clock (FleetModelOptions.watchedNow): what quiet is measured from. */
  lastActivityWatched: number;
  /** When the fleet first saw the current start (the watched clock), or null when not starting. */
  startingSeenWatched: number | null;
  view: AgentView;
}

interface EnvState {
  meta: EnvironmentMeta;
  phase: ConnectionPhase;
  entries: Map<string, Entry>;
  /** parentThreadId → child thread ids, including children whose parent is absent. */
  children: Map<string, Set<string>>;
  counts: Map<RollupStatus, number>;
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
  /** Agents whose view may flip with time alone: running (stalled) and starting (stuck). */
  private readonly timed = new Set<string>();
  /** Agents that left the fleet stream: their rows go after `leftRowsKeptMs`. */
  private readonly leaving = new Set<string>();
  /** agent key → fingerprint of the condition the user acknowledged (see acknowledge.ts). */
  private readonly acknowledgements = new Map<string, string>();
  /** agent key → the snooze T3 Fleet keeps where T3 does not (shared/fleet/snooze.ts). */
  private readonly snoozes = new Map<string, FleetSnooze>();
  /** agent key → the latest turn (its count) whose changes the user marked reviewed. */
  private readonly reviewed = new Map<string, number>();
  /** The user lists agents that finished with changes not reviewed yet (Settings): they need the user. */
  private reviewsListed = false;

  private readonly options: FleetModelOptions;

  constructor(options: FleetModelOptions) {
    this.options = { ...options };
  }

  /** The quiet time after which a running agent counts as stalled (a user setting). */
  setStalledAfter(ms: number): void {
    this.options.stalledAfterMs = ms;
    // Either direction: running agents may become stalled or stop being stalled.
    this.batch(() => {
      for (const key of [...this.timed]) {
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
        this.timed.delete(key);
        this.leaving.delete(key);
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
    // Going offline or back changes what every agent of this environment may claim.
    if (before.status !== after.status || before.asOf !== after.asOf) {
      for (const threadId of env.entries.keys()) this.refresh(env, threadId);
    }
    this.touchEnv(env.meta.environmentId);
  }

  // ------------------------------------------------------------------ fleet stream (neutral facts)

  /** A complete set of an environment's agents: threads absent from it are gone. */
  applyFleetSnapshot(environmentId: string, agents: readonly AgentFacts[]): void {
    const env = this.envs.get(environmentId);
    if (!env) return;
    this.batch(() => {
      const seen = new Set<string>();
      for (const agent of agents) {
        seen.add(agent.threadId);
        this.upsertEntry(env, agent);
      }
      for (const threadId of [...env.entries.keys()]) if (!seen.has(threadId)) this.deleteEntry(env, threadId);
      this.touchEnv(environmentId);
    });
  }

  upsertAgent(environmentId: string, agent: AgentFacts): void {
    const env = this.envs.get(environmentId);
    if (!env) return;
    this.batch(() => this.upsertEntry(env, agent));
  }

  /** A thread left the fleet stream: it stays visible as archived, deleted or ended for LEFT_ROWS_KEPT_MS. */
  removeAgent(environmentId: string, threadId: string, lifecycle: Exclude<AgentLifecycle, "active"> | "archived-or-deleted"): void {
    const env = this.envs.get(environmentId);
    const entry = env?.entries.get(threadId);
    if (!env || !entry) return;
    this.batch(() => {
      if (lifecycle === "archived-or-deleted") entry.removedUnsure = true;
      else entry.facts = { ...entry.facts, lifecycle };
      entry.leftAtMs ??= this.options.now();
      this.leaving.add(agentKey(environmentId, threadId));
      this.refresh(env, threadId);
    });
  }

  /** What a followed thread stream revealed. A newer event is real activity; a re-sent detail is not. */
  setThreadDetail(environmentId: string, threadId: string, detail: ThreadDetailFacts): void {
    const env = this.envs.get(environmentId);
    const entry = env?.entries.get(threadId);
    if (!env || !entry) return;
    this.batch(() => {
      if (detail.lastEventAt !== null && detail.lastEventAt !== entry.detail?.lastEventAt) this.active(entry);
      entry.detail = withoutOutcomes(detail);
      this.refresh(env, threadId);
    });
  }

  /**
   * Re-evaluates what time alone changes (stalled runs, stuck starts, rows of threads that left);
   * returns when the next one could change (ms since epoch), or null.
   */
  checkStalls(): number | null {
    const now = this.options.now();
    let next: number | null = null;
    this.batch(() => {
      for (const key of [...this.leaving]) {
        const [environmentId, threadId] = splitKey(key);
        const env = this.envs.get(environmentId);
        const leftAtMs = env?.entries.get(threadId)?.leftAtMs;
        if (!env || leftAtMs === undefined || leftAtMs === null) {
          this.leaving.delete(key);
          continue;
        }
        const goesAt = leftAtMs + (this.options.leftRowsKeptMs ?? LEFT_ROWS_KEPT_MS);
        if (goesAt <= now) this.deleteEntry(env, threadId);
        else if (next === null || goesAt < next) next = goesAt;
      }
      for (const key of [...this.timed]) {
        const [environmentId, threadId] = splitKey(key);
        const env = this.envs.get(environmentId);
        const entry = env?.entries.get(threadId);
        if (!env || !entry) continue;
        const deadline = this.deadline(entry);
        if (deadline === null) continue;
        if (deadline <= now) this.refresh(env, threadId);
        else if (next === null || deadline < next) next = deadline;
      }
    });
    return next;
  }

  /** The next time this entry's view flips by time alone, or null if it already did or never will. */
  private deadline(entry: Entry): number | null {
    const status = entry.view.lastKnownStatus;
    // Measured on the watched clock, answered on the wall clock the caller schedules with.
    const fromNow = (watchedDeadline: number) => this.options.now() + (watchedDeadline - this.watchedNow());
    if (status === "running" && !entry.view.stalled) return fromNow(entry.lastActivityWatched + this.options.stalledAfterMs);
    if (status === "starting" && entry.startingSeenWatched !== null) return fromNow(entry.startingSeenWatched + this.stuckAfterMs);
    return null;
  }

  private watchedNow(): number {
    return (this.options.watchedNow ?? this.options.now)();
  }

  private active(entry: Entry): void {
    entry.lastActivityMs = this.options.now();
    entry.lastActivityWatched = this.watchedNow();
  }

  /**
   * When this agent's view next changes by time alone (ms since epoch): a run turning stalled, a
   * start turning stuck, or the row of a thread that left going; null if none is due.
   */
  deadlineOf(key: string): number | null {
    const [environmentId, threadId] = splitKey(key);
    const entry = this.envs.get(environmentId)?.entries.get(threadId);
    if (!entry) return null;
    const flips = this.deadline(entry);
    if (entry.leftAtMs === null) return flips;
    const goes = entry.leftAtMs + (this.options.leftRowsKeptMs ?? LEFT_ROWS_KEPT_MS);
    return flips === null ? goes : Math.min(flips, goes);
  }

  private get stuckAfterMs(): number {
    return this.options.stuckAfterMs ?? STUCK_STARTING_MS;
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

  /** The facts an agent's adapter last reported. */
  facts(environmentId: string, threadId: string): AgentFacts | undefined {
    return this.envs.get(environmentId)?.entries.get(threadId)?.facts;
  }

  phase(environmentId: string): ConnectionPhase | undefined {
    return this.envs.get(environmentId)?.phase;
  }

  meta(environmentId: string): EnvironmentMeta | undefined {
    return this.envs.get(environmentId)?.meta;
  }

  /** Parents the children index holds, across machines: for the heap bound's tests (issue 43). */
  get parentsIndexed(): number {
    return [...this.envs.values()].reduce((parents, env) => parents + env.children.size, 0);
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

  /** The worst status among a parent's descendants and their native subagents (the roll-up; stalled and held up as themselves). O(descendants). */
  rollup(environmentId: string, threadId: string): RollupStatus | null {
    const statuses: RollupStatus[] = [];
    const walk = (view: AgentView | undefined) => {
      statuses.push(...(view?.subagents ?? []).flatMap((subagent) => subagentRollup(subagent) ?? []));
      for (const child of view ? this.childrenOf(environmentId, view.threadId) : []) {
        statuses.push(rollupStatus(child));
        walk(child);
      }
    };
    walk(this.agent(agentKey(environmentId, threadId)));
    return worstOf(statuses);
  }

  /** The fleet at a glance, by the one "needs you" rule (shared/fleet/needs.ts); T3's snoozes and T3 Fleet's own apply. O(agents). */
  counts(): FleetGlance {
    const now = this.options.now();
    return fleetCounts(this.environments(), this.agents(), (agent) => activeSnooze(agent, undefined, now) !== null);
  }

  // ------------------------------------------------------------------ acknowledgements

  /** What acknowledging this agent now would cover, or null when nothing can be acknowledged. */
  acknowledgeable(key: string): string | null {
    const [environmentId, threadId] = splitKey(key);
    const entry = this.envs.get(environmentId)?.entries.get(threadId);
    return entry ? attentionFingerprint(entry.view, entry.facts) : null;
  }

  /** Sets (or with null clears) the acknowledged condition of an agent and refreshes its view. */
  setAcknowledgement(key: string, fingerprint: string | null): void {
    if (fingerprint === null) this.acknowledgements.delete(key);
    else this.acknowledgements.set(key, fingerprint);
    const [environmentId, threadId] = splitKey(key);
    const env = this.envs.get(environmentId);
    const entry = env?.entries.get(threadId);
    if (!env || !entry) return;
    const acknowledged = fingerprint !== null && fingerprint === attentionFingerprint(entry.view, entry.facts);
    if (acknowledged !== entry.view.acknowledged) this.batch(() => this.refresh(env, threadId));
  }

  // ------------------------------------------------------------------ reviews (shared/fleet/needs.ts awaitsReview)

  /** Whether agents that finished with changes not reviewed yet need the user (a setting). */
  setReviewsListed(on: boolean): void {
    if (on === this.reviewsListed) return;
    this.reviewsListed = on;
    this.batch(() => {
      for (const env of this.envs.values()) for (const threadId of [...env.entries.keys()]) this.refresh(env, threadId);
    });
  }

  /** The latest turn whose changes the user marked reviewed (null: none), and refreshes the agent's view. */
  setReviewed(key: string, turnCount: number | null): void {
    if (turnCount === null) this.reviewed.delete(key);
    else this.reviewed.set(key, turnCount);
    const [environmentId, threadId] = splitKey(key);
    const env = this.envs.get(environmentId);
    if (env?.entries.has(threadId)) this.batch(() => this.refresh(env, threadId));
  }

  /** The turn marked reviewed for this agent, if any. */
  reviewedTurn(key: string): number | null {
    return this.reviewed.get(key) ?? null;
  }

  // ------------------------------------------------------------------ snoozes T3 Fleet keeps

  /** Sets (or with null clears) the snooze T3 Fleet keeps for an agent and refreshes its view. */
  setSnooze(key: string, snooze: FleetSnooze | null): void {
    if (snooze === null) this.snoozes.delete(key);
    else this.snoozes.set(key, snooze);
    const [environmentId, threadId] = splitKey(key);
    const env = this.envs.get(environmentId);
    if (env?.entries.has(threadId)) this.batch(() => this.refresh(env, threadId));
  }

  // ------------------------------------------------------------------ internals

  private upsertEntry(env: EnvState, facts: AgentFacts): void {
    const existing = env.entries.get(facts.threadId);
    if (existing) {
      // Real activity only: a snapshot re-sending the same row is not news (issue 7).
      if (existing.facts.updatedAt !== facts.updatedAt) this.active(existing);
      if (existing.facts.parent?.threadId !== facts.parent?.threadId) {
        this.unlinkChild(env, facts.threadId, existing.facts.parent?.threadId);
        this.linkChild(env, facts.threadId, facts.parent?.threadId);
      }
      existing.facts = facts;
      existing.removedUnsure = false;
      existing.leftAtMs = null;
      this.leaving.delete(agentKey(env.meta.environmentId, facts.threadId));
      this.refresh(env, facts.threadId);
      return;
    }
    this.linkChild(env, facts.threadId, facts.parent?.threadId);
    const entry: Entry = {
      facts,
      detail: undefined,
      removedUnsure: false,
      leftAtMs: null,
      derived: { status: "idle", reason: null },
      lastActivityMs: this.options.now(),
      lastActivityWatched: this.watchedNow(),
      startingSeenWatched: null,
      view: undefined as unknown as AgentView,
    };
    env.entries.set(facts.threadId, entry);
    this.refresh(env, facts.threadId);
    // A parent appearing adopts its orphans; a child appearing may carry one of its parent's subagents.
    for (const childId of env.children.get(facts.threadId) ?? []) this.refresh(env, childId);
    if (facts.parent && env.entries.has(facts.parent.threadId)) this.refresh(env, facts.parent.threadId);
  }

  private linkChild(env: EnvState, threadId: string, parentId: string | undefined): void {
    if (!parentId) return;
    let siblings = env.children.get(parentId);
    if (!siblings) env.children.set(parentId, (siblings = new Set()));
    siblings.add(threadId);
  }

  private unlinkChild(env: EnvState, threadId: string, parentId: string | undefined): void {
    const siblings = parentId ? env.children.get(parentId) : undefined;
    // An empty set would stay for every parent that ever had a child (issue 43: the heap under churn).
    if (siblings?.delete(threadId) && siblings.size === 0) env.children.delete(parentId!);
  }

  private deleteEntry(env: EnvState, threadId: string): void {
    const entry = env.entries.get(threadId);
    if (!entry) return;
    this.count(env, rollupStatus(entry.view), -1);
    env.entries.delete(threadId);
    const key = agentKey(env.meta.environmentId, threadId);
    this.timed.delete(key);
    this.leaving.delete(key);
    this.unlinkChild(env, threadId, entry.facts.parent?.threadId);
    this.pending!.removed.push(key);
    for (const childId of env.children.get(threadId) ?? []) this.refresh(env, childId);
  }

  /** Recomputes one agent's view from its facts; records the change. */
  private refresh(env: EnvState, threadId: string): void {
    const entry = env.entries.get(threadId);
    if (!entry) return;
    const { facts, detail } = entry;
    const previous = entry.view as AgentView | undefined;
    const watched = this.watchedNow();
    const starting = isStarting(facts.run);
    if (!starting) entry.startingSeenWatched = null;
    else if (entry.startingSeenWatched === null) entry.startingSeenWatched = watched;
    const derived = deriveStatus(facts, detail, { startingForMs: starting ? watched - entry.startingSeenWatched! : 0, stuckAfterMs: this.stuckAfterMs });
    // A thread that left its server's stream waits on nobody: archiving or deleting a thread stops
    // its provider session in T3, so a request it had can no longer be answered (docs/t3-protocols.md).
    entry.derived = entry.removedUnsure && facts.lifecycle === "active" ? { status: "ended", reason: "Archived or deleted" } : derived;
    const shown = displayStatus(entry.derived.status, env.phase);
    const key = agentKey(env.meta.environmentId, threadId);
    const running = entry.derived.status === "running";
    const heldUp = running && entry.derived.heldUp === true;
    // While its machine is away a run's stall is kept as last confirmed: no news is not a new stall,
    // and a stall does not end (or a held-up run read "was running") because the machine dropped off.
    const quiet =
      shown.status === "unknown"
        ? previous?.lastKnownStatus === "running" && previous.stalled
        : watched - entry.lastActivityWatched >= this.options.stalledAfterMs;
    const stalled = running && (heldUp || quiet);
    const view = agentViewOf({
      key,
      environmentId: env.meta.environmentId,
      threadId,
      facts,
      detail,
      derived: entry.derived,
      shown,
      stalled,
      heldUp,
      lastActivityMs: entry.lastActivityMs,
      // A native subagent carried by a child thread the fleet shows is that child, not a second row.
      shows: (otherThreadId) => env.entries.has(otherThreadId),
    });
    const acknowledged = this.acknowledgements.get(key);
    view.acknowledged = acknowledged !== undefined && acknowledged === attentionFingerprint(view, facts);
    const snooze = this.snoozes.get(key);
    if (snooze) view.fleetSnooze = snooze;
    if (this.reviewsListed && awaitsReview(view, this.reviewed.get(key))) view.review = true;
    entry.view = view;
    if (shown.status === "running" || shown.status === "starting") this.timed.add(key);
    else this.timed.delete(key);
    const rolled = rollupStatus(view);
    if (previous) this.count(env, rollupStatus(previous), -1);
    this.count(env, rolled, 1);
    this.pending!.agents.push(view);
    if (!previous || rollupStatus(previous) !== rolled) this.touchEnv(env.meta.environmentId);
  }

  private count(env: EnvState, status: RollupStatus, delta: number): void {
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

/**
 * The row keeps what its view reads. How every message and request of a thread ended is read from
 * the followed thread itself (electron/fleet/deliveries.ts); kept here it would stay with the row,
 * growing with every one (the soaks' heap: a protocol-2 request id is some 250 characters, a key each).
 */
function withoutOutcomes(detail: ThreadDetailFacts): ThreadDetailFacts {
  if (detail.messageOutcomes === undefined && detail.requestEnds === undefined) return detail;
  const { messageOutcomes: _outcomes, requestEnds: _ends, ...kept } = detail;
  return kept;
}
