// The store's derived views (derived.ts) against the real store: correct for a small fleet, and the
// same object back after a store change that does not touch what the view reads (issue 41).
import { beforeEach, describe, expect, it } from "vitest";
import type { AgentView } from "../../../shared/fleet/types";
import { needFingerprint } from "../../../shared/fleet/views";
import { agentView, environmentView } from "../../../shared/fleet/views.testkit";
import { FOLD_CLOCK_MS, selectFacts, selectGlance, selectInbox, selectPane, selectRows, selectSelectable } from "./derived";
import { NO_FILTERS, useFleet } from "./store";

const NOW = Date.parse("2026-12-05T06:00:00.000Z");
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const store = useFleet.getState;
const derived = () => {
  const state = store();
  return { rows: selectRows(state), inbox: selectInbox(state), glance: selectGlance(state), selectable: selectSelectable(state), pane: selectPane(state) };
};

const studio = environmentView();
const question = agentView("ask", "needs-input", { title: "Question", lastActivityAt: ago(2_000) });
const broken = agentView("broken", "failed", { title: "Broken", lastActivityAt: ago(3_000) });
const busy = agentView("busy", "running", { title: "Busy", lastActivityAt: ago(1_000) });
const quiet = agentView("quiet", "idle", { title: "Quiet", lastActivityAt: ago(4_000) });

function addAgents(agents: AgentView[]): void {
  store().applyDeltas([{ agents, removed: [], environments: [], removedEnvironments: [] }]);
}

beforeEach(() => {
  useFleet.setState({
    agents: new Map(),
    environments: new Map(),
    bridgeLostAt: null,
    filters: NO_FILTERS,
    search: "",
    collapsed: new Set(),
    grouping: "machine",
    view: null,
    snoozed: new Map(),
    olderShown: new Set(),
    selectedKey: null,
    openKey: null,
    clock: NOW,
  });
  store().applyDeltas([{ agents: [question, broken, busy, quiet], removed: [], environments: [studio], removedEnvironments: [] }]);
});

describe("derived views", () => {
  it("are the tree's rows, the inbox, the glance and what ↑/↓ move through, for a small fleet", () => {
    const { rows, inbox, glance, selectable, pane } = derived();
    expect(rows.map((row) => (row.kind === "agent" ? row.agent.title : row.kind))).toEqual(["environment", "Question", "Broken", "Busy", "Quiet"]);
    expect(inbox.items.map((agent) => agent.title)).toEqual(["Question", "Broken"]);
    expect(glance.counts).toMatchObject({ agents: 4, environments: 1, needsYou: 2 });
    // Something needs the user and they chose no pane: the inbox shows, and ↑/↓ move through it.
    expect(pane).toBe("inbox");
    expect(selectable).toEqual([question.key, broken.key]);
    store().setView("fleet");
    expect(selectSelectable(store())).toEqual([question.key, broken.key, busy.key, quiet.key]);
    store().setSearch("qu");
    expect(selectSelectable(store())).toEqual([question.key, quiet.key]);
    expect(selectInbox(store()).items.map((agent) => agent.title)).toEqual(["Question"]);
  });

  it("hand back the same objects after a change none of them reads", () => {
    const before = derived();
    store().select(busy.key);
    store().showSettings(true);
    store().showPalette(true);
    store().commandFailed("agent:e/busy", "No");
    store().setDraft(busy.key, "hello");
    const after = derived();
    for (const view of ["rows", "inbox", "glance", "selectable"] as const) expect(after[view]).toBe(before[view]);
    // A tick within the minute the tree folds by leaves the rows; the inbox and glance read the clock
    // (snoozes run out on it) and are made anew, with the same content.
    store().tickClock(NOW + 1_000);
    const ticked = derived();
    expect(ticked.rows).toBe(before.rows);
    expect(ticked.inbox).toEqual(before.inbox);
    expect(ticked.glance).toEqual(before.glance);
  });

  it("recompute only the views whose inputs changed", () => {
    const before = derived();
    // Grouping changes the tree, never the inbox or the glance.
    store().setGrouping("project");
    const grouped = derived();
    expect(grouped.rows).not.toBe(before.rows);
    expect(grouped.rows[0]).toMatchObject({ kind: "project" });
    expect(grouped.inbox).toBe(before.inbox);
    expect(grouped.glance).toBe(before.glance);
    // A snooze changes the inbox and the glance, never the tree.
    store().snooze(broken.key, { until: NOW + FOLD_CLOCK_MS * 60, fingerprint: needFingerprint(broken) });
    const snoozed = derived();
    expect(snoozed.rows).toBe(grouped.rows);
    expect(snoozed.inbox.items.map((agent) => agent.title)).toEqual(["Question"]);
    expect(snoozed.glance.counts).toMatchObject({ needsYou: 1, snoozed: 1 });
    expect(snoozed.selectable).toEqual([question.key]);
  });

  it("follow the facts: a delta, mutating the maps in place, makes new views", () => {
    const before = derived();
    const facts = selectFacts(store());
    addAgents([agentView("new", "needs-approval", { title: "Approve me", lastActivityAt: ago(500) })]);
    const after = derived();
    expect(selectFacts(store())).not.toBe(facts);
    expect(after.rows).not.toBe(before.rows);
    expect(after.inbox.items.map((agent) => agent.title)).toEqual(["Question", "Approve me", "Broken"]);
    expect(after.glance.counts.needsYou).toBe(3);
  });

  it("show every agent as unknown while the service is lost", () => {
    store().bridgeConnected(false, ago(0), null);
    const { rows } = derived();
    expect(rows[0]).toMatchObject({ kind: "environment", unknown: true });
    expect(rows.filter((row) => row.kind === "agent").map((row) => row.kind === "agent" && row.agent.status)).toEqual([
      "unknown",
      "unknown",
      "unknown",
      "unknown",
    ]);
  });
});
