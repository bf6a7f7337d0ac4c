// The lines of a diff as the diff view shows them (DiffView.tsx), kept in the page by hand rather
// than by React: a fast scroll brings some thirty new lines into view a frame, and mounting each as
// React elements, unmounting the ones that left and moving the block they sat in kept the page's
// main thread busy most of a core (bench/diff.bench.ts). Only the lines in view, and a few either
// side, are in the page; each sits at its own place in the scroll content (the rows' box is pushed
// down by padding, not moved), so a line that stays in view is neither laid out nor painted again.
// A line coming into view while the diff scrolls shows plain unless it was coloured before; the
// lines in view are coloured once the scroll rests. A line holding bidi or control characters shows
// each as a marker and is flagged, uncoloured (shared/fleet/diff-lines.ts).
import type { ElementContent } from "hast";
import { type DiffLine, visibleSegments } from "../../../shared/fleet/diff-lines";
import { highlightLine } from "./highlighter";

/** Every line's height (renderer/src/styles/changes.css .diff-line). */
export const LINE_PX = 18;
/** Lines kept in the page past each edge of the view, so a slow scroll shows no empty edge. */
const OVERSCAN = 8;
/** How long the diff must not scroll before the lines in view are coloured. */
const REST_MS = 150;

const FLAG =
  "This line holds characters that are not shown as they act (bidi or control characters), marked here: the code may run in another order than it reads.";

/** Each line's coloured code, kept while its diff is shown: a line scrolled back into view is not highlighted again. */
const colouredCode = new WeakMap<DiffLine, HTMLElement>();

function element(tag: string, className: string, text?: string): HTMLElement {
  const made = document.createElement(tag);
  made.className = className;
  if (text) made.textContent = text;
  return made;
}

function appendHast(parent: Node, nodes: readonly ElementContent[]): void {
  for (const node of nodes) {
    if (node.type === "text") parent.appendChild(document.createTextNode(node.value));
    else if (node.type === "element") {
      const className = Array.isArray(node.properties.className) ? node.properties.className.join(" ") : "";
      const span = element("span", className);
      appendHast(span, node.children);
      parent.appendChild(span);
    }
  }
}

function markerOf(line: DiffLine): string {
  return line.kind === "add" ? "+" : line.kind === "del" ? "−" : " ";
}

/** A number column: its class says how many digits the number has, so the column keeps its width (changes.css .diff-number). */
function numberColumn(number: number | null): HTMLElement {
  if (number === null) return element("span", "diff-number");
  const digits = number.toString();
  return element("span", `diff-number diff-w${Math.min(digits.length, 7)}`, digits);
}

/** The line's number columns and +/− marker. */
function appendGutter(row: HTMLElement, line: DiffLine): void {
  row.append(numberColumn(line.oldNumber), numberColumn(line.newNumber), element("span", "diff-marker", markerOf(line)));
}

/** A line holding hidden characters: flagged in the margin, each character a marker that names it. */
function flaggedRow(line: DiffLine): HTMLElement {
  const row = element("div", `diff-line diff-${line.kind} diff-flagged`);
  row.dataset.testid = "diff-flagged-line";
  row.title = `${FLAG} ${line.hidden!.join(", ")}`;
  const flag = element("span", "diff-flag", "⚠");
  flag.setAttribute("aria-label", "Hidden characters");
  row.appendChild(flag);
  if (line.kind !== "file" && line.kind !== "hunk" && line.kind !== "meta") appendGutter(row, line);
  const code = element("code", "diff-code");
  for (const segment of visibleSegments(line.text)) {
    if (segment.kind === "text") code.appendChild(document.createTextNode(segment.text));
    else {
      const marker = element("span", "diff-hidden-char", segment.marker);
      marker.title = segment.name;
      marker.dataset.testid = "diff-hidden-char";
      code.appendChild(marker);
    }
  }
  row.appendChild(code);
  return row;
}

