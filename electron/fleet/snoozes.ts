// Snoozing an agent for a while through T3 itself. Where the agent's capabilities say the server
// has T3's thread snooze (its descriptor advertises it), the thread is snoozed in T3 so T3's own UI
// and every other fleet window agree; the server's wake time then comes back in the agent's facts.
// Elsewhere, or when T3 refuses (it does while an approval or a question is pending), the window
// keeps the snooze alone and the answer says so and why.
import { randomUUID } from "node:crypto";
import type { BridgeResults } from "../../shared/bridge/contract";
import { describeError } from "../../shared/bridge/redact";
import { T3Error } from "../../shared/t3/errors";
import type { FleetModel } from "../../shared/fleet/model";
import { splitKey } from "../../shared/fleet/model";
import { BridgeError } from "./bridge-error";
import type { Environments } from "./environments";

/** Bound for the snooze command: the window's own snooze does not wait on it for long. */
const SNOOZE_TIMEOUT_MS = 5_000;

type SnoozeResult = BridgeResults["agent.snooze"];

export class Snoozes {
  constructor(
    private readonly model: FleetModel,
    private readonly environments: Environments,
    private readonly now: () => number = Date.now,
  ) {}

  async snooze(key: string, until: string): Promise<SnoozeResult> {
    const agent = this.model.agent(key);
    if (!agent) throw new BridgeError("not-found", "This agent is no longer on its environment.");
    if (!(Date.parse(until) > this.now())) throw new BridgeError("invalid", "A snooze ends in the future.");
    const local = (note: string | null): SnoozeResult => ({ key, onServer: "local", until, note });
    if (!agent.capabilities.snooze) return local(null);
    const [environmentId, threadId] = splitKey(key);
    const connection = this.environments.get(environmentId)?.supervisor.activeConnection;
    if (!connection) return local("the machine is not online");
    if (this.model.environment(environmentId)?.readOnly) return local("the pairing is read-only");
    try {
      await connection.execute({ type: "snooze", commandId: randomUUID(), threadId, until }, SNOOZE_TIMEOUT_MS);
      return { key, onServer: "snoozed", until, note: null };
    } catch (error) {
      // Refused is T3's answer; anything else (the connection went, no answer in time) leaves it unknown.
      const refused = error instanceof T3Error && error.kind === "rejected";
      return local(`${refused ? "T3 refused it" : "T3 did not confirm it"}: ${describeError(error)}`);
    }
  }
}
