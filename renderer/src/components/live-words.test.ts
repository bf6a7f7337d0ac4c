import { createElement, createRef, Fragment, type ReactElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { LIVE_WORDS_MAX, liveWords } from "./live-words";
import { type LiveWords, StreamingMarkdown } from "./StreamingMarkdown";

/** The page as a reader sees it: React's markers between adjacent text nodes are not content. */
const html = (element: ReactElement) => renderToStaticMarkup(element).replaceAll("<!-- -->", "");
const EMPTY_WORDS = '<span class="live-words"></span>';
const live: LiveWords = { words: createRef(), added: () => "", render: () => {} };

/** The reply rendered as `rendered`, with `words` shown after it as StreamingReply.tsx shows them. */
const withWords = (rendered: string, words: string) =>
  html(createElement(StreamingMarkdown, { text: rendered, live })).replace(EMPTY_WORDS, html(createElement(Fragment, null, words)));
/** The reply rendered whole. */
const whole = (text: string) => html(createElement(StreamingMarkdown, { text, live })).replace(EMPTY_WORDS, "");
/** Spaces at a paragraph's end show nothing: markdown drops them, the browser does not draw them. */
const drawn = (markup: string) => markup.replace(/\s+<\/p>/g, "</p>");

const words = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `w${from + i}`).join(" ");

describe("words shown as they arrive", () => {
  it("are plain words after plain text, with the spaces markdown dropped from the end of what was rendered", () => {
    expect(liveWords("The tests", "The tests pass")).toBe(" pass");
    expect(liveWords("The tests ", "The tests pass ")).toBe(" pass ");
    expect(liveWords("The te", "The tests, all of them (twelve) pass.")).toBe("sts, all of them (twelve) pass.");
    expect(liveWords("Done with `npm test`", "Done with `npm test` and more")).toBe(" and more");
  });

  it("are not taken where markdown could read them otherwise, nor for a reply that did not only grow", () => {
    expect(liveWords("", "The")).toBeNull(); // nothing rendered yet
    expect(liveWords("see www", "see www.example")).toBeNull(); // an autolink
    expect(liveWords("see", "see www.example")).toBeNull();
    expect(liveWords("mail me", "mail me@example")).toBeNull();
    expect(liveWords("at https", "at https://x")).toBeNull();
    expect(liveWords("a **bold", "a **bold**")).toBeNull(); // closes emphasis
    expect(liveWords("a *b", "a *bc")).toBeNull(); // continues a word that is not plain
    expect(liveWords("a [link]", "a [link](x")).toBeNull();
    expect(liveWords("x", "x &amp;")).toBeNull();
    expect(liveWords("x", "x `code`")).toBeNull();
    expect(liveWords("x", "x\ny")).toBeNull(); // a line break
    expect(liveWords("x\n", "x\ny")).toBeNull();
    expect(liveWords("one", "two")).toBeNull(); // replaced, not grown
    expect(liveWords("one", "one")).toBeNull();
    expect(liveWords("x", `x ${"a".repeat(LIVE_WORDS_MAX)}`)).toBeNull(); // then rendered again
  });

  // Replies as agents write them, streamed in tokens of three kinds: a word and the space after it
  // (as the simulator sends), a space and a word (as language models' tokens mostly are), and
  // chunks of any length that end mid-word.
  const replies: [string, string][] = [
    ["plain words", words(150)],
    ["prose", "The parser now reads nested lists, and the tests (all twelve) pass; next I will look at tables. Is that right? It's done - mostly. ".repeat(4)],
    ["code spans", `${words(40)} run \`npm test\` and \`a  b\` then ${words(40, 40)} done`],
    ["autolinks", `${words(30)} see www.example.com/x and mail me@example.com or https://example.com/a_b then ${words(30, 30)} www`],
    ["emphasis, links and HTML", `${words(30)} **bold ${words(20, 30)}** a [link](https://example.com) <b>raw</b> ~~gone~~ _under_ ${words(20, 60)}`],
    [
      "blocks after a paragraph",
      `Intro ${words(20)}.\n\n- a list ${words(10)}\n- and more\n\n${words(60, 100)}\n\n\`\`\`ts\nconst a = 1;\n\`\`\`\n\nAfter ${words(20, 200)}`,
    ],
  ];
  const tokenized: [string, (text: string) => string[]][] = [
    ["a word and its space", (text) => text.split(/(?<=\s)/)],
    ["a space and a word", (text) => text.split(/(?=\s)/)],
    [
      "chunks of 1 to 9 characters",
      (text) => {
        const chunks: string[] = [];
        for (let at = 0, size = 1; at < text.length; at += size, size = (size * 7 + 3) % 9 || 1) chunks.push(text.slice(at, at + size));
        return chunks;
      },
    ],
  ];

  it.each(replies)("read as the whole reply at every token, for each kind of token: %s", (_, reply) => {
    for (const [kind, tokens] of tokenized) {
      let rendered = "";
      let full = "";
      let shownLive = 0;
      for (const token of tokens(reply)) {
        full += token;
        const shown = liveWords(rendered, full);
        // Shown only where the reply ends in a paragraph that holds the words' element, else rendered again.
        if (shown === null || !html(createElement(StreamingMarkdown, { text: rendered, live })).includes(EMPTY_WORDS)) {
          rendered = full;
          continue;
        }
        shownLive++;
        expect(drawn(withWords(rendered, shown)), `${kind}: ${JSON.stringify(full.slice(-80))}`).toBe(drawn(whole(full)));
      }
      expect(shownLive, `${kind}: most tokens are shown as words`).toBeGreaterThan(tokens(reply).length / 3);
    }
  });
});