/** A line's row: coloured when its code was coloured before, plain otherwise. */
function rowOf(line: DiffLine): HTMLElement {
  if (line.hidden) return flaggedRow(line);
  if (line.kind === "file" || line.kind === "hunk" || line.kind === "meta") return element("div", `diff-line diff-${line.kind}`, line.text);
  const row = element("div", `diff-line diff-${line.kind}`);
  appendGutter(row, line);
  const coloured = colouredCode.get(line);
  row.appendChild(coloured ? coloured.cloneNode(true) : element("code", "diff-code", line.text));
  return row;
}

/** Whether the line's code may be coloured: code lines free of hidden characters. */
function colourable(line: DiffLine): boolean {
  return !line.hidden && (line.kind === "add" || line.kind === "del" || line.kind === "context");
}

/**
 * The rows of one diff inside `scroller` (which scrolls) and `rows` (the box inside it that holds
 * them, at the top of content as high as every line). `grammarOf` names a line's grammar.
 */
export class DiffRows {
  /** The lines in the page: [first, end), in order in `rows`. */
  private first = 0;
  private end = 0;
  private viewHeight: number;
  private scrolling = false;
  private restTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly resized: ResizeObserver;

  constructor(
    private readonly scroller: HTMLElement,
    private readonly rows: HTMLElement,
    private readonly lines: readonly DiffLine[],
    private readonly grammarOf: (line: DiffLine) => string | null,
  ) {
    this.viewHeight = scroller.clientHeight;
    scroller.addEventListener("scroll", this.scrolled, { passive: true });
    this.resized = new ResizeObserver(() => {
      this.viewHeight = scroller.clientHeight;
      this.place();
    });
    this.resized.observe(scroller);
    this.place();
    this.colour();
  }

  /** Colours the lines in view whose grammar is loaded, unless the diff is scrolling (then once it rests). */
  colour(): void {
    if (this.scrolling) return;
    let row = this.rows.firstElementChild;
    for (let index = this.first; index < this.end && row; index++, row = row.nextElementSibling) {
      const line = this.lines[index]!;
      if (!colourable(line) || colouredCode.has(line)) continue;
      const grammar = this.grammarOf(line);
      const nodes = grammar ? highlightLine(grammar, line.text) : null;
      if (!nodes) continue;
      const code = element("code", "diff-code");
      appendHast(code, nodes);
      colouredCode.set(line, code);
      row.lastElementChild!.replaceWith(code.cloneNode(true));
    }
  }

  dispose(): void {
    this.scroller.removeEventListener("scroll", this.scrolled);
    this.resized.disconnect();
    clearTimeout(this.restTimer);
    this.rows.replaceChildren();
  }

  private readonly scrolled = () => {
    this.scrolling = true;
    clearTimeout(this.restTimer);
    this.restTimer = setTimeout(() => {
      this.scrolling = false;
      this.colour();
    }, REST_MS);
    this.place();
  };

  /** Puts in the page the lines in view and OVERSCAN either side, keeping the rows already there. */
  private place(): void {
    const top = this.scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / LINE_PX) - OVERSCAN);
    const end = Math.min(this.lines.length, Math.ceil((top + this.viewHeight) / LINE_PX) + OVERSCAN);
    if (first === this.first && end === this.end) return;
    if (first >= this.end || end <= this.first) {
      this.rows.replaceChildren(this.build(first, end));
    } else {
      for (let index = this.first; index < first; index++) this.rows.firstElementChild!.remove();
      for (let index = end; index < this.end; index++) this.rows.lastElementChild!.remove();
      if (first < this.first) this.rows.prepend(this.build(first, this.first));
      if (end > this.end) this.rows.append(this.build(this.end, end));
    }
    this.first = first;
    this.end = end;
    this.rows.style.paddingTop = `${first * LINE_PX}px`;
  }

  private build(from: number, to: number): DocumentFragment {
    const fragment = document.createDocumentFragment();
    for (let index = from; index < to; index++) fragment.appendChild(rowOf(this.lines[index]!));
    return fragment;
  }
}
