// An open agent's transcript as the bridge sends it: a whole detail, or deltas on top of it. The
// service paces what it sends by this page's frames (shared/bridge/paced-feed.ts), but two batches
// may arrive between two frames: every delta waits for the next frame and is applied there with the
// fleet's deltas (bridge-events.ts), in one store change, so the window renders, parses its streaming
// message and lays out once per painted frame, never once per batch (issue 44). A delta applied at
// once would be painted by that same next frame: waiting costs no time, and applying the first at
// once had cost a second render in most frames (bench/transcript: renderer busy 31-37 % of a core
// against 25 %, the fleet's own share p50 10-11 ms either way).
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

/** Held for the next frame (`flushDetailDeltas`). */
export function receiveDetailDelta(delta: AgentDetailDelta): void {
  pendingDetailDeltas.push(delta);
}

/**
 * A whole detail (an event, or the answer to agent.open) holds everything the deltas before it
 * said: those still waiting are dropped, as applying one on top would append its text twice.
 */
export function receiveDetail(detail: AgentDetail): void {
  pendingDetailDeltas = pendingDetailDeltas.filter((delta) => delta.key !== detail.key);
  useFleet.getState().receiveDetail(detail);
}
