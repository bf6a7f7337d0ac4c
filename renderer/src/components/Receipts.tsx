// The agent's delivery receipts: each message and command the user sent and what became of it,
// with what can still be done (cancel a queued message, send or discard a held one, check again, or
// send again once a message T3 Fleet was sending when it restarted, which T3 does not show).
import type { Delivery } from "../../../shared/fleet/delivery";
import { deliveryOutcomeWords, deliveryStateWords } from "../../../shared/fleet/words";
import { commands } from "../state/commands";
import { DELIVERY_WHAT, MESSAGE_WORDS, receiptWords } from "../state/format";
import { useFleet } from "../state/store";
import { PlaceError } from "./common";

export function Deliveries({ agentKey }: { agentKey: string }) {
  const deliveries = useFleet((s) => s.deliveries);
  const all = [...deliveries.values()].filter((delivery) => delivery.agentKey === agentKey);
  // Held messages always show (they wait for the user); of the rest, the latest few.
  const held = all.filter((delivery) => delivery.state === "held");
  const mine = [...held, ...all.filter((delivery) => delivery.state !== "held").slice(-6)];
  if (mine.length === 0) return null;
  return (
    <ul className="deliveries" data-testid="deliveries">
      {mine.map((delivery) => (
        <DeliveryLine key={delivery.commandId} delivery={delivery} />
      ))}
    </ul>
  );
}

function DeliveryLine({ delivery }: { delivery: Delivery }) {
  const what = delivery.kind === "message" ? `“${delivery.text ?? ""}”` : DELIVERY_WHAT[delivery.kind];
  const outcome = deliveryOutcomeWords(delivery);
  const observed = outcome ? ` · ${outcome}` : "";
  return (
    <li className={`delivery delivery-${delivery.state}`} data-testid="delivery" data-state={delivery.state} data-outcome={delivery.observed?.outcome ?? ""}>
      <span className="delivery-what clipped" title={what}>
        {what}
      </span>{" "}
      <span className="delivery-state">{delivery.kind === "message" ? deliveryStateWords(delivery, MESSAGE_WORDS) : receiptWords(delivery)}</span>
      {observed}
      {delivery.reason ? <span className="delivery-reason"> · {delivery.reason}</span> : null}
      {delivery.observed?.outcome === "queued" && delivery.state !== "answered" ? (
        <button type="button" data-testid="cancel-queued" onClick={() => void commands.cancelQueued(delivery.commandId)}>
          Cancel
        </button>
      ) : null}
      {delivery.state === "held" ? (
        <>
          <button type="button" data-testid="release-held" onClick={() => void commands.releaseHeld(delivery.commandId)}>
            Send now
          </button>
          <button type="button" data-testid="discard-held" onClick={() => void commands.discardHeld(delivery.commandId)}>
            Discard
          </button>
        </>
      ) : null}
      {delivery.state === "uncertain" && delivery.sendAgain === true ? (
        // After a restart, a message T3's thread does not show: sent again once, with the same commandId.
        <button type="button" data-testid="send-again" onClick={() => void commands.recheck(delivery.commandId)}>
          Send again
        </button>
      ) : delivery.state === "uncertain" ? (
        <button type="button" onClick={() => void commands.recheck(delivery.commandId)}>
          Check again
        </button>
      ) : null}
      <PlaceError place={`delivery:${delivery.commandId}`} />
    </li>
  );
}
