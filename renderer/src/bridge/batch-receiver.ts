import type { BridgeBatch, BridgeEvent } from "../../../shared/bridge/contract";

/**
 * Hands paced batches' events to the listeners, and acknowledges them from the animation frame that
 * paints what they applied (the listeners' own frame callbacks, requested first, run before): the
 * service sends the next batch then, so about one batch is in flight per painted frame (issue 44).
 * One acknowledgement per frame, of the newest batch, answers every batch before it too
 * (shared/bridge/paced-feed.ts), so two batches in a frame cost one message back. One per
 * connection: a new connection numbers its batches afresh.
 */
export function batchReceiver(
  listeners: () => Iterable<(event: BridgeEvent) => void>,
  ack: (seq: number) => void,
  nextFrame: (callback: () => void) => void = requestAnimationFrame,
): (batch: BridgeBatch) => void {
  let newest: number | null = null;
  return (batch) => {
    for (const event of batch.events) for (const listener of listeners()) listener(event);
    if (newest === null)
      nextFrame(() => {
        const seq = newest!;
        newest = null;
        ack(seq);
      });
    newest = batch.seq;
  };
}
