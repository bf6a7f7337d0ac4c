// What the user's actions left on screen (issue 25 point 2): the confirmation of the last one (with
// its undo where T3 allows it), a destructive command waiting for its confirm, the
// "handled today" list as the service keeps it, and which list is open. Named actions only.
import type { StateCreator } from "zustand";
import type { ApprovalDecision } from "../../../../shared/fleet/facts";
import { HANDLED_KEPT, type HandledEntry } from "../../../../shared/fleet/handled";
import type { FleetState } from "../store";

/** How an action is taken back: only what T3 (or the window) can reverse. */
export type Undo = { kind: "unsnooze" | "unacknowledge"; key: string } | { kind: "unreview"; key: string; turnCount: number | null };

/** The brief confirmation of the last action: "Approved “npm test” for worker-2 on build-box-2". */
export interface Confirmation {
  /** Each confirmation is new, even with the same words (announced once, timed on its own). */
  id: number;
  text: string;
  undo: Undo | null;
}

/**
 * An action asked once more before it is sent: one T3 cannot take back once it has it (a stop, a
 * decision that stops work), or an interrupt with messages queued behind the turn, which would
 * start next (components/InterruptAction.tsx). Every such question lives here, never in a view.
 */
export type PendingConfirm =
  | { action: "stop"; key: string }
  | { action: "decide"; key: string; requestId: string; decision: ApprovalDecision }
  | { action: "interrupt"; key: string }
  /** Removing a paired machine deletes its token from the keychain (components/FleetTree.tsx MachineMenu). */
  | { action: "remove-machine"; environmentId: string };

export type ActionList = "handled" | "snoozed";

export interface ActionsSlice {
  confirmation: Confirmation | null;
  confirming: PendingConfirm | null;
  /** Today's handled list, newest first; null until the window first asked the service for it. */
  handled: HandledEntry[] | null;
  /** Entries of today the list no longer keeps (it keeps HANDLED_KEPT, the newest). */
  handledLetGo: number;
  listOpen: ActionList | null;

  confirmDone(text: string, undo: Undo | null): void;
  clearConfirmation(id?: number): void;
  askConfirm(pending: PendingConfirm | null): void;
  setHandled(entries: HandledEntry[] | null, letGo?: number): void;
  addHandled(entry: HandledEntry): void;
  showList(list: ActionList | null): void;
}

let nextConfirmation = 0;

export const createActionsSlice: StateCreator<FleetState, [], [], ActionsSlice> = (set) => ({
  confirmation: null,
  confirming: null,
  handled: null,
  handledLetGo: 0,
  listOpen: null,

  confirmDone: (text, undo) => set({ confirmation: { id: ++nextConfirmation, text, undo } }),
  clearConfirmation: (id) => set((state) => (id === undefined || state.confirmation?.id === id ? { confirmation: null } : {})),
  askConfirm: (confirming) => set({ confirming }),
  setHandled: (handled, letGo = 0) => set({ handled, handledLetGo: letGo }),
  // Only once the list was read: a later read brings everything anyway. Kept as the service keeps it.
  addHandled: (entry) =>
    set((state) => {
      if (!state.handled || state.handled.some((known) => known.id === entry.id)) return {};
      const handled = [entry, ...state.handled];
      const over = Math.max(0, handled.length - HANDLED_KEPT);
      return { handled: over > 0 ? handled.slice(0, HANDLED_KEPT) : handled, handledLetGo: state.handledLetGo + over };
    }),
  showList: (listOpen) => set({ listOpen }),
});
