// Facts from the fleet service: what the bridge said, applied as it said it. No views here.
import type { StateCreator } from "zustand";
import { type AgentDetail, type AgentDetailDelta, applyDetailDelta, type FleetSettingsView, type FleetSnapshot } from "../../../../shared/bridge/contract";
import { type AgentPatch, applyRowPatch } from "../../../../shared/bridge/row-patch";
import type { Delivery } from "../../../../shared/fleet/delivery";
import type { AgentView, EnvironmentView } from "../../../../shared/fleet/types";
import type { FleetState } from "../store";

export interface FleetDelta {
  agents: AgentView[];
  /** Only the fields that changed on rows the window has (shared/bridge/row-patch.ts). */
  patches?: AgentPatch[];
  removed: string[];
  environments: EnvironmentView[];
  removedEnvironments: string[];
}

/** What the usage totals read of an agent (shared/fleet/changes-usage.ts usageTotals: its figures, machine and project). */
export const USAGE_FIELDS: readonly (keyof AgentView)[] = ["usage", "environmentId", "projectId", "projectTitle"];

export interface FactsSlice {
  /** The bridge to the fleet service is up. */
  connected: boolean;
  /** When the bridge was lost (null while up): everything shown is "unknown" as of then. */
  bridgeLostAt: string | null;
  loaded: boolean;
  /** Agents and environments by id; mutated maps with a version, so 10,000 agents are not copied per event. */
  agents: Map<string, AgentView>;
  environments: Map<string, EnvironmentView>;
  version: number;
  /**
   * Moves with `version` only when something the usage totals read changed (USAGE_FIELDS, agents or
   * machines coming, going or renamed; not a machine's connection or counts): a running agent's activity times, patched every few seconds,
   * do not sum 10,000 agents' usage again (issue 44).
   */
  usageVersion: number;
  deliveries: Map<string, Delivery>;
  details: Map<string, AgentDetail>;
  settings: FleetSettingsView | null;
  /** Problems the service wants the user to know (corrupt registry, no keychain). */
  serviceNotices: string[];
  localServer: { baseUrl: string; label: string; environmentId: string; alreadyPaired: boolean } | null;

  applySnapshot(snapshot: FleetSnapshot): void;
  /** Applies deltas in order, publishing one change for all of them. */
  applyDeltas(deltas: FleetDelta[]): void;
  receiveDetail(detail: AgentDetail): void;
  /** Applies only what changed in open agents' details (entries replaced by id, else appended), in order, publishing one change for all. */
  applyDetailDeltas(deltas: AgentDetailDelta[]): void;
  receiveDelivery(delivery: Delivery): void;
  receiveSettings(settings: FleetSettingsView | null): void;
  /** The bridge went up or down at `at`; `problem` is the shell's reason when it refuses the page. */
  bridgeConnected(connected: boolean, at: string, problem: string | null): void;
  localServerFound(server: FactsSlice["localServer"]): void;
}

export const createFactsSlice: StateCreator<FleetState, [], [], FactsSlice> = (set, get) => ({
  connected: false,
  bridgeLostAt: null,
  loaded: false,
  agents: new Map(),
  environments: new Map(),
  version: 0,
  usageVersion: 0,
  deliveries: new Map(),
  details: new Map(),
  settings: null,
  serviceNotices: [],
  localServer: null,

  applySnapshot: (snapshot) =>
    set((state) => ({
      loaded: true,
      agents: new Map(snapshot.agents.map((agent) => [agent.key, agent])),
      environments: new Map(snapshot.environments.map((env) => [env.environmentId, env])),
      deliveries: new Map(snapshot.deliveries.map((delivery) => [delivery.commandId, delivery])),
      settings: snapshot.settings,
      serviceNotices: snapshot.notices,
      version: state.version + 1,
      usageVersion: state.usageVersion + 1,
    })),

  applyDeltas: (deltas) => {
    const { agents, environments } = get();
    let usageChanged = false;
    for (const delta of deltas) {
      for (const agent of delta.agents) agents.set(agent.key, agent);
      for (const patch of delta.patches ?? []) {
        const row = agents.get(patch.key);
        if (!row) continue;
        agents.set(patch.key, applyRowPatch(row, patch));
        usageChanged ||= USAGE_FIELDS.some((field) => Object.hasOwn(patch.set, field) || patch.unset?.includes(field));
      }
      for (const key of delta.removed) agents.delete(key);
      // The totals read a machine's label alone: its connection and counts change without them (issue 44).
      for (const env of delta.environments) {
        usageChanged ||= environments.get(env.environmentId)?.label !== env.label;
        environments.set(env.environmentId, env);
      }
      for (const id of delta.removedEnvironments) environments.delete(id);
      usageChanged ||= delta.agents.length + delta.removed.length + delta.removedEnvironments.length > 0;
    }
    set((state) => ({ version: state.version + 1, ...(usageChanged && { usageVersion: state.usageVersion + 1 }) }));
  },

  receiveDetail: (detail) =>
    set((state) => {
      // A machine that went away answers "not loaded": the transcript already read stays readable
      // (the panel marks it as of the machine's last confirmation) until a loaded one replaces it.
      const current = state.details.get(detail.key);
      const kept = !detail.loaded && current?.loaded ? { ...current, error: detail.error } : detail;
      return { details: new Map(state.details).set(detail.key, kept) };
    }),
  applyDetailDeltas: (deltas) =>
    set((state) => {
      let details: Map<string, AgentDetail> | null = null;
      for (const delta of deltas) {
        const current = (details ?? state.details).get(delta.key);
        if (!current) continue; // no baseline: the next agent.open answers with the whole detail
        const next = applyDetailDelta(current, delta);
        // As in receiveDetail: a transcript already read stays readable while its machine is away.
        details ??= new Map(state.details);
        details.set(delta.key, current.loaded && !delta.loaded ? { ...next, loaded: true } : next);
      }
      return details ? { details } : state; // nothing applied: no change published
    }),
  receiveDelivery: (delivery) => set((state) => ({ deliveries: new Map(state.deliveries).set(delivery.commandId, delivery) })),
  receiveSettings: (settings) => set({ settings }),
  bridgeConnected: (connected, at, problem) =>
    set((state) => ({
      connected,
      bridgeLostAt: connected ? null : (state.bridgeLostAt ?? at),
      version: state.version + 1,
      ...(problem && { serviceNotices: [problem] }),
    })),
  localServerFound: (localServer) => set({ localServer }),
});
