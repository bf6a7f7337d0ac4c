// Snoozing an agent for a while through T3 itself. Where the agent's capabilities say the server
// has T3's thread snooze (its descriptor advertises it), the thread is snoozed in T3 so T3's own UI
// and every other fleet window agree; the server's wake time then comes back in the agent's facts.
// Elsewhere, or when T3 refuses (it does while an approval or a question is pending), the window
// keeps the snooze alone and the answer says so and why (./server-mirror.ts). A snooze "until it
// changes" is the window's alone (T3's is time-based); it comes here only to be recorded (handled-log.ts).
// Waking (the undo) asks T3 to unsnooze where T3 holds the snooze.
import type { BridgeResults } from "../../shared/bridge/contract";
import type { FleetModel } from "../../shared/fleet/model";
import { BridgeError } from "./bridge-error";
import type { Environments } from "./environments";
import { mirrorOnServer } from "./server-mirror";

/** Bound for the snooze command: the window's own snooze does not wait on it for long. */
const SNOOZE_TIMEOUT_MS = 5_000;

type SnoozeResult = BridgeResults["agent.snooze"];
type UnsnoozeResult = BridgeResults["agent.unsnooze"];

export class Snoozes {
  /** Wake times T3 took from this fleet, by agent: an undo may come before T3's row says so. */
  private readonly taken = new Map<string, number>();

  constructor(
    private readonly model: FleetModel,
    private readonly environments: Environments,
    private readonly now: () => number = Date.now,
  ) {}

  async snooze(key: string, until: string | null): Promise<SnoozeResult> {
    const agent = this.model.agent(key);
    if (!agent) throw new BridgeError("not-found", "This agent is no longer on its environment.");
    if (until === null) return { key, onServer: "local", until, note: null };
    if (!(Date.parse(until) > this.now())) throw new BridgeError("invalid", "A snooze ends in the future.");
    const outcome = await mirrorOnServer(this.model, this.environments, {
      key,
      supported: agent.capabilities.snooze,
      command: ({ commandId, threadId }) => ({ type: "snooze", commandId, threadId, until }),
      timeoutMs: SNOOZE_TIMEOUT_MS,
    });
    if (outcome.onServer) this.taken.set(key, Date.parse(until));
    return outcome.onServer ? { key, onServer: "snoozed", until, note: null } : { key, onServer: "local", until, note: outcome.reason };
  }

  async unsnooze(key: string): Promise<UnsnoozeResult> {
    const agent = this.model.agent(key);
    if (!agent) throw new BridgeError("not-found", "This agent is no longer on its environment.");
    // Only a snooze T3 still holds is T3's to end (a passed wake time already stopped counting): one
    // its row shows, or one T3 took from this fleet whose row has not come back yet.
    const now = this.now();
    const heldByT3 = (agent.snoozedUntil != null && Date.parse(agent.snoozedUntil) > now) || (this.taken.get(key) ?? 0) > now;
    this.taken.delete(key);
    if (!heldByT3) return { key, onServer: "local", note: null };
    const outcome = await mirrorOnServer(this.model, this.environments, {
      key,
      supported: agent.capabilities.snooze,
      command: ({ commandId, threadId }) => ({ type: "unsnooze", commandId, threadId }),
      timeoutMs: SNOOZE_TIMEOUT_MS,
    });
    return outcome.onServer ? { key, onServer: "unsnoozed", note: null } : { key, onServer: "local", note: outcome.reason };
  }
}
