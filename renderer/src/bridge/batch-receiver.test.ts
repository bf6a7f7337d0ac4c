// The page takes paced batches as they come and acknowledges them once per frame, with the newest
// (shared/bridge/paced-feed.ts takes it for every batch before it too).
import { describe, expect, it } from "vitest";
import type { BridgeBatch, BridgeEvent } from "../../../shared/bridge/contract";
import { batchReceiver } from "./batch-receiver";

const batch = (seq: number): BridgeBatch => ({ type: "events", seq, events: [{ type: "handled", entry: { seq } } as unknown as BridgeEvent] });

function rig() {
  const frames: (() => void)[] = [];
  const acks: number[] = [];
  const received: number[] = [];
  const receive = batchReceiver(
    () => [(event) => received.push((event as unknown as { entry: { seq: number } }).entry.seq)],
    (seq) => acks.push(seq),
    (callback) => frames.push(callback),
  );
  const frame = () => frames.splice(0).forEach((callback) => callback());
  return { receive, frame, frames, acks, received };
}

describe("paced batches on the page", () => {
  it("hands every event on at once, in order, and acknowledges the newest batch once per frame", () => {
    const page = rig();
    page.receive(batch(1));
    page.receive(batch(2));
    expect(page.received).toEqual([1, 2]);
    expect(page.frames, "one frame callback for both").toHaveLength(1);
    expect(page.acks).toEqual([]);
    page.frame();
    expect(page.acks).toEqual([2]);
    page.frame();
    expect(page.acks, "a frame with no batch acknowledges nothing").toEqual([2]);
    page.receive(batch(3));
    page.frame();
    expect(page.acks).toEqual([2, 3]);
  });
});
