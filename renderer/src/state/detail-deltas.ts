// An open agent's transcript as the bridge sends it: a whole detail, or deltas on top of it. The
// service paces what it sends by this page's frames (shared/bridge/paced-feed.ts), but two batches
// may arrive between two frames: the first delta since the last frame is applied at once, so it
// shows in the next frame with nothing added to its time, and those after it wait for that frame and
// are applied there with the fleet's deltas (bridge-events.ts), in one store change: the window
// renders, parses its streaming message and lays out at most twice per painted frame, never once per
// batch (issue 44). Applying even the first in the frame measured the same in bench/transcript
// (p50 10-11 ms from T3's frame to the pixel either way, and no clear difference in CPU).
// A hidden window gets no frames, but then it acknowledges no batch either, so at most the feed's
// window of batches waits.
import type { AgentDetail, AgentDetailDelta } from "../../../shared/bridge/contract";
import { useFleet } from "./store";

let pendingDetailDeltas: AgentDetailDelta[] = [];

/** Applies the deltas that arrived since the last frame, in order, as one change of the store. */
export function flushDetailDeltas(): void {
  if (pendingDetailDeltas.length === 0) return;
  const deltas = pendingDetailDeltas;
  pendingDetailDeltas = [];
  useFleet.getState().applyDetailDeltas(deltas);
}

/** Applied at once unless `frameDue` (a frame callback is requested): then held for it (`flushDetailDeltas`). */
export function receiveDetailDelta(delta: AgentDetailDelta, frameDue: boolean): void {
  if (frameDue) pendingDetailDeltas.push(delta);
  else useFleet.getState().applyDetailDeltas([delta]);
}

/**
 * A whole detail (an event, or the answer to agent.open) holds everything the deltas before it
 * said: those still waiting are dropped, as applying one on top would append its text twice.
 */
export function receiveDetail(detail: AgentDetail): void {
  pendingDetailDeltas = pendingDetailDeltas.filter((delta) => delta.key !== detail.key);
  useFleet.getState().receiveDetail(detail);
}
