// Marking an agent's changes reviewed (issue 40): the agent that finished with changes leaves
// "need you" (shared/fleet/needs.ts awaitsReview) until a later turn changes files. The fleet model
// holds which turn was reviewed, so every window, the tray and `n` agree; the undo puts back the turn
// reviewed before. Kept for the service's run, not on disk.
import type { BridgeResults } from "../../shared/bridge/contract";
import type { FleetModel } from "../../shared/fleet/model";
import { BridgeError } from "./bridge-error";

export function changeReviews(model: FleetModel) {
  return {
    review(key: string): Promise<BridgeResults["agent.review"]> {
      const agent = model.agent(key);
      if (!agent) throw new BridgeError("not-found", "This agent is no longer on its environment.");
      const latest = agent.changes?.at(-1);
      if (!agent.review || !latest) throw new BridgeError("invalid", "This agent has no changes waiting for review.");
      const previous = model.reviewedTurn(key);
      model.setReviewed(key, latest.turnCount);
      return Promise.resolve({ key, turnCount: latest.turnCount, previous });
    },
    unreview(key: string, turnCount: number | null): Promise<BridgeResults["agent.unreview"]> {
      if (!model.agent(key)) throw new BridgeError("not-found", "This agent is no longer on its environment.");
      model.setReviewed(key, turnCount);
      return Promise.resolve({ key });
    },
  };
}
