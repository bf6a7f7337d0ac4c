// A reply still streaming, rendered so that a token costs what the text it touches costs, not what
// the whole reply does (issue 44). Each markdown block is its own memoized markdown, so a token
// re-parses only the last block. A long last paragraph is cut twice over:
// - its settled lines: once the part still growing spans SETTLE_AFTER_LINES lines, every line but
//   the last moves into a paragraph of its own, cut where the line starts. The browser lays out a
//   paragraph whole whenever its text changes (in Chromium, 0.5 ms at 2,000 characters, 1.3 ms at
//   12,000 for every token), and a settled paragraph is not laid out again. Cut exactly where a
//   line starts, and only where markdown allows (markdown-blocks.ts isParagraphCut), the lines read
//   as the whole paragraph's; a new width lays the paragraph out whole again and settles afresh.
// - the part still growing is parsed in pieces (markdown-blocks.ts paragraphPieces).
// Once the reply ends it renders as one document again (Markdown.tsx).
import { Fragment, memo, type Ref, useLayoutEffect, useRef, useState } from "react";
import { InlineMarkdown, LongText, Markdown, MARKDOWN_MAX_CHARS } from "./Markdown";
import { isCuttableParagraph, isParagraphCut, markdownBlocks, PARAGRAPH_PIECE_CHARS, paragraphPieces, sourceOffset } from "./markdown-blocks";
import { lastLineStart } from "./line-starts";

/** Lines the growing part of a paragraph reaches before all but its last are settled. */
export const SETTLE_AFTER_LINES = 4;

export function StreamingMarkdown({ text }: { text: string }) {
  if (text.length > MARKDOWN_MAX_CHARS) return <LongText text={text} />;
  const blocks = markdownBlocks(text);
  const last = blocks.length - 1;
  return (
    <div className="markdown-blocks">
      {blocks.map((block, index) =>
        // Blocks only grow at the end: their position is their identity.
        index === last && block.length > PARAGRAPH_PIECE_CHARS && isCuttableParagraph(block) ? (
          <StreamingParagraph key={index} text={block} />
        ) : (
          <Markdown key={index} text={block} />
        ),
      )}
    </div>
  );
}

/** Where the paragraph was cut into settled lines, valid while its text begins with `settled` and its width holds. */
interface Settled {
  /** The text of the settled lines, all of them. */
  settled: string;
  /** Where each settled paragraph ends in the text (the last is `settled.length`). */
  ends: number[];
  /** The paragraph's width, in CSS px, when they were measured. */
  width: number;
}

const NOTHING_SETTLED: Settled = { settled: "", ends: [], width: 0 };

/** A long paragraph still growing: its settled lines, then the part still growing. */
function StreamingParagraph({ text }: { text: string }) {
  const [state, setState] = useState<Settled>(NOTHING_SETTLED);
  // The settled lines hold while the text only grew (a message replaced whole starts over).
  const current = text.startsWith(state.settled) ? state : NOTHING_SETTLED;
  const container = useRef<HTMLDivElement>(null);
  const growing = useRef<HTMLParagraphElement>(null);
  const settledLength = current.settled.length;
  // A new width while no token comes (the window resized, a panel unfolded): one paragraph again.
  useLayoutEffect(() => {
    const box = container.current;
    if (!box) return;
    const observer = new ResizeObserver(() => setState((state) => (state.ends.length > 0 && box.clientWidth !== state.width ? NOTHING_SETTLED : state)));
    observer.observe(box);
    return () => observer.disconnect();
  }, []);
  useLayoutEffect(() => {
    const box = container.current;
    const paragraph = growing.current;
    if (!box || !paragraph) return;
    const width = box.clientWidth;
    if (current.ends.length > 0 && width !== current.width) {
      // Lines measured at another width: one paragraph again, settled afresh from the next token on.
      setState(NOTHING_SETTLED);
      return;
    }
    const start = lastLineStart(paragraph, SETTLE_AFTER_LINES);
    if (start === null) return;
    const rest = text.slice(settledLength);
    // The offset is in the text shown: where it is in the markdown, if markdown allows a cut there.
    const cut = sourceOffset(rest, (paragraph.textContent ?? "").slice(0, start));
    if (cut === null || !isParagraphCut(rest, cut)) return;
    const end = settledLength + cut;
    setState({ settled: text.slice(0, end), ends: [...current.ends, end], width });
  }, [text, current, settledLength]);
  return (
    <div className="markdown" ref={container}>
      <ParagraphLines text={text} ends={current.ends} growing={growing} />
    </div>
  );
}

/**
 * The paragraph as settled paragraphs ending at `ends`, then the part still growing (in pieces when
 * long). Rendered apart from the measuring, so a test can hold what it renders against the whole.
 */
export function ParagraphLines({ text, ends, growing }: { text: string; ends: readonly number[]; growing?: Ref<HTMLParagraphElement> }) {
  const from = ends.at(-1) ?? 0;
  const settled = ends.map((end, index) => {
    const start = ends[index - 1] ?? 0;
    return <SettledLines key={start} text={text.slice(start, end)} />;
  });
  const rest = text.slice(from);
  const pieces = paragraphPieces(rest);
  return (
    <>
      {settled}
      <p ref={growing} className={ends.length > 0 ? "growing-lines" : undefined}>
        {pieces ? (
          pieces.map((piece, index) => (
            // Pieces only grow at the end: their position is their identity.
            <Fragment key={index}>
              {piece.before}
              <InlineMarkdown text={piece.text} />
            </Fragment>
          ))
        ) : (
          <InlineMarkdown text={rest} />
        )}
      </p>
    </>
  );
}

/** Lines that no longer change: rendered once. */
const SettledLines = memo(function SettledLines({ text }: { text: string }) {
  return (
    <p className="settled-lines" data-testid="settled-lines">
      <InlineMarkdown text={text} />
    </p>
  );
});
