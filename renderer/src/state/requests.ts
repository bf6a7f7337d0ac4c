// Every bridge request the window makes goes through here: counted while in flight, and its failure
// shown where the user acted (never swallowed, never an unhandled rejection).
import type { Delivery } from "../../../shared/fleet/delivery";
import { ANSWER_LOST, type Bridge, BridgeRequestError } from "../bridge/client";
import { useFleet } from "./store";

let bridge: Bridge | undefined;

/** The bridge every request uses (set once when the window starts, bridge-events.ts). */
export function setRequestBridge(instance: Bridge): void {
  bridge = instance;
}

export function requireBridge(): Bridge {
  if (!bridge) throw new Error("bridge not started");
  return bridge;
}

export function errorMessage(error: unknown): string {
  return error instanceof BridgeRequestError || error instanceof Error ? error.message : String(error);
}

/**
 * Runs one bridge request for a place in the UI: counted while in flight, its failure shown at
 * that place, cleared when it next succeeds. `answerLost`: told instead, when the request had left
 * and its answer was lost with the socket (the service may have carried it out).
 */
export async function run<T>(place: string, request: () => Promise<T>, answerLost?: () => void): Promise<T | undefined> {
  const store = useFleet.getState();
  store.requestStarted();
  try {
    const result = await request();
    useFleet.getState().clearFailure(place);
    return result;
  } catch (error) {
    if (answerLost && error instanceof BridgeRequestError && error.kind === ANSWER_LOST) {
      useFleet.getState().clearFailure(place);
      answerLost();
    } else useFleet.getState().commandFailed(place, errorMessage(error));
    return undefined;
  } finally {
    useFleet.getState().requestSettled();
  }
}

/** A request the service answers with a delivery receipt: the receipt is kept for the panel's delivery lines. */
export async function runForReceipt(place: string, request: () => Promise<Delivery>, answerLost?: () => void): Promise<Delivery | undefined> {
  const delivery = await run(place, request, answerLost);
  if (delivery) useFleet.getState().receiveDelivery(delivery);
  return delivery;
}

/** Counts a request in flight whose failure its caller shows itself (the pairing dialog). */
export async function tracked<T>(request: () => Promise<T>): Promise<T> {
  useFleet.getState().requestStarted();
  try {
    return await request();
  } finally {
    useFleet.getState().requestSettled();
  }
}
