// The agent's delivery receipts: one line per message and per command, showing what became of it now
// and what can still be done (cancel a queued message, send or discard a held one, check again, or send
// again once a message T3 Fleet was sending when it restarted, which T3's thread does not show).
// The lines and their words: shared/fleet/receipts.ts.
import { useMemo } from "react";
import { agentReceipts, type Receipt, type ReceiptActionKind } from "../../../shared/fleet/receipts";
import { dispatch } from "../state/dispatch";
import { useFleet } from "../state/store";
import { PlaceError } from "./common";

export function Deliveries({ agentKey }: { agentKey: string }) {
  const deliveries = useFleet((s) => s.deliveries);
  const receipts = useMemo(() => agentReceipts(deliveries.values(), agentKey), [deliveries, agentKey]);
  if (receipts.length === 0) return null;
  return (
    <ul className="deliveries" data-testid="deliveries" aria-label="What became of what you sent">
      {receipts.map((receipt) => (
        <DeliveryLine key={receipt.delivery.commandId} receipt={receipt} />
      ))}
    </ul>
  );
}

const ACTIONS: Record<ReceiptActionKind, { label: string; testId: string; run: (commandId: string) => unknown }> = {
  "cancel-queued": { label: "Cancel", testId: "cancel-queued", run: (commandId) => dispatch("delivery.cancel-queued", "button", { commandId }) },
  "send-now": { label: "Send now", testId: "release-held", run: (commandId) => dispatch("delivery.release", "button", { commandId }) },
  discard: { label: "Discard", testId: "discard-held", run: (commandId) => dispatch("delivery.discard", "button", { commandId }) },
  "check-again": { label: "Check again", testId: "recheck", run: (commandId) => dispatch("delivery.recheck", "button", { commandId }) },
  // Sent again once, with the same commandId; only the service's recheck decides whether it may.
  "send-again": { label: "Send again", testId: "send-again", run: (commandId) => dispatch("delivery.recheck", "button", { commandId }) },
};

function DeliveryLine({ receipt }: { receipt: Receipt }) {
  const { delivery, what, state, detail, actions } = receipt;
  // A refusal the fleet words itself (an agent that left its machine) keeps T3's own words on hover.
  const serverWords = delivery.serverWords ? `T3 said: “${delivery.serverWords}”` : null;
  const words = [what, state, detail, serverWords].filter(Boolean).join(" · ");
  return (
    <li className={`delivery delivery-${delivery.state}`} data-testid="delivery" data-state={delivery.state} data-outcome={delivery.observed?.outcome ?? ""}>
      {/* One line: the text clips, its whole shows on hover and to screen readers. */}
      <span className="delivery-words clipped" title={words}>
        <span className="delivery-what">{what}</span> <span className="delivery-state">{state}</span>
        {detail ? <span className="delivery-reason"> · {detail}</span> : null}
      </span>
      {actions.map((action) => (
        <button
          key={`${action.kind}:${action.commandId}`}
          type="button"
          data-testid={ACTIONS[action.kind].testId}
          onClick={() => ACTIONS[action.kind].run(action.commandId)}
        >
          {ACTIONS[action.kind].label}
        </button>
      ))}
      {[...new Set([delivery.commandId, ...actions.map((action) => action.commandId)])].map((commandId) => (
        <PlaceError key={commandId} place={`delivery:${commandId}`} />
      ))}
    </li>
  );
}
