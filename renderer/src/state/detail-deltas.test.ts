// An open agent's transcript deltas: the first since the last frame is applied at once, those after
// it wait for the frame and are applied there as one change of the store, so however many batches
// come between two frames the transcript renders at most twice (issue 44).
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
  it("the first since the last frame applies at once; those after it wait for the frame, then apply in order as one change", () => {
    const changes = countChanges();
    receiveDetailDelta(append(" from"), false);
    expect(changes.count(), "the first shows at once").toBe(1);
    expect(shownText()).toBe("Hello from");
    receiveDetailDelta(append(" the"), true);
    receiveDetailDelta(append(" fleet"), true);
    expect(changes.count(), "the others wait for the frame").toBe(1);
    expect(shownText()).toBe("Hello from");
    flushDetailDeltas();
    expect(changes.count(), "one change for both").toBe(2);
    expect(shownText()).toBe("Hello from the fleet");
    flushDetailDeltas();
    expect(changes.count(), "a frame with nothing new changes nothing").toBe(2);
    changes.stop();
  });

  it("are dropped when a whole detail that holds them comes before the frame, so no text shows twice", () => {
    receiveDetailDelta(append(" again"), true);
    receiveDetail(detail("Hello again"));
    receiveDetailDelta(append("!"), true);
    flushDetailDeltas();
    expect(shownText()).toBe("Hello again!");
  });

  it("for an agent whose transcript the window does not have change nothing", () => {
    const changes = countChanges();
    receiveDetailDelta(append("ignored", "env-1/other"), false);
    receiveDetailDelta(append("ignored", "env-1/other"), true);
    flushDetailDeltas();
    expect(changes.count()).toBe(0);
    expect(useFleet.getState().details.has("env-1/other")).toBe(false);
    changes.stop();
  });
});
