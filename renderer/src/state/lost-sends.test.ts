// A send whose answer was lost with the page's socket (issue 43): held until the service's deliveries
// are known again, then its receipt or sendable again under the same commandId.
import { beforeEach, describe, expect, it } from "vitest";
import { BridgeRequests } from "../../../shared/bridge/contract";
import type { Delivery } from "../../../shared/fleet/delivery";
import { newCommandId } from "./lost-sends";
import { useFleet } from "./store";

const KEY = "env-1/thread-1";

function delivery(commandId: string): Delivery {
  const at = "2026-12-05T03:00:00.000Z";
  return {
    commandId,
    agentKey: KEY,
    kind: "message",
    state: "accepted",
    text: "hello",
    messageId: "msg-1",
    requestId: null,
    intent: "new-turn",
    observed: null,
    reason: null,
    createdAt: at,
    updatedAt: at,
  };
}

beforeEach(() => useFleet.setState({ lostSends: new Map(), deliveries: new Map() }));

describe("lost sends", () => {
  it("are held until the deliveries are known, then are done when the service has them and sendable when it has not", () => {
    const [kept, unknown] = [newCommandId(), newCommandId()];
    const store = useFleet.getState;
    store().sendLost({ key: KEY, commandId: kept, text: "hello", expectedIntent: "new-turn" });
    store().sendLost({ key: "env-1/thread-2", commandId: unknown, text: "hi", expectedIntent: "new-turn" });
    expect([...store().lostSends.values()].map((lost) => lost.checked)).toEqual([false, false]);
    // The snapshot after reconnecting lists the first only.
    store().receiveDelivery(delivery(kept));
    store().checkLostSends();
    expect(store().lostSends.has(KEY)).toBe(false);
    expect(store().lostSends.get("env-1/thread-2")).toMatchObject({ commandId: unknown, checked: true });
    // Answered when sent again (the same commandId): no longer lost.
    store().lostSendAnswered(unknown);
    expect(store().lostSends.size).toBe(0);
  });

  it("is not lost when its receipt came before the socket dropped", () => {
    const commandId = newCommandId();
    useFleet.getState().receiveDelivery(delivery(commandId));
    useFleet.getState().sendLost({ key: KEY, commandId, text: "hello", expectedIntent: "new-turn" });
    expect(useFleet.getState().lostSends.size).toBe(0);
  });

  it("are made random version-4 UUIDs that the bridge accepts", () => {
    const ids = Array.from({ length: 200 }, newCommandId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const commandId of ids) {
      expect(commandId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(BridgeRequests["agent.send"].safeParse({ key: KEY, text: "x", expectedIntent: "new-turn", commandId }).success).toBe(true);
    }
  });
});
