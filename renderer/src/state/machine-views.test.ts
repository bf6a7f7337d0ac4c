// The derived views kept per machine (derived.ts, machine-shares.ts, machine-rows.ts, needs-parts.ts)
// against the whole-fleet rules they stand for (selectors.ts): after any sequence of fleet changes
// and view settings, the same rows, glance, inbox and providers as computed from scratch; and a
// change that one machine's agent made leaves every other machine's rows the same objects (issue 44).
import { beforeEach, describe, expect, it } from "vitest";
import type { AgentPatch } from "../../../shared/bridge/row-patch";
import type { AgentStatus, AgentView, EnvironmentView } from "../../../shared/fleet/types";
import { needFingerprint } from "../../../shared/fleet/views";
import { agentView, environmentView } from "../../../shared/fleet/views.testkit";
import { FOLD_CLOCK_MS, selectFacts, selectGlance, selectInbox, selectProviders, selectRows } from "./derived";
import { buildRows, glance, inbox, providers } from "./selectors";
import type { FleetDelta } from "./slices/facts";
import { NO_FILTERS, useFleet } from "./store";

const NOW = Date.parse("2026-12-05T06:00:00.000Z");
const DAY = 86_400_000;
const store = useFleet.getState;
const STATUSES: AgentStatus[] = ["idle", "idle", "idle", "running", "needs-approval", "failed", "stuck", "interrupted", "ended", "starting"];

function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** What the views show, computed from scratch over the whole fleet as the store holds it now. */
function fromScratch() {
  const state = store();
  const { agents, environments } = selectFacts(state);
  const now = Math.floor(state.clock / FOLD_CLOCK_MS) * FOLD_CLOCK_MS;
  return {
    rows: buildRows({ ...state, agents, environments, now, bridgeLost: state.bridgeLostAt !== null }),
    glance: glance(agents, environments, state.snoozed, state.clock),
    inbox: inbox(agents, state.filters, state.search, state.snoozed, state.clock),
    providers: providers(agents),
  };
}

function kept() {
  const state = store();
  return { rows: selectRows(state), glance: selectGlance(state), inbox: selectInbox(state), providers: selectProviders(state) };
}

const at = (ms: number) => new Date(ms).toISOString();
const delta = (patch: Partial<FleetDelta>): FleetDelta => ({ agents: [], removed: [], environments: [], removedEnvironments: [], ...patch });

function machine(index: number): EnvironmentView {
  return environmentView({ environmentId: `m${index}`, label: `machine ${index % 3}` });
}

function agentOn(random: () => number, environmentId: string, threadId: string, parent: string | null): AgentView {
  const status = STATUSES[Math.floor(random() * STATUSES.length)]!;
  const at = new Date(NOW - Math.floor(random() * 3 * DAY)).toISOString();
  return agentView(threadId, status, {
    key: `${environmentId}/${threadId}`,
    environmentId,
    parentThreadId: parent,
    orphaned: parent !== null && random() < 0.2,
    title: `Thread ${Math.floor(random() * 20)}`,
    projectId: `p${Math.floor(random() * 4)}`,
    projectTitle: random() < 0.5 ? `Project ${Math.floor(random() * 4)}` : null,
    providerDriver: random() < 0.5 ? "codex" : "claude",
    acknowledged: random() < 0.3,
    stalled: status === "running" && random() < 0.3,
    lastActivityAt: at,
    updatedAt: at,
    subagents:
      random() < 0.1
        ? [{ id: "s1", title: "helper", kind: null, model: null, childThreadId: null, status: random() < 0.5 ? "failed" : "running", updatedAt: at }]
        : [],
  });
}

beforeEach(() => {
  useFleet.setState({
    loaded: true,
    agents: new Map(),
    environments: new Map(),
    bridgeLostAt: null,
    filters: NO_FILTERS,
    search: "",
    collapsed: new Set(),
    grouping: "machine",
    olderThanMs: DAY,
    olderShown: new Set(),
    snoozed: new Map(),
    clock: NOW,
  });
});

