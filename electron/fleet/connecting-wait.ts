// How long a command waits for an environment that is still connecting (T3 Fleet just started, or a
// wake re-check) before it is judged: its intent needs the environment's confirmed state (deliveries.ts).
import type { ConnectionPhase } from "../../shared/fleet/types";
import type { ConnectionSupervisor } from "./supervisor";

export function isConnecting(supervisor: ConnectionSupervisor | undefined): boolean {
  return supervisor?.phase.phase === "connecting";
}

/**
 * Resolves once an environment that was connecting is online (or failed in a way no retry mends),
 * or after `waitMs`; at once when it is not connecting.
 */
export function connectingSettled(supervisor: ConnectionSupervisor | undefined, waitMs: number): Promise<void> {
  if (!supervisor || !isConnecting(supervisor)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      supervisor.off("phase", changed);
      resolve();
    };
    // A failed first attempt is retried by the supervisor: only online, or a failure no retry mends, ends the wait.
    // The model takes the phase from the same event, registered first (environments.ts): it is current here.
    const changed = (phase: ConnectionPhase) => (phase.phase === "online" || phase.phase === "unauthorized" || phase.phase === "incompatible") && done();
    const timer = setTimeout(done, waitMs);
    supervisor.on("phase", changed);
  });
}
