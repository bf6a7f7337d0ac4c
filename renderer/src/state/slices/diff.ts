// The diff the window shows (issue 24): which agent and turn (or the whole thread), while it is
// read, and what the service answered. Named actions
// only; diff-view.ts reads diffs from the bridge. The changes and usage settings are the service's
// (selectors.ts reads them from the settings facts).
import type { StateCreator } from "zustand";
import type { AgentDiff, BridgeParams } from "../../../../shared/bridge/contract";
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
  showDiff(diff: DiffShown | null): void;
}

export const createDiffSlice: StateCreator<FleetState, [], [], DiffSlice> = (set) => ({
  diff: null,
  showDiff: (diff) => set({ diff }),
});
