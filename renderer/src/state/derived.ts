// The window's derived views, memoized on the store slices they read (tldraw's computed values, the
// zustand docs' derived selectors): the views and the dispatcher (dispatch.ts) read the same object,
// and a store change that does not touch a view's inputs hands back the object it made last, so a
// 10,000-agent fleet's rows are never rebuilt for a change that cannot affect them (issue 41).
// The rules themselves are selectors.ts's; this file only says what each view reads.
import type { AgentView, EnvironmentView } from "../../../shared/fleet/types";
import { type MachineShares, machineSharesTracker, perMachine } from "./machine-shares";
import { machineRowsTracker } from "./machine-rows";
import { countsOf, mergeNeeds, type NeedsPart, needsPart } from "./needs-parts";
import { type AgentRow, buildRows, displayFacts, type Glance, type Inbox, inboxOf, paneView, providers, type Row, selectableRows } from "./selectors";
import type { PaneView, Snooze } from "./slices/ui";
import type { FleetState } from "./store";

/** The clock old idle agents fold by and snoozes run out on moves by the minute (slices/ui.ts `clock`). */
export const FOLD_CLOCK_MS = 60_000;

/**
 * A selector that recomputes only when one of its inputs changed (by identity): `inputs` picks what
 * the view reads from the state; the last inputs and result are kept (one store, one cache).
 */
export function memoized<const Inputs extends readonly unknown[], Result>(
  inputs: (state: FleetState) => Inputs,
  compute: (...inputs: { [Index in keyof Inputs]: Inputs[Index] }) => Result,
): (state: FleetState) => Result {
  let last: { inputs: Inputs; result: Result } | null = null;
  return (state) => {
    const next = inputs(state);
    if (last && next.length === last.inputs.length && next.every((input, index) => Object.is(input, last!.inputs[index]))) return last.result;
    last = { inputs: next, result: compute(...next) };
    return last.result;
  };
}

export interface FleetFacts {
  /** As the window shows them: every agent "unknown" while the bridge is lost. */
  agents: Map<string, AgentView>;
  environments: Map<string, EnvironmentView>;
  /** The store's change counter this object was made for. */
  version: number;
}

/**
 * The facts as shown. The agents and environments maps are mutated in place (10,000 agents are not
 * copied per event) and `version` marks each change, so this is one object per version: a view that
 * depends on it recomputes when the facts change.
 */
export const selectFacts = memoized(
  (s) => [s.agents, s.environments, s.bridgeLostAt, s.version] as const,
  (agents, environments, bridgeLostAt, version): FleetFacts => ({ agents: displayFacts(agents, bridgeLostAt), environments, version }),
);

const foldClock = (s: FleetState) => Math.floor(s.clock / FOLD_CLOCK_MS) * FOLD_CLOCK_MS;

/** The facts by machine: a machine's share is a new object only when it or one of its agents changed (machine-shares.ts). */
const trackMachines = machineSharesTracker();
export const selectMachines = memoized(
  (s) => [selectFacts(s)] as const,
  (facts): MachineShares => trackMachines(facts.agents, facts.environments),
);

const machineRows = machineRowsTracker();
let lastMachineRows: { machines: MachineShares | null; parts: ReadonlyMap<string, Row[]> | null; rows: Row[] } = { machines: null, parts: null, rows: [] };

/** The tree by machine: each machine's rows, kept apart (machine-rows.ts), in buildRows's order of machines (by label, ties as listed). */
const selectMachineRows = memoized(
  (s) => [selectMachines(s), s.filters, s.search, s.collapsed, s.olderThanMs, s.olderShown, foldClock(s), s.bridgeLostAt !== null] as const,
  (machines, filters, search, collapsed, olderThanMs, olderShown, now, bridgeLost): Row[] => {
    const parts = machineRows(machines, { filters, search, collapsed, olderThanMs, olderShown, bridgeLost }, now);
    // The minute clock moved and no machine's rows changed: the same rows.
    if (parts === lastMachineRows.parts && machines === lastMachineRows.machines) return lastMachineRows.rows;
    const listed = [...machines.values()].filter((share) => share.env !== undefined);
    listed.sort((a, b) => a.env!.label.localeCompare(b.env!.label));
    lastMachineRows = { machines, parts, rows: listed.flatMap((share) => parts.get(share.environmentId) ?? []) };
    return lastMachineRows.rows;
  },
);

