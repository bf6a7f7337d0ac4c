import { describe, expect, it } from "vitest";
import type { TranscriptItem } from "../../../shared/fleet/facts";
import { applyDetailDelta } from "../../../shared/bridge/contract";
import { EARLIER_IN_T3, awaitsApproval, earlierNote, newMessageWords, streamingTail, transcriptEntries } from "./Transcript";

const command = (text: string, status: "running" | "pending" | "completed"): TranscriptItem => ({
  type: "command",
  id: "i1",
  runId: "r1",
  createdAt: "t",
  updatedAt: "t",
  command: text,
  exitCode: null,
  status,
});

describe("a command under an approval card", () => {
  it("awaits approval, not runs, while an approval asks about it", () => {
    expect(awaitsApproval(command("npm test", "running"), ["Run `npm test`?"])).toBe(true);
    expect(awaitsApproval(command("npm test", "pending"), ["npm test"])).toBe(true);
  });

  it("runs when no approval asks about it, and a finished command stays finished", () => {
    expect(awaitsApproval(command("npm run build", "running"), ["Run `npm test`?"])).toBe(false);
    expect(awaitsApproval(command("npm test", "running"), [])).toBe(false);
    expect(awaitsApproval(command("npm test", "completed"), ["npm test"])).toBe(false);
    expect(awaitsApproval(command("  ", "running"), ["npm test"])).toBe(false);
  });
});

describe("what a screen reader hears of the transcript", () => {
  const message = (id: string, role: "user" | "assistant", text: string, streaming = false): TranscriptItem => ({
    type: "message",
    id,
    runId: "r1",
    createdAt: "t",
    updatedAt: "t",
    role,
    text,
    streaming,
  });

  it("announces an agent message once, when it is complete, and never one seen before", () => {
    const seen = new Set(["m1"]);
    expect(newMessageWords(seen, [message("m1", "assistant", "old")])).toBeNull();
    expect(newMessageWords(seen, [message("m1", "assistant", "old"), message("m2", "assistant", "half", true)])).toBeNull();
    expect(newMessageWords(seen, [message("m1", "assistant", "old"), message("m2", "assistant", "done")])).toBe("The agent wrote: done");
    expect(newMessageWords(seen, [message("m1", "assistant", "old"), message("m2", "assistant", "done")])).toBeNull();
  });

  it("does not read the user's own messages back, and reads a long message's beginning only", () => {
    const seen = new Set<string>();
    expect(newMessageWords(seen, [message("u1", "user", "hello")])).toBeNull();
    const words = newMessageWords(seen, [message("a1", "assistant", "x".repeat(1_000))])!;
    expect(words.length).toBeLessThan(230);
    expect(words.endsWith("…")).toBe(true);
  });
});

describe("a transcript the fleet holds only the newest items of (issue 43)", () => {
  it("starts with a line that says the earlier messages are in T3, and deltas keep saying so", () => {
    const items = [command("npm test", "completed")];
    const entries = transcriptEntries([earlierNote(items[0]!.createdAt), ...items]);
    expect(entries[0]).toMatchObject({ type: "activity", summary: EARLIER_IN_T3, createdAt: "t" });
    const detail = applyDetailDelta({ key: "e/t", items, loaded: true, error: null, earlier: true }, { key: "e/t", items: [], loaded: true, error: null });
    expect(detail.earlier).toBe(true);
  });
});

describe("a reply streaming at the end of the transcript", () => {
  const message = (id: string, streaming: boolean): TranscriptItem => ({
    type: "message",
    id,
    runId: "r1",
    createdAt: "t",
    updatedAt: "t",
    role: "assistant",
    text: id,
    streaming,
  });

  it("is rendered after the other entries, which stay as they were while it grows", () => {
    const before = [message("m1", false), command("npm test", "completed")];
    const growing = transcriptEntries([...before, message("m2", true)]);
    const { settled, tail } = streamingTail(growing);
    expect(tail).toMatchObject({ id: "m2", streaming: true });
    expect(settled).toEqual(before);
    expect(settled.every((entry, index) => entry === before[index])).toBe(true);
  });

  it("joins the others once it ends, and a streaming reply before other items stays among them", () => {
    expect(streamingTail(transcriptEntries([message("m1", false), message("m2", false)])).tail).toBeNull();
    const followed = transcriptEntries([message("m2", true), command("npm test", "running")]);
    expect(streamingTail(followed)).toEqual({ settled: followed, tail: null });
  });
});
