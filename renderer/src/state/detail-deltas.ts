// An open agent's transcript as the bridge sends it: a whole detail, or deltas on top of it. The
// service paces what it sends by this page's frames (shared/bridge/paced-feed.ts): a batch comes at
// most once per painted frame and carries one delta per agent, so each is applied at once and the
// transcript renders (and parses its streaming message) about once per frame.
import type { AgentDetail, AgentDetailDelta } from "../../../shared/bridge/contract";
import { useFleet } from "./store";

export function receiveDetailDelta(delta: AgentDetailDelta): void {
  useFleet.getState().applyDetailDelta(delta);
}

export function receiveDetail(detail: AgentDetail): void {
  useFleet.getState().receiveDetail(detail);
}
