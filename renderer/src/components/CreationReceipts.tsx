// The receipts of agents started from this window (issue 42): created → started → replied, or where
// it stopped and why in T3's words, with "Try again" where T3 does not have the thread (it re-sends
// the same request, so the thread is never made twice). The new agent opens in the agent view as
// soon as the fleet lists it (new-agent.ts keepFollowingCreations).
import { creationSettled, creationWords } from "../../../shared/fleet/creation";
import { dispatch } from "../state/dispatch";
import { useNewAgent } from "../state/new-agent";
import { useFleet } from "../state/store";
import { PlaceError } from "./common";

export function CreationReceipts() {
  const creations = useNewAgent((s) => s.creations);
  const environments = useFleet((s) => s.environments);
  return (
    <section className={`creations ${creations.length === 0 ? "creations-empty" : ""}`} aria-live="polite" aria-label="New agents" data-testid="creations">
      {creations.map((creation) => (
        <div key={creation.creationId} className={`creation creation-${creation.state}`} data-testid="creation" data-state={creation.state}>
          <button type="button" className="creation-body" onClick={() => dispatch("agent.open", "button", { key: creation.agentKey })}>
            <strong>
              {creation.title} on {environments.get(creation.environmentId)?.label ?? creation.environmentId}
            </strong>
            <span data-testid="creation-words"> · {creationWords(creation)}</span>
          </button>
          {creation.retry ? (
            <button type="button" data-testid="creation-retry" onClick={() => dispatch("creation.retry", "button", { creationId: creation.creationId })}>
              Try again
            </button>
          ) : null}
          {creationSettled(creation) ? (
            <button
              type="button"
              className="notice-dismiss"
              aria-label="Dismiss"
              onClick={() => dispatch("creation.dismiss", "button", { creationId: creation.creationId })}
            >
              ×
            </button>
          ) : null}
          <PlaceError place={`creation:${creation.creationId}`} />
        </div>
      ))}
    </section>
  );
}
