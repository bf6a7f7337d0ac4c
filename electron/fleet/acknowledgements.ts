// Acknowledging a failed or stalled agent (issue 10 point 2). The acknowledgement is kept per agent
// and per condition (shared/fleet/acknowledge.ts), persisted in the registry, and applied by the
// fleet model; where the agent's capabilities say the server has T3's thread settlement (its
// descriptor advertises it), the thread is also settled in T3 so T3's own UI agrees (./server-mirror.ts).
import type { FleetModel } from "../../shared/fleet/model";
import type { AgentView } from "../../shared/fleet/types";
import type { BridgeResults } from "../../shared/bridge/contract";
import { BridgeError } from "./bridge-error";
import type { Environments } from "./environments";
import type { Registry } from "./registry";
import { mirrorOnServer } from "./server-mirror";

/** Bound for the settle command: the local acknowledgement does not wait on it for long. */
const SETTLE_TIMEOUT_MS = 5_000;

/** "settled": T3 marked the thread settled too; "local": kept by the fleet only (with why in `note`). */
type AcknowledgeResult = BridgeResults["agent.acknowledge"];
type UnacknowledgeResult = BridgeResults["agent.unacknowledge"];

export class Acknowledgements {
  constructor(
    private readonly model: FleetModel,
    private readonly registry: Registry,
    private readonly environments: Environments,
  ) {
    for (const [key, fingerprint] of registry.acknowledgements) model.setAcknowledgement(key, fingerprint);
  }

  async acknowledge(key: string): Promise<AcknowledgeResult> {
    const fingerprint = this.model.acknowledgeable(key);
    if (!this.model.agent(key)) throw new BridgeError("not-found", "This agent is no longer on its environment.");
    if (fingerprint === null) throw new BridgeError("invalid", "Only a failed or stalled agent can be acknowledged.");
    this.model.setAcknowledgement(key, fingerprint);
    await this.registry.setAcknowledgement(key, fingerprint);
    return { key, ...(await this.settleOnServer(key)) };
  }

  /** The undo of `acknowledge`: the agent needs the user again, in T3 too where T3 settled it. */
  async unacknowledge(key: string): Promise<UnacknowledgeResult> {
    if (!this.model.agent(key)) throw new BridgeError("not-found", "This agent is no longer on its environment.");
    if (!this.registry.acknowledgements.has(key)) throw new BridgeError("invalid", "This agent is not acknowledged: what it needed has changed since.");
    this.model.setAcknowledgement(key, null);
    await this.registry.setAcknowledgement(key, null);
    const outcome = await mirrorOnServer(this.model, this.environments, {
      key,
      supported: this.model.agent(key)?.capabilities.settle === true,
      command: ({ commandId, threadId }) => ({ type: "unsettle", commandId, threadId }),
      timeoutMs: SETTLE_TIMEOUT_MS,
    });
    if (outcome.onServer) return { key, onServer: "unsettled", note: null };
    return { key, onServer: "local", note: outcome.reason && `T3 still shows it settled (${outcome.reason}).` };
  }

  /** An agent's view changed: an acknowledgement whose condition is gone is forgotten. */
  agentChanged(agent: AgentView): void {
    if (agent.acknowledged || !this.registry.acknowledgements.has(agent.key)) return;
    if (agent.status === "unknown") return; // not confirmed either way while its machine is away
    this.model.setAcknowledgement(agent.key, null);
    void this.registry.setAcknowledgement(agent.key, null).catch(() => {});
  }

  removed(key: string): void {
    this.model.setAcknowledgement(key, null);
    void this.registry.setAcknowledgement(key, null).catch(() => {});
  }

  private async settleOnServer(key: string): Promise<Omit<AcknowledgeResult, "key">> {
    const outcome = await mirrorOnServer(this.model, this.environments, {
      key,
      supported: this.model.agent(key)?.capabilities.settle === true,
      command: ({ commandId, threadId }) => ({ type: "settle", commandId, threadId }),
      timeoutMs: SETTLE_TIMEOUT_MS,
    });
    if (outcome.onServer) return { onServer: "settled", note: null };
    return { onServer: "local", note: outcome.reason && `Kept by T3 Fleet only (${outcome.reason}).` };
  }
}
