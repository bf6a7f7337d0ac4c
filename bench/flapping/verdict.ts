// The flapping measurement's ground truth and verdict (issue 25's done-line: "over 10 minutes with
// the flapping demo machine the 'needs you' count changes only when a need really changes").
//
// The truth is what the service reports (its snapshot, then every `fleet.delta`), judged by the one
// rule (shared/fleet/needs.ts), except that an agent whose machine is not online keeps what it was
// judged when its machine last was: an outage is no news, whatever the service's "as of" does.
// Each surface of the page (the top bar, the Inbox badge, the tab's title and its icon) must change
// only to what a change of that truth made it, in order: the service emits an event before any page
// can show it, so a page change with no truth change before it is a count that moved by itself.
import type { BridgeEvent, FleetSnapshot } from "../../shared/bridge/contract";
import { tallyNeeds } from "../../shared/fleet/needs";
import { activeSnooze } from "../../shared/fleet/snooze";
import { tabTitle, tabVariant, type TabVariant } from "../../shared/fleet/tray";
import type { AgentView, EnvironmentView } from "../../shared/fleet/types";
import { needFingerprint } from "../../shared/fleet/views";

/** The page's places that show the one count. */
export const SURFACES = ["top bar", "inbox badge", "tab title", "favicon"] as const;
export type Surface = (typeof SURFACES)[number];

/** One agent as the truth judges it. */
interface Judged {
  needsYou: boolean;
  failed: boolean;
  /** What it needs, in the model's words (status, stalled, reason, requests): said when it changes. */
  fingerprint: string;
  title: string;
  machine: string;
}

export interface TruthState {
  count: number;
  variant: TabVariant;
}

/** A change of what needs the user, as the truth saw it. */
export interface NeedChange {
  key: string;
  title: string;
  /** The machine's label. */
  machine: string;
  /** Needs the user before → after, with what it needed. */
  before: string;
  after: string;
}

/** What each surface should show for a truth (the page's own words for the count, from shared/). */
export function expected(surface: Surface, truth: TruthState): string {
  switch (surface) {
    case "top bar":
    case "inbox badge":
      return String(truth.count);
    case "tab title":
      return tabTitle(truth.count, true);
    case "favicon":
      return `${truth.variant} ${truth.count}`;
  }
}

export class NeedsTruth {
  private readonly agents = new Map<string, AgentView>();
  private readonly environments = new Map<string, EnvironmentView>();
  private readonly judged = new Map<string, Judged>();

  constructor(
    snapshot: Pick<FleetSnapshot, "agents" | "environments">,
    private readonly now: () => number = Date.now,
  ) {
    for (const env of snapshot.environments) this.environments.set(env.environmentId, env);
    for (const agent of snapshot.agents) this.agents.set(agent.key, agent);
    this.rejudge();
  }

  /** Applies a service event; returns the agents whose need changed (empty: none did). */
  apply(event: BridgeEvent): NeedChange[] {
    if (event.type === "fleet.snapshot") {
      this.agents.clear();
      this.environments.clear();
      for (const env of event.snapshot.environments) this.environments.set(env.environmentId, env);
      for (const agent of event.snapshot.agents) this.agents.set(agent.key, agent);
    } else if (event.type === "fleet.delta") {
      for (const env of event.environments) this.environments.set(env.environmentId, env);
      for (const id of event.removedEnvironments) this.environments.delete(id);
      for (const agent of event.agents) this.agents.set(agent.key, agent);
      for (const key of event.removed) this.agents.delete(key);
    } else return [];
    return this.rejudge();
  }

  state(): TruthState {
    let count = 0;
    let failed = 0;
    for (const judged of this.judged.values()) {
      if (!judged.needsYou) continue;
      count++;
      if (judged.failed) failed++;
    }
    return { count, variant: tabVariant({ environments: this.environments.size, needsYou: count, failedNeedingYou: failed }, true) };
  }

  /** Whether the machine is online now, as the service says. */
  online(environmentId: string): boolean {
    return this.environments.get(environmentId)?.connection.phase === "online";
  }

  phase(environmentId: string): string | undefined {
    return this.environments.get(environmentId)?.connection.phase;
  }

  private rejudge(): NeedChange[] {
    const changes: NeedChange[] = [];
    const now = this.now();
    for (const [key, agent] of this.agents) {
      const before = this.judged.get(key);
      // Away: what it was judged when its machine was last online stands (an outage is no news).
      if (before && !this.online(agent.environmentId)) continue;
      const tally = tallyNeeds([agent], (view) => activeSnooze(view, undefined, now) !== null);
      const after: Judged = {
        needsYou: tally.needYou.length > 0,
        failed: tally.failed > 0,
        fingerprint: needFingerprint(agent),
        title: agent.title,
        machine: this.environments.get(agent.environmentId)?.label ?? agent.environmentId,
      };
      this.judged.set(key, after);
      if ((before?.needsYou ?? false) !== after.needsYou || (after.needsYou && before?.fingerprint !== after.fingerprint)) {
        changes.push({ key, title: agent.title, machine: after.machine, before: words(before), after: words(after) });
      }
    }
    for (const [key, before] of this.judged) {
      if (this.agents.has(key)) continue;
      this.judged.delete(key);
      if (before.needsYou) changes.push({ key, title: before.title, machine: before.machine, before: words(before), after: "removed" });
    }
    return changes;
  }
}

function words(judged: Judged | undefined): string {
  if (!judged) return "new";
  const [status, stalled, reason] = judged.fingerprint.split("|");
  const what = [status, stalled, reason].filter(Boolean).join(", ");
  return judged.needsYou ? `needs you (${what})` : `nothing (${what})`;
}

/** A value seen at one place: `seq` orders everything the measurement saw, in the order it saw it. */
export interface Seen {
  seq: number;
  at: number;
  value: string;
}

export interface Explained {
  reading: Seen;
  from: string;
  /** The truth change it shows, or null: the surface changed with no need changing. */
  by: Seen | null;
}

/**
 * Matches each change of a surface to the truth change it shows: the next truth change (after the
 * one the surface showed last) to the same value, seen before the reading and at most `lagMs`
 * earlier (or after the surface's first reading, for a page opened later). Truth changes a surface
 * never showed (two in one frame) are only counted.
 */
export function explain(truth: Seen[], readings: Seen[], lagMs: number): { changes: Explained[]; notShown: number } {
  const values = dedupe(truth);
  const seen = dedupe(readings);
  const changes: Explained[] = [];
  const first = seen[0];
  if (!first) return { changes, notShown: 0 };
  let shown = lastIndex(values, (entry) => entry.seq < first.seq && entry.value === first.value);
  let matched = 0;
  for (let i = 1; i < seen.length; i++) {
    const reading = seen[i]!;
    const index = values.findIndex(
      (entry, at) => at > shown && entry.seq < reading.seq && entry.value === reading.value && reading.at - Math.max(entry.at, first.at) <= lagMs,
    );
    if (index >= 0) {
      shown = index;
      matched++;
    }
    changes.push({ reading, from: seen[i - 1]!.value, by: index >= 0 ? values[index]! : null });
  }
  return { changes, notShown: Math.max(0, values.filter((entry) => entry.seq > first.seq).length - matched) };
}

function dedupe(entries: Seen[]): Seen[] {
  return entries.filter((entry, index) => index === 0 || entry.value !== entries[index - 1]!.value);
}

function lastIndex<T>(items: T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!)) return i;
  return -1;
}
