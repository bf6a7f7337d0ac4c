// The renderer's store in slices: facts from the fleet service, the window's own UI state,
// the pairing dialog, what the user's actions left on screen, the diff, and the messages whose answer was lost. Each slice changes only through its named actions; views are derived
// in selectors.ts (with the rules in shared/fleet/views.ts) and read through fleet-facts.ts; side effects
// start in bridge-events.ts, and every registry command runs through dispatch.ts (docs/architecture.md, "The window").
import { create } from "zustand";
import { type ActionsSlice, createActionsSlice } from "./slices/actions";
import { createDiffSlice, type DiffSlice } from "./slices/diff";
import { createFactsSlice, type FactsSlice } from "./slices/facts";
import { createLostSendsSlice, type LostSendsSlice } from "./slices/lost-sends";
import { createPairingSlice, type PairingSlice } from "./slices/pairing";
import { createUiSlice, type UiSlice } from "./slices/ui";

export type FleetState = FactsSlice & UiSlice & PairingSlice & ActionsSlice & DiffSlice & LostSendsSlice;

export const useFleet = create<FleetState>()((...args) => ({
  ...createFactsSlice(...args),
  ...createUiSlice(...args),
  ...createPairingSlice(...args),
  ...createActionsSlice(...args),
  ...createDiffSlice(...args),
  ...createLostSendsSlice(...args),
}));

export { EMPTY_PAIRING, type PairingState } from "./slices/pairing";
export { DEFAULT_OLDER_THAN_MS, NO_FILTERS, type Filters, type Grouping, type Notice } from "./slices/ui";
