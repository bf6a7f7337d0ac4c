import { describe, expect, it } from "vitest";
import { isParagraphCut, markdownBlocks, paragraphPieces, sourceOffset } from "./markdown-blocks";

describe("markdown blocks of a streaming reply", () => {
  it("splits at blank lines, but never inside fenced code", () => {
    const text = ["# Title", "", "Some *text*", "more", "", "", "```ts", "const a = 1;", "", "const b = 2;", "```", "", "~~~", "x", "", "~~~", "tail"].join(
      "\n",
    );
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

describe("pieces of a long streaming paragraph", () => {
  const words = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `word${from + i}`).join(" ");

  it("cuts a long plain paragraph at spaces, every so many characters, and keeps every character", () => {
    const text = words(600);
    const pieces = paragraphPieces(text, 1_000)!;
    expect(pieces.length).toBeGreaterThan(2);
    expect(pieces.map((piece) => piece.before + piece.text).join("")).toBe(text);
    for (const piece of pieces.slice(0, -1)) expect(piece.text.length).toBeGreaterThanOrEqual(1_000);
    for (const piece of pieces.slice(1)) expect(piece.before).toBe(" ");
  });

  it("keeps its cuts where they were as the paragraph grows", () => {
    const full = words(600);
    let previous: string[] = [];
    for (let length = 1_000; length <= full.length; length += 7) {
      const pieces = (paragraphPieces(full.slice(0, length), 1_000) ?? []).map((piece) => piece.text);
      expect(pieces.slice(0, Math.max(0, previous.length - 1))).toEqual(previous.slice(0, Math.max(0, previous.length - 1)));
      previous = pieces;
    }
  });

  it("does not cut short paragraphs, several lines, or text that does not start as a plain paragraph", () => {
    expect(paragraphPieces(words(10), 1_000)).toBeNull();
    expect(paragraphPieces(`${words(300)}\n${words(300)}`, 1_000)).toBeNull();
    expect(paragraphPieces(`- ${words(600)}`, 1_000)).toBeNull();
    expect(paragraphPieces(`1. ${words(600)}`, 1_000)).toBeNull();
  });

  it("never cuts past a character that could open emphasis, a link or raw HTML, or inside code", () => {
    for (const opener of ["*", "_", "~~", "[", "<", "\\"]) {
      const pieces = paragraphPieces(`${words(100)} ${opener}${words(500, 100)}`, 500)!;
      const opening = pieces.findIndex((piece) => piece.text.includes(opener));
      expect(opening).toBe(pieces.length - 1);
    }
    // An unclosed code span may take in the spaces after it: no cut after it.
    const open = paragraphPieces(`${words(100)} \`code ${words(500, 100)}`, 500)!;
    expect(open.at(-1)!.text).toContain("`code");
    // A closed one is plain text to cut after, never inside.
    const closed = paragraphPieces(`${words(100)} \`a b\` ${words(500, 100)}`, 500)!;
    expect(closed.length).toBeGreaterThan(2);
    expect(closed.some((piece) => piece.text.includes("`a b`"))).toBe(true);
  });
});

describe("where a growing paragraph's settled lines may end", () => {
  const words = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `word${from + i}`).join(" ");

  it("cuts where a piece could start: after a space, before a letter, before any construct a cut could split", () => {
    const text = `${words(3)} 1. \`a b\` next *em ${words(3, 3)}`;
    const at = (word: string) => text.indexOf(word);
    expect(isParagraphCut(text, at("word1"))).toBe(true);
    expect(isParagraphCut(text, at("1."))).toBe(false); // not before a letter: "1." could start a list
    expect(isParagraphCut(text, at("a b") + 2)).toBe(false); // inside a code span
    expect(isParagraphCut(text, at("next"))).toBe(true); // after a closed code span
    expect(isParagraphCut(text, at("word3"))).toBe(false); // after "*", which may close past the cut
    expect(isParagraphCut(text, at("ord1"))).toBe(false); // inside a word
    expect(isParagraphCut(text, 0)).toBe(false);
    expect(isParagraphCut(`- ${words(3)}`, 4)).toBe(false); // not a paragraph that starts with a letter
  });

  it("finds in the markdown where a prefix of the shown text ends", () => {
    const text = "Run `npm test` and `` a`b `` then `  ` more";
    // Shown: code spans without backticks, one space each side stripped when both have one.
    const shown = "Run npm test and a`b then    more";
    expect(sourceOffset(text, shown.slice(0, shown.indexOf("and")))).toBe(text.indexOf("and"));
    expect(sourceOffset(text, shown.slice(0, shown.indexOf("then")))).toBe(text.indexOf("then"));
    expect(sourceOffset(text, shown.slice(0, shown.indexOf("more")))).toBe(text.indexOf("more"));
    expect(sourceOffset(text, shown)).toBe(text.length);
    expect(sourceOffset(text, "Run npm")).toBeNull(); // inside a code span
    expect(sourceOffset(text, "Ran")).toBeNull(); // not what the markdown says
    expect(sourceOffset("a &amp; b c", "a & b ")).toBeNull(); // an entity comes first
    expect(sourceOffset("a *b* c", "a b ")).toBeNull(); // emphasis comes first
    expect(sourceOffset("an `unclosed span", "an `")).toBeNull();
  });
});
