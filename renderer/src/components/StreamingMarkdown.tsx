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
// The words that arrived since it was rendered may follow it as plain text (live-words.ts,
// StreamingReply.tsx). Once the reply ends it renders as one document again (Markdown.tsx).
import { Fragment, memo, type Ref, type RefObject, useLayoutEffect, useRef, useState } from "react";
import { InlineMarkdown, LongText, Markdown, MARKDOWN_MAX_CHARS } from "./Markdown";
import { isCuttableParagraph, isParagraphCut, markdownBlocks, paragraphPieces, sourceOffset } from "./markdown-blocks";
import { lastLineStart } from "./line-starts";

/** Lines the growing part of a paragraph reaches before all but its last are settled. */
export const SETTLE_AFTER_LINES = 4;

/**
 * Words shown after what was rendered (StreamingReply.tsx): `words` is the element that shows them,
 * at the end of the growing paragraph; `added` the text they are, as the reply has it (past the
 * rendered text); `render` renders the whole reply with them.
 */
export interface LiveWords {
  words: RefObject<HTMLSpanElement | null>;
  added: () => string;
  render: () => void;
}

export function StreamingMarkdown({ text, live }: { text: string; live?: LiveWords }) {
  if (text.length > MARKDOWN_MAX_CHARS) return <LongText text={text} />;
  const blocks = markdownBlocks(text);
  const last = blocks.length - 1;
  return (
    <div className="markdown-blocks">
      {blocks.map((block, index) =>
        // Blocks only grow at the end: their position is their identity.
        index === last && isCuttableParagraph(block) ? <StreamingParagraph key={index} text={block} live={live} /> : <Markdown key={index} text={block} />,
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

/**
 * A paragraph still growing: its settled lines, then the part still growing, then the live words.
 * Lines are looked at when the growing part's box changes size (a ResizeObserver runs after the
 * frame's layout, so looking costs no layout of its own), not per token: a token that leaves the
 * line count as it was changes nothing here.
 */
function StreamingParagraph({ text, live }: { text: string; live?: LiveWords }) {
  const [state, setState] = useState<Settled>(NOTHING_SETTLED);
  // The settled lines hold while the text only grew (a message replaced whole starts over).
  const current = text.startsWith(state.settled) ? state : NOTHING_SETTLED;
  const container = useRef<HTMLDivElement>(null);
  const growing = useRef<HTMLParagraphElement>(null);
  // What the observer reads: the text and lines as last rendered.
  const rendered = useRef({ text, current, live });
  useLayoutEffect(() => {
    rendered.current = { text, current, live };
  });
  useLayoutEffect(() => {
    const box = container.current;
    const paragraph = growing.current;
    if (!box || !paragraph) return;
    const look = () => {
      const { text, current, live } = rendered.current;
      const width = box.clientWidth;
      if (current.ends.length > 0 && width !== current.width) {
        // Lines measured at another width (the window resized, a panel unfolded): one paragraph again, settled afresh.
        setState(NOTHING_SETTLED);
        return;
      }
      const start = lastLineStart(paragraph, SETTLE_AFTER_LINES);
      if (start === null) return;
      // The text shown, live words included: they are plain, so shown as written.
      const whole = text + (live?.added() ?? "");
      const rest = whole.slice(current.settled.length);
      // The offset is in the text shown: where it is in the markdown, if markdown allows a cut there.
      const cut = sourceOffset(rest, (paragraph.textContent ?? "").slice(0, start));
      if (cut === null || !isParagraphCut(rest, cut)) return;
      const end = current.settled.length + cut;
      // The live words before the cut become rendered text with it, in the same render.
      if (whole !== text) live?.render();
      setState({ settled: whole.slice(0, end), ends: [...current.ends, end], width });
    };
    const observer = new ResizeObserver(look);
    observer.observe(box);
    observer.observe(paragraph);
    return () => observer.disconnect();
  }, []);
  return (
    <div className="markdown" ref={container}>
      <ParagraphLines text={text} ends={current.ends} growing={growing} words={live?.words} />
    </div>
  );
}

/**
 * The paragraph as settled paragraphs ending at `ends`, then the part still growing (in pieces when
 * long), then the element for live words. Rendered apart from the measuring, so a test can hold
 * what it renders against the whole.
 */
export function ParagraphLines({
  text,
  ends,
  growing,
  words,
}: {
  text: string;
  ends: readonly number[];
  growing?: Ref<HTMLParagraphElement>;
  words?: Ref<HTMLSpanElement>;
}) {
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
        {/* Empty as rendered: each text rendered gets a new one, so words shown live are never shown twice. */}
        {words ? <span key={text.length} className="live-words" ref={words} /> : null}
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
