import { describe, expect, it } from "vitest";
import { markdownBlocks } from "./markdown-blocks";

describe("markdown blocks of a streaming reply", () => {
  it("splits at blank lines, but never inside fenced code", () => {
    const text = ["# Title", "", "Some *text*", "more", "", "", "```ts", "const a = 1;", "", "const b = 2;", "```", "", "~~~", "x", "", "~~~", "tail"].join("\n");
    expect(markdownBlocks(text)).toEqual(["# Title", "Some *text*\nmore", "```ts\nconst a = 1;\n\nconst b = 2;\n```", "~~~\nx\n\n~~~\ntail"]);
  });

  it("a growing text keeps its earlier blocks unchanged: only the last one differs", () => {
    const full = "Intro paragraph.\n\n- one\n- two\n\n```py\nprint(1)\n\nprint(2)\n```\n\nThe end.";
    let previous: string[] = [];
    for (let length = 1; length <= full.length; length++) {
      const blocks = markdownBlocks(full.slice(0, length));
      expect(blocks.slice(0, Math.max(0, previous.length - 1))).toEqual(previous.slice(0, Math.max(0, previous.length - 1)));
      previous = blocks;
    }
    expect(previous.join("\n\n")).toBe(full);
  });
});
