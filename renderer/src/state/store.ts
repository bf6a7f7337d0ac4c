// Facts from the fleet service, and the UI's own state. Views are derived in selectors.ts;
// side effects (bridge requests, subscriptions) live in effects.ts only.
import { create } from "zustand";
import { type AgentDetail, type AgentDetailDelta, type FleetSettingsView, type FleetSnapshot, type PairPreview, applyDetailDelta } from "../../../shared/bridge/contract";
import type { Delivery } from "../../../shared/fleet/delivery";
import type { NotificationIntent } from "../../../shared/fleet/notifications";
import type { AgentView, EnvironmentView } from "../../../shared/fleet/types";

export interface Filters {
  needsMe: boolean;
  failed: boolean;
  running: boolean;
  offline: boolean;
  environmentId: string | null;
  provider: string | null;
}

export const NO_FILTERS: Filters = { needsMe: false, failed: false, running: false, offline: false, environmentId: null, provider: null };

export interface PairingState {
  open: boolean;
  input: string;
  token: string;
  label: string;
  preview: PairPreview | null;
  busy: boolean;
  error: string | null;
  /** Re-pairing an existing environment. */
  environmentId: string | null;
}

export interface FleetState {
  connected: boolean;
  loaded: boolean;
  /** Agents and environments by id; mutated maps with a version, so 10,000 agents are not copied per event. */
  agents: Map<string, AgentView>;
  environments: Map<string, EnvironmentView>;
  version: number;
  deliveries: Map<string, Delivery>;
  details: Map<string, AgentDetail>;
  settings: FleetSettingsView | null;
  notices: string[];
  toasts: NotificationIntent[];

  selectedKey: string | null;
  openKey: string | null;
  filters: Filters;
  search: string;
  collapsed: Set<string>;
  pairing: PairingState;
  settingsOpen: boolean;
  localServer: { baseUrl: string; label: string; environmentId: string; alreadyPaired: boolean } | null;

  applySnapshot(snapshot: FleetSnapshot): void;
  /** Applies deltas in order, publishing one change for all of them. */
  applyDeltas(deltas: { agents: AgentView[]; removed: string[]; environments: EnvironmentView[]; removedEnvironments: string[] }[]): void;
  setDetail(detail: AgentDetail): void;
  /** Applies only what changed in an open agent's detail (entries replaced by id, else appended). */
  applyDetailDelta(delta: AgentDetailDelta): void;
  setDelivery(delivery: Delivery): void;
  pushToast(toast: NotificationIntent): void;
  dismissToast(id: string): void;
  set(patch: Partial<FleetState>): void;
  setPairing(patch: Partial<PairingState>): void;
  toggleCollapsed(id: string): void;
  setFilters(patch: Partial<Filters>): void;
}

export const EMPTY_PAIRING: PairingState = { open: false, input: "", token: "", label: "", preview: null, busy: false, error: null, environmentId: null };

/** Toasts kept on screen at once; older ones scroll away. */
const MAX_TOASTS = 4;

export const useFleet = create<FleetState>((set, get) => ({
  connected: false,
  loaded: false,
  agents: new Map(),
  environments: new Map(),
  version: 0,
  deliveries: new Map(),
  details: new Map(),
  settings: null,
  notices: [],
  toasts: [],
  selectedKey: null,
  openKey: null,
  filters: NO_FILTERS,
  search: "",
  collapsed: new Set(),
  pairing: EMPTY_PAIRING,
  settingsOpen: false,
  localServer: null,

  applySnapshot: (snapshot) =>
    set((state) => ({
      loaded: true,
      agents: new Map(snapshot.agents.map((agent) => [agent.key, agent])),
      environments: new Map(snapshot.environments.map((env) => [env.environmentId, env])),
      deliveries: new Map(snapshot.deliveries.map((delivery) => [delivery.commandId, delivery])),
      settings: snapshot.settings,
      notices: snapshot.notices,
      version: state.version + 1,
    })),

  applyDeltas: (deltas) => {
    const { agents, environments } = get();
    for (const delta of deltas) {
      for (const agent of delta.agents) agents.set(agent.key, agent);
      for (const key of delta.removed) agents.delete(key);
      for (const env of delta.environments) environments.set(env.environmentId, env);
      for (const id of delta.removedEnvironments) environments.delete(id);
    }
    set((state) => ({ version: state.version + 1 }));
  },

  setDetail: (detail) => set((state) => ({ details: new Map(state.details).set(detail.key, detail) })),
  applyDetailDelta: (delta) =>
    set((state) => {
      const current = state.details.get(delta.key);
      if (!current) return {}; // no baseline: the next agent.open answers with the whole detail
      return { details: new Map(state.details).set(delta.key, applyDetailDelta(current, delta)) };
    }),
  setDelivery: (delivery) => set((state) => ({ deliveries: new Map(state.deliveries).set(delivery.commandId, delivery) })),
  pushToast: (toast) => set((state) => ({ toasts: [...state.toasts, toast].slice(-MAX_TOASTS) })),
  dismissToast: (id) => set((state) => ({ toasts: state.toasts.filter((toast) => toast.id !== id) })),
  set: (patch) => set(patch),
  setPairing: (patch) => set((state) => ({ pairing: { ...state.pairing, ...patch } })),
  toggleCollapsed: (id) =>
    set((state) => {
      const collapsed = new Set(state.collapsed);
      if (collapsed.has(id)) collapsed.delete(id);
      else collapsed.add(id);
      return { collapsed };
    }),
  setFilters: (patch) => set((state) => ({ filters: { ...state.filters, ...patch } })),
}));
