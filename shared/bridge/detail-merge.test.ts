import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TranscriptItem } from "../fleet/facts";
import { type AgentDetail, type AgentDetailDelta, applyDetailDelta } from "./contract";
import { mergeDetailDeltas } from "./detail-merge";

const message = (id: string, text: string): TranscriptItem => ({
  type: "message",
  id,
  runId: null,
  role: "assistant",
  text,
  streaming: true,
  createdAt: "t",
  updatedAt: text,
});
const command = (id: string): TranscriptItem =>
  ({ type: "activity", id, tone: "info", kind: "tool", summary: id, detail: null, createdAt: "t" }) as unknown as TranscriptItem;

const ids = fc.constantFrom("m0", "m1", "m2", "m3", "c0");
const item = ids.chain((id) => (id.startsWith("c") ? fc.constant(command(id)) : fc.string({ maxLength: 3 }).map((text) => message(id, text))));
const delta: fc.Arbitrary<AgentDetailDelta> = fc
  .record({
    items: fc.uniqueArray(item, { selector: (entry) => entry.id, maxLength: 3 }),
    appended: fc.uniqueArray(fc.record({ id: ids, text: fc.string({ minLength: 1, maxLength: 3 }), streaming: fc.boolean() }), {
      selector: (entry) => entry.id,
      maxLength: 3,
    }),
    loaded: fc.boolean(),
  })
  .map(({ items, appended, loaded }) => ({
    key: "e/t",
    items,
    appended: appended.map((entry) => ({ ...entry, updatedAt: entry.text })),
    loaded,
    error: null,
  }));

describe("two detail deltas as one", () => {
  it("applying the merged delta gives what applying both in order gives", () => {
    fc.assert(
      fc.property(fc.uniqueArray(item, { selector: (entry) => entry.id, maxLength: 4 }), delta, delta, (items, first, second) => {
        const detail: AgentDetail = { key: "e/t", items, loaded: true, error: null };
        expect(applyDetailDelta(detail, mergeDetailDeltas(first, second))).toEqual(applyDetailDelta(applyDetailDelta(detail, first), second));
      }),
      { numRuns: 2_000 },
    );
  });

  it("a streaming reply's appends join into one", () => {
    const merged = mergeDetailDeltas(
      { key: "e/t", items: [], appended: [{ id: "m1", text: "Hello ", streaming: true, updatedAt: "1" }], loaded: true, error: null },
      { key: "e/t", items: [], appended: [{ id: "m1", text: "world", streaming: false, updatedAt: "2" }], loaded: true, error: null },
    );
    expect(merged).toEqual({
      key: "e/t",
      items: [],
      appended: [{ id: "m1", text: "Hello world", streaming: false, updatedAt: "2" }],
      loaded: true,
      error: null,
    });
  });
});
