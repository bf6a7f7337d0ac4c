// The window's own state: selection, filters, grouping, dialogs, notices, and where a command
// failed. Named actions only.
import type { StateCreator } from "zustand";
import type { NotificationIntent } from "../../../../shared/fleet/notifications";
import type { WindowSnooze } from "../../../../shared/fleet/snooze";
import type { FleetState } from "../store";

export interface Filters {
  needsMe: boolean;
  failed: boolean;
  running: boolean;
  offline: boolean;
  environmentId: string | null;
  provider: string | null;
}

export const NO_FILTERS: Filters = { needsMe: false, failed: false, running: false, offline: false, environmentId: null, provider: null };

export type Grouping = "machine" | "project";

/** The left pane: the inbox (only what needs the user) or the whole fleet tree; null follows the fleet (inbox while anything needs you). */
export type PaneView = "inbox" | "fleet";

/**
 * A snooze this window just made, shown at once until the service's view of the agent carries it
 * (`fleetSnooze`, or T3's `snoozedUntil`); the service keeps it after that (electron/fleet/snoozes.ts).
 */
export type Snooze = WindowSnooze;

/** Idle agents quiet for longer than this are folded under "N older" (changeable in Settings). */
export const DEFAULT_OLDER_THAN_MS = 24 * 3_600_000;

export interface Notice {
  /** The condition (shared/fleet/notifications.ts noticeCondition): one notice per condition. */
  condition: string;
  intent: NotificationIntent;
  critical: boolean;
  /** Times the service said more about this condition (shown as "×N"). */
  updates: number;
}

export interface UiSlice {
  selectedKey: string | null;
  openKey: string | null;
  filters: Filters;
  search: string;
  collapsed: Set<string>;
  grouping: Grouping;
  /** The user's choice of pane for this window; null until they choose. */
  view: PaneView | null;
  snoozed: Map<string, Snooze>;
  olderThanMs: number;
  /** Groups whose "N older" fold is open. */
  olderShown: Set<string>;
  settingsOpen: boolean;
  paletteOpen: boolean;
  notices: Map<string, Notice>;
  /** The last failure of a command, by the place the user acted (`env:<id>`, `agent:<key>`, …). */
  failures: Map<string, string>;
  /** Bridge requests not yet answered. */
  inFlight: number;
  /** What the user is writing to each agent, by agent key: a draft stays with its agent, never follows to another. */
  drafts: Map<string, string>;
  /** The window's clock for what runs out (snoozes) and folds (old idle agents): moved by the minute (clock.ts startFoldClock). */
  clock: number;

  select(key: string | null): void;
  showAgent(key: string | null): void;
  setSearch(search: string): void;
  setFilters(patch: Partial<Filters>): void;
  clearFilters(): void;
  toggleCollapsed(id: string): void;
  setGrouping(grouping: Grouping): void;
  setView(view: PaneView | null): void;
  snooze(key: string, snooze: Snooze | null): void;
  setOlderThan(ms: number): void;
  toggleOlder(groupId: string): void;
  showSettings(open: boolean): void;
  showPalette(open: boolean): void;
  upsertNotice(notice: Omit<Notice, "updates">): void;
  withdrawNotices(conditions: string[]): void;
  commandFailed(place: string, message: string): void;
  clearFailure(place: string): void;
  requestStarted(): void;
  requestSettled(): void;
  /** Keeps (or, empty, forgets) the draft for one agent. */
  setDraft(key: string, text: string): void;
  tickClock(now: number): void;
}

const toggled = (set: Set<string>, id: string) => {
  const next = new Set(set);
  if (next.has(id)) next.delete(id);
  else next.add(id);
  return next;
};

export const createUiSlice: StateCreator<FleetState, [], [], UiSlice> = (set) => ({
  selectedKey: null,
  openKey: null,
  filters: NO_FILTERS,
  search: "",
  collapsed: new Set(),
  grouping: "machine",
  view: null,
  snoozed: new Map(),
  olderThanMs: DEFAULT_OLDER_THAN_MS,
  olderShown: new Set(),
  settingsOpen: false,
  paletteOpen: false,
  notices: new Map(),
  failures: new Map(),
  inFlight: 0,
  drafts: new Map(),
  clock: Date.now(),

  select: (selectedKey) => set({ selectedKey }),
  showAgent: (openKey) => set((state) => ({ openKey, selectedKey: openKey ?? state.selectedKey })),
  setSearch: (search) => set({ search }),
  setFilters: (patch) => set((state) => ({ filters: { ...state.filters, ...patch } })),
  clearFilters: () => set({ filters: NO_FILTERS, search: "" }),
  toggleCollapsed: (id) => set((state) => ({ collapsed: toggled(state.collapsed, id) })),
  setGrouping: (grouping) => set({ grouping }),
  setView: (view) => set({ view }),
  snooze: (key, snooze) =>
    set((state) => {
      const snoozed = new Map(state.snoozed);
      if (snooze) snoozed.set(key, snooze);
      else snoozed.delete(key);
      return { snoozed };
    }),
  setOlderThan: (olderThanMs) => set({ olderThanMs }),
  toggleOlder: (groupId) => set((state) => ({ olderShown: toggled(state.olderShown, groupId) })),
  showSettings: (settingsOpen) => set({ settingsOpen }),
  showPalette: (paletteOpen) => set({ paletteOpen }),
  upsertNotice: (notice) =>
    set((state) => {
      const previous = state.notices.get(notice.condition);
      const notices = new Map(state.notices);
      notices.delete(notice.condition); // re-inserted last: the newest notice is at the end
      notices.set(notice.condition, { ...notice, updates: (previous?.updates ?? 0) + 1 });
      return { notices };
    }),
  withdrawNotices: (conditions) =>
    set((state) => {
      if (!conditions.some((condition) => state.notices.has(condition))) return {};
      const notices = new Map(state.notices);
      for (const condition of conditions) notices.delete(condition);
      return { notices };
    }),
  commandFailed: (place, message) => set((state) => ({ failures: new Map(state.failures).set(place, message) })),
  clearFailure: (place) =>
    set((state) => {
      if (!state.failures.has(place)) return {};
      const failures = new Map(state.failures);
      failures.delete(place);
      return { failures };
    }),
  requestStarted: () => set((state) => ({ inFlight: state.inFlight + 1 })),
  requestSettled: () => set((state) => ({ inFlight: state.inFlight - 1 })),
  setDraft: (key, text) =>
    set((state) => {
      if ((state.drafts.get(key) ?? "") === text) return {};
      const drafts = new Map(state.drafts);
      if (text === "") drafts.delete(key);
      else drafts.set(key, text);
      return { drafts };
    }),
  tickClock: (clock) => set({ clock }),
});
