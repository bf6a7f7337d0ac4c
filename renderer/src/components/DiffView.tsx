// The diff of an agent's turn or whole thread (issue 24): unified, each line coloured by its file's
// language with the transcript's highlighter (./highlighter.ts), and virtualized (only the lines in
// view are mounted, @tanstack/react-virtual), so a diff of 10,000 lines opens without freezing the
// page (bench/diff.bench.ts). A diff over the service's limit, a missing or failed checkpoint, or a
// read that failed says so, with the files the checkpoint lists. A line holding bidi or control
// characters shows each as a marker and is flagged, uncoloured (shared/fleet/diff-lines.ts).
import { useVirtualizer } from "@tanstack/react-virtual";
import type { ElementContent } from "hast";
import { memo, type ReactNode, useEffect, useMemo, useRef } from "react";
import type { ChangedFile } from "../../../shared/fleet/facts";
import { changesWords, filesOf, moreFilesWords, turnTotals, unlistedFilesOf } from "../../../shared/fleet/changes-usage";
import { type DiffLine, extensionOf, parseDiff, visibleSegments } from "../../../shared/fleet/diff-lines";
import { offlineWords } from "../../../shared/fleet/words";
import { diffView } from "../state/diff-view";
import { clockTime } from "../state/format";
import { useFleet } from "../state/store";
import { grammarOf, highlightLine, useGrammars } from "./highlighter";

const LINE_PX = 18;

function renderHast(nodes: ElementContent[]): ReactNode[] {
  return nodes.map((node, index) => {
    if (node.type === "text") return node.value;
    if (node.type !== "element") return null;
    const className = Array.isArray(node.properties.className) ? node.properties.className.join(" ") : undefined;
    return (
      <span key={index} className={className}>
        {renderHast(node.children)}
      </span>
    );
  });
}

/** Each line's coloured code, kept while the diff is shown: a line scrolled back into view is not highlighted again. */
const colouredLines = new WeakMap<DiffLine, ReactNode[]>();

function colouredCode(line: DiffLine, grammar: string | null): ReactNode[] | null {
  const cached = colouredLines.get(line);
  if (cached) return cached;
  const nodes = grammar ? highlightLine(grammar, line.text) : null;
  if (!nodes) return null;
  const rendered = renderHast(nodes);
  colouredLines.set(line, rendered);
  return rendered;
}

/** The line's text with each hidden character as a visible marker that names it. */
function MarkedText({ text }: { text: string }) {
  return visibleSegments(text).map((segment, index) =>
    segment.kind === "text" ? (
      segment.text
    ) : (
      <span key={index} className="diff-hidden-char" title={segment.name} data-testid="diff-hidden-char">
        {segment.marker}
      </span>
    ),
  );
}

const FLAG =
  "This line holds characters that are not shown as they act (bidi or control characters), marked here: the code may run in another order than it reads.";

const CodeLine = memo(function CodeLine({ line, grammar, ready, scrolling }: { line: DiffLine; grammar: string | null; ready: number; scrolling: boolean }) {
  void ready; // a new grammar version re-renders the line coloured
  if (line.hidden) {
    const header = line.kind === "file" || line.kind === "hunk" || line.kind === "meta";
    return (
      <div className={`diff-line diff-${line.kind} diff-flagged`} data-testid="diff-flagged-line" title={`${FLAG} ${line.hidden.join(", ")}`}>
        <span className="diff-flag" aria-label="Hidden characters">
          ⚠
        </span>
        {header ? null : (
          <>
            <span className="diff-number">{line.oldNumber ?? ""}</span>
            <span className="diff-number">{line.newNumber ?? ""}</span>
            <span className="diff-marker">{line.kind === "add" ? "+" : line.kind === "del" ? "−" : " "}</span>
          </>
        )}
        <code className="diff-code">
          <MarkedText text={line.text} />
        </code>
      </div>
    );
  }
  if (line.kind === "file") return <div className="diff-line diff-file">{line.text}</div>;
  if (line.kind === "hunk" || line.kind === "meta") return <div className={`diff-line diff-${line.kind}`}>{line.text}</div>;
  // While the diff scrolls, a line not coloured yet shows plain and is coloured once it rests: colouring
  // every line a fast scroll passes kept the page busy most of a core (bench/diff.bench.ts).
  const coloured = scrolling ? (colouredLines.get(line) ?? null) : colouredCode(line, grammar);
  const marker = line.kind === "add" ? "+" : line.kind === "del" ? "−" : " ";
  return (
    <div className={`diff-line diff-${line.kind}`}>
      <span className="diff-number">{line.oldNumber ?? ""}</span>
      <span className="diff-number">{line.newNumber ?? ""}</span>
      <span className="diff-marker">{marker}</span>
      <code className="diff-code">{coloured ?? line.text}</code>
    </div>
  );
});