describe("views kept per machine", () => {
  it("are what the whole fleet computed from scratch gives, after any sequence of changes", () => {
    const random = seededRandom(44);
    const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)]!;
    const machines = [0, 1, 2, 3].map(machine);
    let next = 0;
    const newAgent = () => {
      const env = pick(machines);
      const parent = random() < 0.3 ? `t${Math.floor(random() * Math.max(1, next))}` : null;
      return agentOn(random, env.environmentId, `t${next++}`, parent);
    };
    store().applyDeltas([delta({ environments: machines, agents: Array.from({ length: 60 }, newAgent) })]);
    for (let step = 0; step < 400; step++) {
      const agents = [...store().agents.values()];
      const choice = random();
      if (choice < 0.45 && agents.length > 0) {
        // Field patches: the activity time alone most often, as a streaming agent's.
        const patches: AgentPatch[] = Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
          const agent = pick(agents);
          const at = new Date(store().clock - Math.floor(random() * 2 * DAY)).toISOString();
          const roll = random();
          const set: Partial<AgentView> =
            roll < 0.5
              ? { lastActivityAt: at, updatedAt: at }
              : roll < 0.7
                ? { status: pick(STATUSES), lastKnownStatus: pick(STATUSES) }
                : roll < 0.8
                  ? { acknowledged: !agent.acknowledged }
                  : roll < 0.9
                    ? { title: `Thread ${Math.floor(random() * 20)}`, projectTitle: `Project ${Math.floor(random() * 4)}` }
                    : { snoozedUntil: new Date(store().clock + (random() < 0.5 ? -1 : 1) * 90_000).toISOString() };
          return { key: agent.key, set };
        });
        store().applyDeltas([delta({ patches })]);
      } else if (choice < 0.55) {
        store().applyDeltas([delta({ agents: [newAgent()] })]);
      } else if (choice < 0.6 && agents.length > 0) {
        store().applyDeltas([delta({ removed: [pick(agents).key] })]);
      } else if (choice < 0.64) {
        const env = pick(machines);
        const changed = environmentView({
          ...env,
          label: `machine ${Math.floor(random() * 3)}`,
          connection: random() < 0.5 ? env.connection : { phase: "connecting", since: at(store().clock), lastConfirmedAt: null },
        });
        machines[machines.indexOf(env)] = changed;
        store().applyDeltas([delta({ environments: [changed] })]);
      } else if (choice < 0.66) {
        const env = pick(machines);
        store().applyDeltas([delta(store().environments.has(env.environmentId) ? { removedEnvironments: [env.environmentId] } : { environments: [env] })]);
      } else if (choice < 0.72) {
        store().tickClock(store().clock + Math.floor(random() * 6 * 60_000));
      } else if (choice < 0.76) {
        useFleet.setState({ grouping: random() < 0.7 ? "machine" : "project" });
      } else if (choice < 0.8) {
        useFleet.setState({ search: random() < 0.5 ? "" : `${Math.floor(random() * 20)}` });
      } else if (choice < 0.84) {
        useFleet.setState({
          filters:
            random() < 0.5 ? NO_FILTERS : { ...NO_FILTERS, needsMe: random() < 0.5, environmentId: random() < 0.5 ? pick(machines).environmentId : null },
        });
      } else if (choice < 0.88 && agents.length > 0) {
        const key = pick(agents).key;
        const collapsed = new Set(store().collapsed);
        const olderShown = new Set(store().olderShown);
        if (random() < 0.5) collapsed.add(random() < 0.5 ? key : `env:${pick(machines).environmentId}`);
        else olderShown.add(`env:${pick(machines).environmentId}`);
        useFleet.setState({ collapsed, olderShown });
      } else if (choice < 0.92 && agents.length > 0) {
        const agent = pick(agents);
        useFleet.setState({ snoozed: new Map(store().snoozed).set(agent.key, { fingerprint: needFingerprint(agent), until: store().clock + 120_000 }) });
      } else if (choice < 0.94) {
        store().bridgeConnected(store().bridgeLostAt !== null, new Date(store().clock).toISOString(), null);
      } else {
        // Several deltas in one frame, as the page applies them (bridge-events.ts).
        store().applyDeltas([
          delta({ agents: [newAgent()] }),
          delta({ patches: agents.slice(0, 2).map((agent) => ({ key: agent.key, set: { status: "running" as const } })) }),
        ]);
      }
      expect(kept(), `step ${step}`).toEqual(fromScratch());
    }
  });

  it("keep every other machine's rows, and the glance and inbox, when a running agent's activity time moves", () => {
    const random = seededRandom(7);
    const machines = [0, 1, 2].map(machine);
    const agents = machines.flatMap((env) => Array.from({ length: 20 }, (_, index) => agentOn(random, env.environmentId, `t${index}`, null)));
    const busy = agentView("busy", "running", { key: "m0/busy", environmentId: "m0", lastActivityAt: new Date(NOW - 1_000).toISOString() });
    store().applyDeltas([delta({ environments: machines, agents: [...agents, busy] })]);
    const before = kept();
    const at = new Date(NOW).toISOString();
    store().applyDeltas([delta({ patches: [{ key: busy.key, set: { lastActivityAt: at, updatedAt: at } }] })]);
    const after = kept();
    expect(after).toEqual(fromScratch());
    expect(after.rows.find((row) => row.id === busy.key)).toMatchObject({ agent: { lastActivityAt: at } });
    // Machine m0's rows were built again; every other row is the object the views already had.
    const othersBefore = before.rows.filter((row) => !row.id.includes("m0"));
    const othersAfter = after.rows.filter((row) => !row.id.includes("m0"));
    expect(othersAfter.length).toBeGreaterThan(30);
    othersAfter.forEach((row, index) => expect(row).toBe(othersBefore[index]));
    // Nothing the glance, the inbox or the Provider filter show changed: the same objects.
    expect(after.glance).toBe(before.glance);
    expect(after.inbox).toBe(before.inbox);
    expect(after.providers).toBe(before.providers);
  });

  it("keep the rows when the minute clock moves and no idle agent folds, and fold the one that does", () => {
    const env = machine(0);
    const folding = agentView("folding", "idle", { key: "m0/folding", environmentId: "m0", lastActivityAt: new Date(NOW - DAY + 90_000).toISOString() });
    const recent = agentView("recent", "idle", { key: "m0/recent", environmentId: "m0", lastActivityAt: new Date(NOW).toISOString() });
    store().applyDeltas([delta({ environments: [env], agents: [folding, recent] })]);
    const before = selectRows(store());
    store().tickClock(NOW + FOLD_CLOCK_MS);
    expect(selectRows(store())).toBe(before);
    store().tickClock(NOW + 2 * FOLD_CLOCK_MS);
    expect(selectRows(store())).toEqual(fromScratch().rows);
    expect(selectRows(store()).map((row) => row.kind)).toEqual(["environment", "agent", "older"]);
  });
});
