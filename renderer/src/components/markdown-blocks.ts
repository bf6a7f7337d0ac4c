// Splitting markdown into top-level blocks, for rendering a growing text block by block.

/**
 * Top-level blocks of a markdown text: split at blank lines outside fenced code. A streaming reply
 * grows at its end, so every block but the last keeps its text and is not parsed again.
 */
export function markdownBlocks(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | null = null;
  for (const line of text.split("\n")) {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || (marker[0] === fence[0] && marker.length >= fence.length))) fence = fence === null ? marker : null;
    if (fence === null && line.trim() === "" && current.length > 0) {
      blocks.push(current.join("\n"));
      current = [];
      continue;
    }
    if (current.length > 0 || line.trim() !== "") current.push(line);
  }
  if (current.length > 0) blocks.push(current.join("\n"));
  return blocks;
}

/**
 * How long a piece of a growing paragraph gets before a new one starts (see paragraphPieces). The
 * last piece is parsed again on every frame that adds to it (issue 44: once per frame, not per 50 ms):
 * pieces of 1,000 characters made that ~1.4 ms against ~1 ms at 250 (react-markdown with remark-gfm),
 * whose fixed cost per parse is most of what is left.
 */
export const PARAGRAPH_PIECE_CHARS = 250;

/** A piece of one paragraph, and the spaces that separate it from the previous piece. */
export interface ParagraphPiece {
  before: string;
  text: string;
}

/**
 * Characters that may open an inline construct spanning spaces (emphasis, strikethrough, links,
 * images, raw HTML, escapes); code spans are handled apart. Autolinks and entities never span a space.
 */
const SPANNING = new Set(["*", "_", "~", "[", "]", "<", "\\"]);

/** A single-line paragraph that pieces or settled lines may cut: it starts with a letter. */
export function isCuttableParagraph(block: string): boolean {
  return !block.includes("\n") && STARTS_WITH_LETTER.test(block);
}

const STARTS_WITH_LETTER = /^\p{L}/u;
const LETTER = /\p{L}/u;

/**
 * Where a cuttable paragraph may be cut so that each side parses, alone, to the same inline content
 * as the whole: after spaces outside code spans, before a letter (so no side parses as a list,
 * heading or code), and before the first character that could open a construct reaching past a cut
 * (code spans count only once closed). Offsets up to `until`, in order.
 */
function paragraphCuts(block: string, until = block.length): number[] {
  const cuts: number[] = [];
  for (let index = 0; index < Math.min(until, block.length); index++) {
    const char = block[index]!;
    if (SPANNING.has(char)) break;
    if (char === "`") {
      let run = 1;
      while (block[index + run] === "`") run++;
      const close = closingBackticks(block, index + run, run);
      if (close === -1) break; // may close later, taking spaces after it into code
      index = close + run - 1;
      continue;
    }
    if ((char === " " || char === "\t") && block[index + 1] !== " " && block[index + 1] !== "\t" && LETTER.test(block[index + 1] ?? "")) cuts.push(index + 1);
  }
  return cuts;
}

/** Whether `block` (a cuttable paragraph) may be cut at `offset` (see paragraphCuts). */
export function isParagraphCut(block: string, offset: number): boolean {
  return offset > 0 && isCuttableParagraph(block) && paragraphCuts(block, offset).at(-1) === offset;
}

/**
 * Cuts a long single-line paragraph into pieces that parse, one by one, to the same inline content
 * as the whole (paragraphCuts), so a streaming paragraph re-parses only its last piece per token.
 * Cuts fall every PARAGRAPH_PIECE_CHARS and never move as the text grows. Null when `block` is not
 * such a paragraph (several lines can turn into a table or a setext heading) or is short.
 */
export function paragraphPieces(block: string, pieceChars = PARAGRAPH_PIECE_CHARS): ParagraphPiece[] | null {
  if (block.length <= pieceChars || !isCuttableParagraph(block)) return null;
  const starts = paragraphCuts(block);
  const pieces: ParagraphPiece[] = [];
  let start = 0;
  let before = "";
  for (const next of starts) {
    let end = next - 1;
    while (end > start && (block[end - 1] === " " || block[end - 1] === "\t")) end--;
    if (end - start < pieceChars) continue;
    pieces.push({ before, text: block.slice(start, end) });
    before = block.slice(end, next);
    start = next;
  }
  if (pieces.length === 0) return null;
  pieces.push({ before, text: block.slice(start) });
  return pieces;
}

/** Where a code span opened by `run` backticks closes (a run of exactly that length), or -1. */
function closingBackticks(text: string, from: number, run: number): number {
  for (let index = text.indexOf("`", from); index !== -1; index = text.indexOf("`", index)) {
    let length = 1;
    while (text[index + length] === "`") length++;
    if (length === run) return index;
    index += length;
  }
  return -1;
}

/**
 * Prose no markdown construct can touch: one line that starts with a letter and holds only letters,
 * digits, spaces and punctuation that opens nothing (no emphasis, code, link, HTML, entity or escape
 * character, no colon or @ for GFM's autolinks, no "www."). Markdown renders it as its own text with
 * trailing spaces dropped, so a streaming reply's plain prose need not be parsed per token (issue 44).
 */
export function isPlainProse(text: string): boolean {
  return PLAIN_PROSE.test(text) && !/www\./i.test(text);
}

const PLAIN_PROSE = /^\p{L}[\p{L}\p{N} ,.;?!'"()-]*$/u;

/**
 * Where in a cuttable paragraph's markdown its rendered text `shown` (a prefix of what the page
 * shows) ends, when what comes before is text a cut may follow: words and closed code spans (shown
 * without their backticks, and without one space each side when both sides have one). Null when the
 * two disagree, anything else comes first (an entity, a construct a cut cannot follow), or `shown`
 * ends inside a code span.
 */
export function sourceOffset(block: string, shown: string): number | null {
  let seen = 0;
  for (let index = 0; index < block.length;) {
    if (seen === shown.length) return index;
    const char = block[index]!;
    if (char === "&" || SPANNING.has(char)) return null;
    if (char !== "`") {
      if (shown[seen] !== char) return null;
      seen++;
      index++;
      continue;
    }
    let run = 1;
    while (block[index + run] === "`") run++;
    const close = closingBackticks(block, index + run, run);
    if (close === -1) return null;
    const code = block.slice(index + run, close);
    const content = code.length >= 2 && code.startsWith(" ") && code.endsWith(" ") && code.trim() !== "" ? code.slice(1, -1) : code;
    if (shown.slice(seen, seen + content.length) !== content || seen + content.length > shown.length) return null;
    seen += content.length;
    index = close + run;
  }
  return seen === shown.length ? block.length : null;
}