function DiffLines({ text }: { text: string }) {
  const lines = useMemo(() => parseDiff(text), [text]);
  const grammars = useMemo(() => {
    const found = new Set<string>();
    for (const line of lines) if (line.kind === "file") found.add(grammarOf(extensionOf(line.path)) ?? "");
    found.delete("");
    return [...found];
  }, [lines]);
  const ready = useGrammars(grammars);
  const flagged = useMemo(() => lines.filter((line) => line.hidden).length, [lines]);
  const ref = useRef<HTMLDivElement>(null);
  // Fixed-height lines; a scroll renders in React's own batch, not synchronously per scroll event.
  const virtualizer = useVirtualizer({
    count: lines.length,
    getScrollElement: () => ref.current,
    estimateSize: () => LINE_PX,
    overscan: 8,
    useFlushSync: false,
  });
  const items = virtualizer.getVirtualItems();
  if (lines.length === 0) return <p className="diff-empty">T3 reports no changed lines for this range.</p>;
  return (
    <>
      {flagged ? (
        <p className="diff-hidden-warning" data-testid="diff-hidden-warning">
          ⚠ {flagged} {flagged === 1 ? "line holds" : "lines hold"} bidi or control characters, shown as markers such as &lt;U+202E&gt;: the code may run in
          another order than it reads here.
        </p>
      ) : null}
      <div className="diff-lines" ref={ref} data-testid="diff-lines" tabIndex={0} role="region" aria-label="Diff">
        <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
          {/* One block moved to the first line in view, its lines in flow (each LINE_PX high): a scroll moves one box, not one per line. */}
          <div style={{ position: "absolute", top: 0, left: 0, right: 0, transform: `translateY(${items[0]?.start ?? 0}px)` }}>
            {items.map((item) => {
              const line = lines[item.index]!;
              return (
                <CodeLine
                  key={item.key}
                  line={line}
                  grammar={line.kind === "file" ? null : grammarOf(extensionOf(line.path))}
                  ready={ready}
                  scrolling={virtualizer.isScrolling}
                />
              );
            })}
          </div>
        </div>
      </div>
    </>
  );
}

/** Files listed at most in one list; the rest are counted ("and 99,900 more files"), so a turn of 100,000 files mounts a bounded list (issue 43). */
export const FILES_LISTED = 100;

/** A list of changed files, at most FILES_LISTED, then how many more there are: those past the cap and `unlisted`, the ones T3 counted and the fleet does not keep. */
export function FileList({ files, unlisted = 0 }: { files: readonly ChangedFile[]; unlisted?: number }) {
  const listed = files.length > FILES_LISTED ? files.slice(0, FILES_LISTED) : files;
  const more = moreFilesWords(files.length - listed.length + unlisted);
  if (listed.length === 0 && !more) return null;
  return (
    <>
      {listed.length ? (
        <ul className="changed-files" data-testid="changed-files">
          {listed.map((file, index) => (
            <li key={index}>
              <span className="file-kind">{file.kind}</span> <span className="file-path">{file.path}</span>{" "}
              <span className="additions">+{file.additions ?? " not reported"}</span> <span className="deletions">−{file.deletions ?? " not reported"}</span>
            </li>
          ))}
        </ul>
      ) : null}
      {more ? (
        <p className="more-files" data-testid="more-files">
          {more}
        </p>
      ) : null}
    </>
  );
}

