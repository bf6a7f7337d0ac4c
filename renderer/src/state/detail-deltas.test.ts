// An open agent's transcript deltas wait for the frame and are applied there as one change of the
// store, so however many batches come between two frames the transcript renders once (issue 44).
import { beforeEach, describe, expect, it } from "vitest";
import type { AgentDetail, AgentDetailDelta } from "../../../shared/bridge/contract";
import type { TranscriptItem } from "../../../shared/fleet/facts";
import { flushDetailDeltas, receiveDetail, receiveDetailDelta } from "./detail-deltas";
import { useFleet } from "./store";

const KEY = "env-1/thread-1";
const reply = (text: string, streaming = true): TranscriptItem => ({
  type: "message",
  id: "reply",
  runId: "r1",
  createdAt: "2026-12-05T06:00:00.000Z",
  updatedAt: "2026-12-05T06:00:00.000Z",
  role: "assistant",
  text,
  streaming,
});
const detail = (text: string): AgentDetail => ({ key: KEY, items: [reply(text)], loaded: true, error: null });
const append = (text: string, key = KEY): AgentDetailDelta => ({
  key,
  items: [],
  appended: [{ id: "reply", text, streaming: true, updatedAt: "2026-12-05T06:00:01.000Z" }],
  loaded: true,
  error: null,
});
const shownText = () => {
  const item = useFleet.getState().details.get(KEY)?.items[0];
  return item?.type === "message" ? item.text : undefined;
};

/** Counts the store's published changes (each one is a render of what reads the details). */
function countChanges(): { count: () => number; stop: () => void } {
  let changes = 0;
  const stop = useFleet.subscribe(() => changes++);
  return { count: () => changes, stop };
}

beforeEach(() => {
  flushDetailDeltas();
  useFleet.setState({ details: new Map() });
  receiveDetail(detail("Hello"));
});

describe("an open agent's transcript deltas", () => {
  it("wait for the frame, then apply in order as one change", () => {
    const changes = countChanges();
    receiveDetailDelta(append(" from"));
    receiveDetailDelta(append(" the"));
    receiveDetailDelta(append(" fleet"));
    expect(changes.count(), "they wait for the frame").toBe(0);
    expect(shownText()).toBe("Hello");
    flushDetailDeltas();
    expect(changes.count(), "one change for all three").toBe(1);
    expect(shownText()).toBe("Hello from the fleet");
    flushDetailDeltas();
    expect(changes.count(), "a frame with nothing new changes nothing").toBe(1);
    changes.stop();
  });

  it("are dropped when a whole detail that holds them comes before the frame, so no text shows twice", () => {
    receiveDetailDelta(append(" again"));
    receiveDetail(detail("Hello again"));
    receiveDetailDelta(append("!"));
    flushDetailDeltas();
    expect(shownText()).toBe("Hello again!");
  });

  it("for an agent whose transcript the window does not have change nothing", () => {
    const changes = countChanges();
    receiveDetailDelta(append("ignored", "env-1/other"));
    receiveDetailDelta(append("ignored", "env-1/other"));
    flushDetailDeltas();
    expect(changes.count()).toBe(0);
    expect(useFleet.getState().details.has("env-1/other")).toBe(false);
    changes.stop();
  });
});
