import { describe, expect, it } from "vitest";
import { type AgentDetail, applyDetailDelta } from "../../../shared/bridge/contract";
import type { TranscriptItem } from "../../../shared/fleet/facts";
import { sameButStreamingText } from "./open-detail";

const at = "2026-12-06T00:00:00.000Z";
const message = (id: string, text: string, streaming: boolean): TranscriptItem => ({
  type: "message",
  id,
  role: "assistant",
  text,
  streaming,
  runId: "run-1",
  createdAt: at,
  updatedAt: at,
});
const command: TranscriptItem = {
  type: "command",
  id: "c1",
  command: "npm test",
  status: "completed",
  exitCode: 0,
  runId: "run-1",
  createdAt: at,
  updatedAt: at,
};
const detail = (items: TranscriptItem[]): AgentDetail => ({ key: "env-a/t1", items, loaded: true, error: null });

describe("the open agent's detail as its transcript renders it", () => {
  const streaming = detail([command, message("m1", "The tests", true)]);
  /** A token as the bridge applies it (shared/bridge/contract.ts applyDetailDelta). */
  const token = (from: AgentDetail, text: string, streaming = true) =>
    applyDetailDelta(from, {
      key: from.key,
      items: [],
      appended: [{ id: "m1", text, streaming, updatedAt: "2026-12-06T00:00:01.000Z" }],
      loaded: true,
      error: null,
    });

  it("is the same while a token only grows the reply streaming at the end", () => {
    const grown = token(streaming, " pass");
    expect(grown).not.toBe(streaming);
    expect(sameButStreamingText(streaming, grown)).toBe(true);
    expect(sameButStreamingText(streaming, token(grown, " now"))).toBe(true);
  });

  it("changes when the reply ends, another item changes or comes, or the detail's own fields change", () => {
    expect(sameButStreamingText(streaming, token(streaming, ".", false))).toBe(false);
    expect(sameButStreamingText(streaming, detail([{ ...command, status: "failed" }, streaming.items[1]!]))).toBe(false);
    expect(sameButStreamingText(streaming, detail([...streaming.items, message("m2", "Next", true)]))).toBe(false);
    expect(sameButStreamingText(streaming, { ...streaming, error: "T3 Fleet lost the thread's stream." })).toBe(false);
    expect(sameButStreamingText(streaming, { ...streaming, key: "env-a/t2" })).toBe(false);
    expect(sameButStreamingText(streaming, undefined)).toBe(false);
    // A message that is not streaming is rendered whole, so any change to it is one.
    const finished = detail([command, message("m1", "Done", false)]);
    expect(sameButStreamingText(finished, detail([command, message("m1", "Done.", false)]))).toBe(false);
    // A queued marker on the streaming message (protocol 2) is not a token.
    const queued = detail([command, { ...(streaming.items[1] as Extract<TranscriptItem, { type: "message" }>), queue: { state: "queued", position: 1 } }]);
    expect(sameButStreamingText(streaming, queued)).toBe(false);
  });
});
