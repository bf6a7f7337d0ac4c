// The window's derived views, memoized on the store slices they read (tldraw's computed values, the
// zustand docs' derived selectors): the views and the dispatcher (dispatch.ts) read the same object,
// and a store change that does not touch a view's inputs hands back the object it made last, so a
// 10,000-agent fleet's rows are never rebuilt for a change that cannot affect them (issue 41).
// The rules themselves are selectors.ts's; this file only says what each view reads.
import type { AgentView, EnvironmentView } from "../../../shared/fleet/types";
import { type AgentRow, buildRows, displayFacts, type Glance, glance, type Inbox, inbox, paneView, providers, type Row, selectableRows } from "./selectors";
import type { PaneView } from "./slices/ui";
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

/** The fleet tree as flat rows (selectors.ts buildRows). */
export const selectRows = memoized(
  (s) => [selectFacts(s), s.filters, s.search, s.collapsed, s.grouping, s.olderThanMs, s.olderShown, foldClock(s), s.bridgeLostAt] as const,
  (facts, filters, search, collapsed, grouping, olderThanMs, olderShown, now, bridgeLostAt): Row[] =>
    buildRows({
      agents: facts.agents,
      environments: facts.environments,
      filters,
      search,
      collapsed,
      grouping,
      olderThanMs,
      olderShown,
      now,
      bridgeLost: bridgeLostAt !== null,
    }),
);

/** The fleet's counts and who needs the user: the top bar, the Inbox badge and `n` read the one count (shared/fleet/needs.ts). */
export const selectGlance = memoized(
  (s) => [selectFacts(s), s.snoozed, s.clock] as const,
  (facts, snoozed, now): Glance => glance(facts.agents, facts.environments, snoozed, now),
);

/** The inbox as the pane shows it: its filters and search, snoozed items apart. */
export const selectInbox = memoized(
  (s) => [selectFacts(s), s.filters, s.search, s.snoozed, s.clock] as const,
  (facts, filters, search, snoozed, now): Inbox => inbox(facts.agents, filters, search, snoozed, now),
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

/** The providers the fleet's agents run on (the Provider filter's choices). */
export const selectProviders = memoized(
  (s) => [selectFacts(s)] as const,
  (facts): string[] => providers(facts.agents),
);
