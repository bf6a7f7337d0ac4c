// State the fleet keeps about an agent that T3 can hold too (a settled thread, a snooze): where the
// agent's capabilities say its server has it, the fleet asks T3 to do the same, so T3's own UI
// agrees; else it keeps the state alone and says why, in the same words for every such state.
import { randomUUID } from "node:crypto";
import { describeError } from "../../shared/bridge/redact";
import type { FleetModel } from "../../shared/fleet/model";
import { splitKey } from "../../shared/fleet/model";
import { T3Error } from "../../shared/t3/errors";
import type { Environments } from "./environments";
import type { AgentCommand } from "./t3/adapter";

/** `reason` says why T3 does not hold it too; null when the server simply has no such feature. */
export type MirrorOutcome = { onServer: true } | { onServer: false; reason: string | null };

export interface MirrorRequest {
  key: string;
  /** The agent's capability for this state (`capabilities.settle`, `capabilities.snooze`). */
  supported: boolean;
  command: (ids: { commandId: string; threadId: string }) => AgentCommand;
  /** The fleet's own state does not wait on T3 for longer than this. */
  timeoutMs: number;
}

export async function mirrorOnServer(model: FleetModel, environments: Environments, request: MirrorRequest): Promise<MirrorOutcome> {
  if (!request.supported) return { onServer: false, reason: null };
  const [environmentId, threadId] = splitKey(request.key);
  const connection = environments.get(environmentId)?.supervisor.activeConnection;
  if (!connection) return { onServer: false, reason: "the machine is not online" };
  if (model.environment(environmentId)?.readOnly) return { onServer: false, reason: "the pairing is read-only" };
  try {
    await connection.execute(request.command({ commandId: randomUUID(), threadId }), request.timeoutMs);
    return { onServer: true };
  } catch (error) {
    // Refused is T3's answer; anything else (the connection went, no answer in time) leaves it unknown.
    const refused = error instanceof T3Error && error.kind === "rejected";
    return { onServer: false, reason: `${refused ? "T3 refused it" : "T3 did not confirm it"}: ${describeError(error)}` };
  }
}
