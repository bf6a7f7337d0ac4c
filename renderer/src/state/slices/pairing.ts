// The pairing dialog's state: what the user typed, the server's preview, busy and the error.
import type { StateCreator } from "zustand";
import type { PairPreview } from "../../../../shared/bridge/contract";
import type { FleetState } from "../store";

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
  /** The user's answer when the server claims a machine paired at another address: it moved there. */
  moved: boolean;
}

export const EMPTY_PAIRING: PairingState = {
  open: false,
  input: "",
  token: "",
  label: "",
  preview: null,
  busy: false,
  error: null,
  environmentId: null,
  moved: false,
};

export interface PairingSlice {
  pairing: PairingState;
  openPairing(environmentId: string | null, input: string): void;
  closePairing(): void;
  /** Editing the link or the token invalidates the preview. */
  editPairing(patch: Partial<Pick<PairingState, "input" | "token">>): void;
  nameMachine(label: string): void;
  answerMoved(moved: boolean): void;
  pairingBusy(): void;
  pairingPreviewed(preview: PairPreview): void;
  pairingFailed(error: string): void;
}

export const createPairingSlice: StateCreator<FleetState, [], [], PairingSlice> = (set) => ({
  pairing: EMPTY_PAIRING,
  openPairing: (environmentId, input) => set({ pairing: { ...EMPTY_PAIRING, open: true, environmentId, input } }),
  closePairing: () => set({ pairing: EMPTY_PAIRING }),
  editPairing: (patch) => set((state) => ({ pairing: { ...state.pairing, ...patch, preview: null, error: null, moved: false } })),
  nameMachine: (label) => set((state) => ({ pairing: { ...state.pairing, label } })),
  answerMoved: (moved) => set((state) => ({ pairing: { ...state.pairing, moved } })),
  pairingBusy: () => set((state) => ({ pairing: { ...state.pairing, busy: true, error: null } })),
  pairingPreviewed: (preview) => set((state) => ({ pairing: { ...state.pairing, busy: false, preview } })),
  pairingFailed: (error) => set((state) => ({ pairing: { ...state.pairing, busy: false, error } })),
});
