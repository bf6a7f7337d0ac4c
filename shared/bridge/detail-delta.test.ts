import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TranscriptItem } from "../fleet/facts";
import { type AgentDetail, applyDetailDelta } from "./contract";

const item = (id: string, text: string): TranscriptItem => ({
  type: "message",
  id,
  runId: null,
  role: "assistant",
  text,
  streaming: false,
  createdAt: "t",
  updatedAt: "t",
});

/** The rule, spelled out: changed entries replace the entry with their id in place, new ones are appended in order. */
function reference(items: TranscriptItem[], changed: TranscriptItem[]): TranscriptItem[] {
  const next = [...items];
  for (const entry of changed) {
    const position = next.findIndex((existing) => existing.id === entry.id);
    if (position >= 0) next[position] = entry;
    else next.push(entry);
  }
  return next;
}

describe("a detail delta applied to a transcript", () => {
  it("replaces entries by id wherever they are and appends new ones, as the rule says", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.array(fc.record({ id: fc.integer({ min: 0, max: 50 }), text: fc.string({ maxLength: 3 }) }), { maxLength: 6 }),
        (length, changes) => {
          const items = Array.from({ length }, (_, index) => item(`i${index}`, "old"));
          const changed = changes.map((change) => item(`i${change.id}`, change.text));
          const unique = changed.filter((entry, index) => changed.findIndex((other) => other.id === entry.id) === index);
          const detail: AgentDetail = { key: "e/t", items, loaded: true, error: null };
          expect(applyDetailDelta(detail, { key: "e/t", items: unique, loaded: true, error: null }).items).toEqual(reference(items, unique));
        },
      ),
    );
  });
});
