// The diff of an agent's turn or whole thread (issue 24): unified, each line coloured by its file's
// language with the transcript's highlighter (./highlighter.ts), and virtualized (only the lines in
// view are in the page, ./diff-rows.ts), so a diff of 10,000 lines opens without freezing the page
// and scrolls end to end without keeping a core busy (bench/diff.bench.ts). A diff over the service's limit, a missing or failed checkpoint, or a
// read that failed says so, with the files the checkpoint lists. A line holding bidi or control
// characters shows each as a marker and is flagged, uncoloured (shared/fleet/diff-lines.ts).
import { type ReactNode, useEffect, useLayoutEffect, useMemo, useRef } from "react";
import type { ChangedFile } from "../../../shared/fleet/facts";
import { changesWords, filesOf, moreFilesWords, turnTotals, unlistedFilesOf } from "../../../shared/fleet/changes-usage";
import { type DiffLine, extensionOf, parseDiff } from "../../../shared/fleet/diff-lines";
import { offlineWords } from "../../../shared/fleet/words";
import { dispatch } from "../state/dispatch";
import { clockTime } from "../state/format";
import { useFleet } from "../state/store";
import { DiffRows, LINE_PX } from "./diff-rows";
import { grammarOf, useGrammars } from "./highlighter";

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
  const scrollerRef = useRef<HTMLDivElement>(null);
  const rowsRef = useRef<HTMLDivElement>(null);
  const diffRows = useRef<DiffRows | null>(null);
  // The rows are the page's own, outside React's rendering (./diff-rows.ts); the grammar each line's file needs, once per file.
  useLayoutEffect(() => {
    if (!scrollerRef.current || !rowsRef.current) return;
    const grammarByPath = new Map<string, string | null>();
    const grammarOfLine = (line: DiffLine) => {
      if (!grammarByPath.has(line.path)) grammarByPath.set(line.path, grammarOf(extensionOf(line.path)));
      return grammarByPath.get(line.path)!;
    };
    const rows = new DiffRows(scrollerRef.current, rowsRef.current, lines, grammarOfLine);
    diffRows.current = rows;
    return () => {
      rows.dispose();
      diffRows.current = null;
    };
  }, [lines]);
  // A grammar that becomes ready colours the lines in view.
  useEffect(() => diffRows.current?.colour(), [ready]);
  if (lines.length === 0) return <p className="diff-empty">T3 reports no changed lines for this range.</p>;
  return (
    <>
      {flagged ? (
        <p className="diff-hidden-warning" data-testid="diff-hidden-warning">
          ⚠ {flagged} {flagged === 1 ? "line holds" : "lines hold"} bidi or control characters, shown as markers such as &lt;U+202E&gt;: the code may run in
          another order than it reads here.
        </p>
      ) : null}
      <div className="diff-lines" ref={scrollerRef} data-testid="diff-lines" tabIndex={0} role="region" aria-label="Diff">
        <div className="diff-rows" ref={rowsRef} style={{ height: lines.length * LINE_PX }} />
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
                onClick={() => dispatch("diff.show", "button", { key: shown.key, scope: { kind: "turn", turnCount: turn.turnCount } })}
                title={changesWords({ status: turn.status, ...turnTotals(turn) })}
              >
                Turn {turn.turnCount}
              </button>
            ))}
            <button
              type="button"
              aria-pressed={shown.scope.kind === "thread"}
              onClick={() => dispatch("diff.show", "button", { key: shown.key, scope: { kind: "thread" } })}
            >
              Whole thread
            </button>
          </nav>
          <button type="button" ref={closeRef} onClick={() => dispatch("diff.close", "button")}>
            Close
          </button>
        </div>
        {body}
      </div>
    </div>
  );
}
