import { createElement, type ReactElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import ReactMarkdown from "react-markdown";
import remarkGfm from "remark-gfm";
import { describe, expect, it } from "vitest";
import { Markdown } from "./Markdown";
import { ParagraphLines, StreamingMarkdown } from "./StreamingMarkdown";
import { isParagraphCut, isPlainProse, markdownBlocks, PARAGRAPH_PIECE_CHARS, paragraphPieces } from "./markdown-blocks";

/** The page as a reader sees it: React's markers between adjacent text nodes are not content. */
const html = (element: ReactElement) => renderToStaticMarkup(element).replaceAll("<!-- -->", "");

/** What a streaming reply showed before paragraphs were parsed in pieces: each block parsed whole. */
const wholeBlocks = (text: string) =>
  `<div class="markdown-blocks">${markdownBlocks(text)
    .map((block) => html(createElement(Markdown, { text: block })))
    .join("")}</div>`;

const words = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `w${from + i}`).join(" ");

describe("a streaming reply", () => {
  // Long single-line paragraphs with the inline constructs an agent writes, before and after cuts.
  const texts: [string, string][] = [
    ["plain words", words(900)],
    ["code spans", `Intro.\n\n${words(400)} \`npm test\` and \`a  b\` then ${words(400, 400)}`],
    [
      "autolinks and emphasis",
      `${words(300)} see www.example.com/x and mail me@example.com or https://example.com/a_b ${words(300, 300)} **bold ${words(200, 600)}** end`,
    ],
    ["an unclosed code span", `${words(300)} an \`unclosed code ${words(300, 300)} \` closed`],
    ["links, raw HTML, strikethrough", `${words(300)} a [link](https://example.com) ${words(300, 300)} <b>raw</b> ~~gone~~ ${words(100, 600)}`],
    ["block markers inside the line", `${words(300)} 1. not a list  and - not a list # nor a heading &amp; &copy; ${words(400, 300)} | a | b |`],
  ];

  it.each(texts)("renders the same elements as the whole text parsed block by block, at every length: %s", (_, text) => {
    const last = markdownBlocks(text).at(-1)!;
    expect(paragraphPieces(last), "the long paragraph is parsed in pieces").not.toBeNull();
    // Lengths around the first cut, where a piece starts, and spread over the rest.
    const lengths = [
      ...Array.from({ length: 40 }, (_, i) => PARAGRAPH_PIECE_CHARS - 20 + i * 3),
      ...Array.from({ length: 20 }, (_, i) => Math.round(((i + 1) / 20) * text.length)),
    ];
    for (const length of lengths) {
      const prefix = text.slice(0, length);
      expect(html(createElement(StreamingMarkdown, { text: prefix })), `at ${length}`).toBe(wholeBlocks(prefix));
    }
  });
});

describe("a growing paragraph's settled lines", () => {
  // Paragraphs with the inline constructs an agent writes, before and after where lines settle.
  const paragraphs: [string, string][] = [
    ["plain words", words(400)],
    ["code spans", `${words(100)} run \`npm test\` and \`\` a\`b \`\` then ${words(200, 100)} \`x\` ${words(50, 300)}`],
    ["emphasis and links late", `${words(200)} a [link](https://example.com) **bold ${words(100, 200)}** www.example.com end`],
  ];

  it.each(paragraphs)("render the paragraph's own content, cut into paragraphs only where a line may settle: %s", (_, text) => {
    const whole = html(createElement(Markdown, { text }));
    const random = seededRandom(text.length);
    const cuts = Array.from({ length: text.length }, (_, offset) => offset).filter((offset) => isParagraphCut(text, offset));
    expect(cuts.length, "lines may settle").toBeGreaterThan(10);
    for (let run = 0; run < 30; run++) {
      const ends = cuts.filter(() => random() < 0.1);
      const lines = html(createElement("div", { className: "markdown" }, createElement(ParagraphLines, { text, ends })));
      // The space a settled line ended at is where a line breaks anyway; the rest is the same, element for element.
      const joined = lines.replaceAll(/<\/p><p class="(settled|growing)-lines"[^>]*>/g, " ").replace(/<p class="(settled|growing)-lines"[^>]*>/, "<p>");
      expect(joined, `settled at ${ends.join(", ")}`).toBe(whole);
    }
  });
});

describe("plain prose", () => {
  /** What react-markdown makes of a text, without the window's shortcut for plain prose. */
  const parsed = (text: string) => html(createElement("div", { className: "markdown" }, createElement(ReactMarkdown, { remarkPlugins: [remarkGfm] }, text)));

  it("renders as markdown parses it, while it streams and once whole", () => {
    const random = seededRandom(44);
    const alphabet = [..."abcdefghij ÄéßΩ 0123456789 ,.;?!'\"()-"];
    for (let run = 0; run < 200; run++) {
      const length = 1 + Math.floor(random() * 600);
      const text = `W${Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join("")}`;
      expect(isPlainProse(text)).toBe(true);
      expect(html(createElement(Markdown, { text }))).toBe(parsed(text));
      expect(html(createElement(StreamingMarkdown, { text })), text).toBe(`<div class="markdown-blocks">${parsed(text)}</div>`);
    }
  });

  it("is not taken for text markdown could change", () => {
    for (const text of [
      "a *b*",
      "a `b`",
      "a [b](c)",
      "see www.example.com",
      "mail me@example.com",
      "https://example.com",
      "a &amp; b",
      "a <b>",
      "1. list",
      "a\nb",
      "a ~~b~~",
      "a \\* b",
    ])
      expect(isPlainProse(text), text).toBe(false);
  });
});

function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}
