// Marking an agent's changes reviewed (issue 40): the agent that finished with changes leaves
// "need you" (shared/fleet/needs.ts awaitsReview) until a later turn changes files. The fleet model
// holds which turn was reviewed, so every window, the tray and `n` agree; the undo puts back the turn
// reviewed before. Persisted in the registry as acknowledgements and snoozes are (./registry.ts,
// bounded there), so a reviewed turn stays reviewed across a restart of the service, and so does an undo.
import type { BridgeResults } from "../../shared/bridge/contract";
import type { FleetModel } from "../../shared/fleet/model";
import { BridgeError } from "./bridge-error";
import type { Registry } from "./registry";

export class Reviews {
  constructor(
    private readonly model: FleetModel,
    private readonly registry: Registry,
  ) {
    for (const [key, turnCount] of registry.reviews) model.setReviewed(key, turnCount);
  }

  async review(key: string): Promise<BridgeResults["agent.review"]> {
    const agent = this.model.agent(key);
    if (!agent) throw new BridgeError("not-found", "This agent is no longer on its environment.");
    const latest = agent.changes?.at(-1);
    if (!agent.review || !latest) throw new BridgeError("invalid", "This agent has no changes waiting for review.");
    const previous = this.model.reviewedTurn(key);
    // Saved first: a mark that could not be saved changes nothing, and the user is told why.
    await this.registry.setReviewed(key, latest.turnCount);
    await this.stillHere(key);
    this.model.setReviewed(key, latest.turnCount);
    return { key, turnCount: latest.turnCount, previous };
  }

  /** The undo of `review`: the turn marked reviewed goes back to what it was (null: none). */
  async unreview(key: string, turnCount: number | null): Promise<BridgeResults["agent.unreview"]> {
    if (!this.model.agent(key)) throw new BridgeError("not-found", "This agent is no longer on its environment.");
    await this.registry.setReviewed(key, turnCount);
    await this.stillHere(key);
    this.model.setReviewed(key, turnCount);
    return { key };
  }

  /**
   * The agent may have left while its mark was saved (`removed` ran before the mark was made): the
   * mark saved for it goes too, or it would be held for an agent that is gone (issue 43).
   */
  private async stillHere(key: string): Promise<void> {
    if (this.model.agent(key)) return;
    await this.registry.setReviewed(key, null);
    throw new BridgeError("not-found", "This agent is no longer on its environment.");
  }

  /** The agent left the fleet (its thread was deleted, its row expired): its mark goes with it. */
  removed(key: string): void {
    if (this.model.reviewedTurn(key) === null && !this.registry.reviews.has(key)) return;
    this.model.setReviewed(key, null);
    void this.registry.setReviewed(key, null).catch(() => {});
  }
}
