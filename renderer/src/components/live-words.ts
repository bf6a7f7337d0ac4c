// Words a streaming reply shows as they arrive, as text after what React rendered, without rendering
// the reply again (StreamingReply.tsx, issue 44): most tokens are a space and a word, and markdown
// renders them as themselves. Taken only where the rendered reply followed by the words as plain
// text reads exactly as the whole reply rendered (Markdown.test.ts holds the two against each other).
import { MARKDOWN_MAX_CHARS } from "./Markdown";
import { PARAGRAPH_PIECE_CHARS } from "./markdown-blocks";

/** Words shown past what React rendered, at most: then the reply is rendered again (one piece's worth). */
export const LIVE_WORDS_MAX = PARAGRAPH_PIECE_CHARS;

/**
 * Letters, digits, spaces and punctuation that neither opens nor closes anything in markdown (as
 * markdown-blocks.ts isPlainProse): no emphasis, code, link, image, HTML, entity or escape character,
 * no colon or @ for GFM's autolinks, no line break.
 */
const PLAIN = /^[\p{L}\p{M}\p{N} ,.;?!'"()-]*$/u;

/**
 * What to show after `rendered` so that the page shows `full`; null when the reply must be rendered
 * again: the text did not only grow, grew by more than LIVE_WORDS_MAX, or by anything but plain
 * words; or the word the text continues was not plain (it may become a link, or close a construct).
 * Markdown drops a paragraph's trailing spaces, so those `rendered` ends with are shown here, before
 * the words (spaces only: a line break ends the words' paragraph).
 */
export function liveWords(rendered: string, full: string): string | null {
  const added = full.length - rendered.length;
  if (added <= 0 || added > LIVE_WORDS_MAX || full.length > MARKDOWN_MAX_CHARS || !full.startsWith(rendered)) return null;
  const shownEnd = rendered.trimEnd().length;
  if (shownEnd === 0 || !/^ *$/u.test(rendered.slice(shownEnd))) return null;
  const words = full.slice(rendered.length);
  // A word of its own, or the rest of the word `rendered` ends with: then that whole word must be plain.
  const judged = shownEnd < rendered.length || words.startsWith(" ") ? words : rendered.slice(rendered.search(/\S*$/u)) + words;
  return PLAIN.test(judged) && !/www\./iu.test(judged) ? rendered.slice(shownEnd) + words : null;
}
