// Where a paragraph's lines start, as the browser laid it out (StreamingMarkdown.tsx settles the
// lines of a growing paragraph there). Reads layout: call it where the layout is current anyway
// (a layout effect, before the frame paints).

/** The paragraph's text nodes, each with where it starts in the paragraph's text. */
function textNodes(element: Element): { node: Text; start: number }[] {
  const nodes: { node: Text; start: number }[] = [];
  const walker = element.ownerDocument.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  let start = 0;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    nodes.push({ node: node as Text, start });
    start += (node as Text).data.length;
  }
  return nodes;
}

/**
 * Where the last line of `element` starts, as an offset in its text (its textContent), once it
 * spans at least `lines` lines; null before, or whenever it cannot tell for sure. A line starts with
 * a character that is not white space (the space a line breaks at stays on the line before), and a
 * character is on the last line when its box reaches below the top of the last character's, so the
 * first one there is found by bisection. It is taken only if it sits where the first line starts,
 * at the paragraph's start edge (left to right), and the character before it is on a line above.
 */
export function lastLineStart(element: Element, lines: number): number | null {
  const range = element.ownerDocument.createRange();
  range.selectNodeContents(element);
  // Distinct tops: at least one per line (a code span's box may add one), so never too few.
  const tops = new Set<number>();
  for (const rect of range.getClientRects()) if (rect.height > 0) tops.add(Math.round(rect.top));
  if (tops.size < lines) return null;
  const nodes = textNodes(element);
  const total = nodes.reduce((sum, { node }) => sum + node.data.length, 0);
  const boxOf = (offset: number): DOMRect | null => {
    const found = nodes.findLast(({ start }) => start <= offset);
    if (!found || offset - found.start >= found.node.data.length) return null;
    range.setStart(found.node, offset - found.start);
    range.setEnd(found.node, offset - found.start + 1);
    const rect = range.getBoundingClientRect();
    return rect.height > 0 ? rect : null;
  };
  const charAt = (offset: number) => {
    const found = nodes.findLast(({ start }) => start <= offset);
    return found ? (found.node.data[offset - found.start] ?? "") : "";
  };
  /** The first character at or after `offset` that is not white space, with its box. */
  const shownFrom = (offset: number, step = 1): { at: number; box: DOMRect } | null => {
    for (let at = offset; at >= 0 && at < total; at += step) {
      if (/\s/.test(charAt(at))) continue;
      const box = boxOf(at);
      if (box) return { at, box };
    }
    return null;
  };
  const first = shownFrom(0);
  const last = shownFrom(total - 1, -1);
  if (!first || !last) return null;
  const onLastLine = (box: DOMRect) => box.bottom > last.box.top + 1;
  let low = 0;
  let high = total;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    const found = shownFrom(middle);
    if (found === null || onLastLine(found.box)) high = middle;
    else low = found.at + 1;
  }
  const start = shownFrom(low);
  if (!start || start.at === 0 || !onLastLine(start.box) || Math.abs(start.box.left - first.box.left) > 1) return null;
  const before = shownFrom(start.at - 1, -1);
  return before && before.box.bottom <= start.box.top + 1 ? start.at : null;
}
