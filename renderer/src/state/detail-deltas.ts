// An open agent's transcript as the bridge sends it: a whole detail, or deltas on top of it.
// A streaming turn sends deltas faster than frames on a busy machine: the first one since the last
// frame is applied at once (no added latency), the rest of that frame together just before it
// paints (bridge-events.ts), so the transcript renders (and parses its streaming message) about once per frame.
import type { AgentDetail, AgentDetailDelta } from "../../../shared/bridge/contract";
import { useFleet } from "./store";

let pendingDetailDeltas: AgentDetailDelta[] = [];
/** A hidden window gets no frames: a longer queue is applied without waiting for one. */
const MAX_QUEUED_DETAIL_DELTAS = 100;

export function flushDetailDeltas(): void {
  const deltas = pendingDetailDeltas;
  pendingDetailDeltas = [];
  // One task: React renders once for all of them.
  for (const delta of deltas) useFleet.getState().applyDetailDelta(delta);
}

/** `frameDue`: a frame is already requested, so this delta can wait for it. */
export function receiveDetailDelta(delta: AgentDetailDelta, frameDue: boolean): void {
  if (!frameDue) useFleet.getState().applyDetailDelta(delta);
  else if (pendingDetailDeltas.push(delta) >= MAX_QUEUED_DETAIL_DELTAS) flushDetailDeltas();
}

/** A whole detail replaces what the deltas before it built: those are applied first, in order. */
export function receiveDetail(detail: AgentDetail): void {
  flushDetailDeltas();
  useFleet.getState().receiveDetail(detail);
}
