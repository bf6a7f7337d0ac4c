// The diff the window shows (issue 24): which agent and turn (or the whole thread), while it is
// read, and what the service answered; which turns' changes the user looked at; and this window's
// changes and usage settings. Named actions only; diff-view.ts reads diffs from the bridge.
import type { StateCreator } from "zustand";
import type { AgentDiff, BridgeParams } from "../../../../shared/bridge/contract";
import { DEFAULT_CONTEXT_WARNING_PERCENT } from "../../../../shared/fleet/changes-usage";
import type { FleetState } from "../store";

export type DiffRequest = BridgeParams<"agent.diff">["scope"];

export interface DiffShown {
  key: string;
  scope: DiffRequest;
  /** Null while it is read. */
  result: AgentDiff | null;
  error: string | null;
}

export interface DiffSlice {
  diff: DiffShown | null;
  /** The latest turn (by its count) whose changes the user looked at, per agent. */
  changesSeen: Map<string, number>;
  /** Context fill (percent) at which an agent that will not compact is flagged (Settings). */
  contextWarningPercent: number;
  /** The inbox also lists agents whose turn ended with changes the user has not looked at (Settings; off by default). */
  finishedWithChangesInInbox: boolean;
  showDiff(diff: DiffShown | null): void;
  markChangesSeen(key: string, turnCount: number): void;
  setContextWarningPercent(percent: number): void;
  setFinishedWithChangesInInbox(on: boolean): void;
}

export const createDiffSlice: StateCreator<FleetState, [], [], DiffSlice> = (set) => ({
  diff: null,
  changesSeen: new Map(),
  contextWarningPercent: DEFAULT_CONTEXT_WARNING_PERCENT,
  finishedWithChangesInInbox: false,
  showDiff: (diff) => set({ diff }),
  markChangesSeen: (key, turnCount) =>
    set((state) => ((state.changesSeen.get(key) ?? 0) >= turnCount ? {} : { changesSeen: new Map(state.changesSeen).set(key, turnCount) })),
  setContextWarningPercent: (contextWarningPercent) => set({ contextWarningPercent: Math.min(100, Math.max(1, Math.round(contextWarningPercent))) }),
  setFinishedWithChangesInInbox: (finishedWithChangesInInbox) => set({ finishedWithChangesInInbox }),
});