/** The tree by project: a project's agents span machines, so it is built whole. */
const selectProjectRows = memoized(
  (s) => [selectFacts(s), s.filters, s.search, s.collapsed, s.olderThanMs, s.olderShown, foldClock(s), s.bridgeLostAt !== null] as const,
  (facts, filters, search, collapsed, olderThanMs, olderShown, now, bridgeLost): Row[] =>
    buildRows({ ...facts, filters, search, collapsed, grouping: "project", olderThanMs, olderShown, now, bridgeLost }),
);

/** The fleet tree as flat rows (selectors.ts buildRows). */
export const selectRows = (s: FleetState): Row[] => (s.grouping === "machine" ? selectMachineRows(s) : selectProjectRows(s));

/** Each machine's counts and who of its agents needs the user (needs-parts.ts), the same part back while nothing counted changed. */
interface MachineNeeds {
  part: NeedsPart;
  snoozed: Map<string, Snooze>;
  now: number;
}
const machineNeeds = perMachine(
  (share, previous: MachineNeeds | undefined, snoozed: Map<string, Snooze>, now: number): MachineNeeds => {
    const part = needsPart(share.env, share.agents.values(), snoozed, now, previous?.part);
    return previous?.part === part && previous.snoozed === snoozed && previous.now === now ? previous : { part, snoozed, now };
  },
  // The clock moves every minute: a machine none of whose snoozes it judged keeps its part.
  (kept, snoozed, now) => kept.snoozed === snoozed && (kept.now === now || !kept.part.readsClock),
);
const selectMachineNeeds = memoized((s) => [selectMachines(s), s.snoozed, s.clock] as const, machineNeeds);

/** The fleet's counts and needs: the machines' parts summed, the same object while no part changed. */
export const selectNeeds = memoized(
  (s) => [selectMachineNeeds(s)] as const,
  (parts): NeedsPart => mergeNeeds([...parts.values()].map((machine) => machine.part)),
);

/** The fleet's counts and who needs the user: the top bar, the Inbox badge and `n` read the one count (shared/fleet/needs.ts). */
export const selectGlance = memoized(
  (s) => [selectNeeds(s)] as const,
  (needs): Glance => ({ counts: countsOf(needs), needYou: needs.tally.needYou }),
);

/** The inbox as the pane shows it: its filters and search, snoozed items apart. */
export const selectInbox = memoized(
  (s) => [selectNeeds(s), s.filters, s.search] as const,
  (needs, filters, search): Inbox => inboxOf(needs.tally, filters, search),
);

/** The pane shown: the user's choice, else the inbox while anything in it needs them. */
export const selectPane = (s: FleetState): PaneView => paneView(s.view, selectInbox(s).items.length);

/** The tree's agents the selection moves through (parents kept only as context for a match are skipped). */
export const selectMatchingRows = memoized(
  (s) => [selectRows(s)] as const,
  (rows): AgentRow[] => selectableRows(rows),
);

/** What ↑/↓ move through and what a search chooses from: the inbox's items, or the tree's matching agents. */
export const selectSelectable = memoized(
  (s) => [selectPane(s), selectInbox(s), selectMatchingRows(s)] as const,
  (pane, shownInbox, matching): string[] => (pane === "inbox" ? shownInbox.items.map((agent) => agent.key) : matching.map((row) => row.id)),
);

/** The providers each machine's agents run on, the same list back while it holds the same names. */
const machineProviders = perMachine((share, previous: string[] | undefined): string[] => {
  const names = providers(share.agents);
  return previous && sameNames(previous, names) ? previous : names;
});
const selectMachineProviders = memoized((s) => [selectMachines(s)] as const, machineProviders);

/** The providers the fleet's agents run on (the Provider filter's choices). */
export const selectProviders = memoized(
  (s) => [selectMachineProviders(s)] as const,
  (parts): string[] => [...new Set([...parts.values()].flat())].sort(),
);

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, index) => name === b[index]);
}
