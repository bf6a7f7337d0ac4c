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
  /** The user's answer when this machine would show under another paired machine's name: keep both alike. */
  sameNameOk: boolean;
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
  sameNameOk: false,
};

export interface PairingSlice {
  pairing: PairingState;
  openPairing(environmentId: string | null, input: string): void;
  closePairing(): void;
  /** Editing the link or the token invalidates the preview. */
  editPairing(patch: Partial<Pick<PairingState, "input" | "token">>): void;
  nameMachine(label: string): void;
  answerMoved(moved: boolean): void;
  answerSameName(ok: boolean): void;
  pairingBusy(): void;
  pairingPreviewed(preview: PairPreview): void;
  pairingFailed(error: string): void;
}

export const createPairingSlice: StateCreator<FleetState, [], [], PairingSlice> = (set) => ({
  pairing: EMPTY_PAIRING,
  openPairing: (environmentId, input) => set({ pairing: { ...EMPTY_PAIRING, open: true, environmentId, input } }),
  closePairing: () => set({ pairing: EMPTY_PAIRING }),
  editPairing: (patch) => set((state) => ({ pairing: { ...state.pairing, ...patch, preview: null, error: null, moved: false, sameNameOk: false } })),
  nameMachine: (label) => set((state) => ({ pairing: { ...state.pairing, label } })),
  answerMoved: (moved) => set((state) => ({ pairing: { ...state.pairing, moved } })),
  answerSameName: (sameNameOk) => set((state) => ({ pairing: { ...state.pairing, sameNameOk } })),
  pairingBusy: () => set((state) => ({ pairing: { ...state.pairing, busy: true, error: null } })),
  // Named like a machine already paired: the name field starts with a name that tells them apart.
  pairingPreviewed: (preview) =>
    set((state) => ({
      pairing: { ...state.pairing, busy: false, preview, label: preview.sameName && !state.pairing.label ? preview.suggestedLabel : state.pairing.label },
    })),
  pairingFailed: (error) => set((state) => ({ pairing: { ...state.pairing, busy: false, error } })),
});