/** The diff overlay: shown while the diff slice holds one; Esc or Close ends it. */
export function DiffView() {
  const shown = useFleet((state) => state.diff);
  const agent = useFleet((state) => (shown ? state.agents.get(shown.key) : undefined));
  const env = useFleet((state) => (shown ? state.environments.get(shown.key.slice(0, shown.key.indexOf("/"))) : undefined));
  const closeRef = useRef<HTMLButtonElement>(null);
  // Focus moves into the diff; Esc closes it (App.tsx closes what is on top).
  useEffect(() => {
    if (shown) closeRef.current?.focus();
  }, [shown?.key, shown?.scope]); // eslint-disable-line react-hooks/exhaustive-deps
  if (!shown) return null;
  const turns = agent?.changes ?? [];
  const title = shown.scope.kind === "turn" ? `Turn ${shown.scope.turnCount}` : "The whole thread";
  const result = shown.result;
  const inRange = (from: number, to: number) => turns.filter((turn) => turn.turnCount > from && turn.turnCount <= to);
  let body: ReactNode;
  if (shown.error) body = <p className="diff-problem">The diff could not be read: {shown.error}</p>;
  else if (!result) {
    // The files are known before T3's diff is: shown at once (a large diff takes T3 a while to give).
    const reading = shown.scope.kind === "turn" ? inRange(shown.scope.turnCount - 1, shown.scope.turnCount) : turns;
    body = (
      <>
        <p className="diff-loading">Reading the diff from T3…</p>
        <FileList files={filesOf(reading)} unlisted={unlistedFilesOf(reading)} />
      </>
    );
  } else if (result.state === "ready") body = <DiffLines text={result.text} />;
  else
    body = (
      <>
        <p className="diff-problem" data-testid="diff-problem">
          {result.state === "too-large"
            ? `This diff is too large to show here (${result.size.toLocaleString("en")} characters). The files it changes:`
            : result.offline
              ? // Named and as of its last confirmation; state/diff-view.ts reads it again once the machine is back.
                `${offlineWords(env?.label ?? "Its machine", env?.connection, clockTime)}: the diff is read from T3, so it shows here by itself once ${env?.label ?? "the machine"} is back.`
              : result.reason}
        </p>
        <FileList files={result.files} unlisted={unlistedFilesOf(inRange(result.fromTurnCount, result.toTurnCount))} />
      </>
    );
  return (
    <div className="dialog-backdrop">
      <div className="dialog diff-dialog" role="dialog" aria-modal="true" aria-labelledby="diff-title" data-testid="diff-view">
        {/* A div, not a header: in a dialog a header is a second, unnamed banner (axe, issue 40 point 8). */}
        <div className="diff-header">
          <h2 id="diff-title">
            {agent?.title ?? "Agent"} · {title}
          </h2>
          <nav className="diff-scopes" aria-label="Which changes">
            {turns.map((turn) => (
              <button
                key={turn.turnCount}
                type="button"
                aria-pressed={shown.scope.kind === "turn" && shown.scope.turnCount === turn.turnCount}
                onClick={() => void diffView.show(shown.key, { kind: "turn", turnCount: turn.turnCount })}
                title={changesWords({ status: turn.status, ...turnTotals(turn) })}
              >
                Turn {turn.turnCount}
              </button>
            ))}
            <button type="button" aria-pressed={shown.scope.kind === "thread"} onClick={() => void diffView.show(shown.key, { kind: "thread" })}>
              Whole thread
            </button>
          </nav>
          <button type="button" ref={closeRef} onClick={() => diffView.close()}>
            Close
          </button>
        </div>
        {body}
      </div>
    </div>
  );
}
