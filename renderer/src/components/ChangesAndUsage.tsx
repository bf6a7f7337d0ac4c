// The agent's changes per turn and its token use (issue 24), shown without expanding anything
// (issue 40 point 2): one line with the context fill, the last turn's (or model request's) tokens
// and the tokens T3 reported for the thread ("not reported" where it did not); one line with the
// latest turn's changes, its diff one click (or the `c` key, the registry's "agent.diff") away, the
// whole thread's diff, and every turn's files folded behind "All turns". A missing or failed
// checkpoint says so.
import { useState } from "react";
import { changesWords, contextWords, nearContextLimit, tokenWords, turnTotals, unlistedFilesOf } from "../../../shared/fleet/changes-usage";
import type { TokenCounts, TurnChanges } from "../../../shared/fleet/facts";
import type { AgentView } from "../../../shared/fleet/types";
import { dispatch } from "../state/dispatch";
import { contextWarningPercent } from "../state/selectors";
import { useFleet } from "../state/store";
import { ActionButton } from "./ActionButton";
import { FileList } from "./DiffView";

function turnWords(turn: TurnChanges): string {
  if (turn.status === "missing") return "T3 has no checkpoint for this turn (interrupted, or the workspace is not a git repository)";
  if (turn.status === "error") return "T3 could not capture this turn's checkpoint";
  return changesWords({ status: turn.status, ...turnTotals(turn) });
}

/** A token figure's total, its breakdown (input, cached, output, reasoning) on hover: the line stays one line. */
function Tokens({ counts, testId }: { counts: TokenCounts | null | undefined; testId: string }) {
  const words = tokenWords(counts);
  const total = words.replace(/ \(.*\)$/, "");
  return (
    <span data-testid={testId} title={words === total ? undefined : words}>
      {total}
    </span>
  );
}

/** The agent's figures, each saying what it is: the context fill (what the window holds, never use), the last turn's tokens and the thread's tokens T3 reported. */
function UsageLine({ agent, near }: { agent: AgentView; near: boolean }) {
  return (
    <p className="figure-line" data-testid="usage-line">
      <span className="figure">
        <span className="figure-label">Context fill</span>{" "}
        <span data-testid="context-fill" className={near ? "context-near-limit" : undefined}>
          {contextWords(agent.usage)}
        </span>
        {near ? (
          <span className="context-near-limit" data-testid="context-warning" title="Start a new thread, or compact it in T3">
            {" "}
            · near its limit
          </span>
        ) : null}
      </span>
      <span className="figure">
        <span className="figure-label">{agent.usage?.lastScope === "request" ? "Last model request" : "Last turn"}</span>{" "}
        <Tokens counts={agent.usage?.lastTurn} testId="last-turn-tokens" />
      </span>
      <span className="figure">
        <span className="figure-label">Thread</span> <Tokens counts={agent.usage?.thread} testId="thread-tokens" />{" "}
        <span className="figure-label">T3 reported</span>
      </span>
    </p>
  );
}

/** Turns listed in the open fold, newest first; earlier ones are reached from the diff view's turn buttons. */
const TURNS_LISTED = 50;

/** Every turn's files, newest turn first; each turn's list is at most TURN_FILES_KEPT with the rest counted. */
function TurnList({ agent, turns }: { agent: AgentView; turns: readonly TurnChanges[] }) {
  const listed = turns.slice(-TURNS_LISTED).reverse();
  const earlier = turns.length - listed.length;
  return (
    <>
      <ol className="turn-changes" reversed>
        {listed.map((turn) => (
          <li key={turn.turnCount} data-testid="turn-changes">
            <span>
              Turn {turn.turnCount}: {turnWords(turn)}
            </span>{" "}
            {turn.status === "ready" ? (
              <button type="button" onClick={() => dispatch("diff.show", "button", { key: agent.key, scope: { kind: "turn", turnCount: turn.turnCount } })}>
                Diff
              </button>
            ) : null}
            <FileList files={turn.files} unlisted={unlistedFilesOf([turn])} />
          </li>
        ))}
      </ol>
      {earlier > 0 ? (
        <p className="turn-changes-earlier" data-testid="turn-changes-earlier">
          and {earlier.toLocaleString("en-US")} earlier {earlier === 1 ? "turn" : "turns"}: each has its button in the diff view
        </p>
      ) : null}
    </>
  );
}

/** The latest turn's changes with its diff, the whole thread's diff, and every turn's files behind one fold. */
function ChangesLine({ agent, turns }: { agent: AgentView; turns: readonly TurnChanges[] }) {
  const latest = turns.at(-1)!;
  const [open, setOpen] = useState(false);
  return (
    <div className="figure-line" data-testid="changes-line">
      <span className="figure">
        <span className="figure-label">Turn {latest.turnCount} changes</span> <span data-testid="latest-changes">{turnWords(latest)}</span>
      </span>
      <ActionButton id="agent.diff" testId="show-diff" label="Diff" />
      <button type="button" data-testid="thread-diff" onClick={() => dispatch("diff.show", "button", { key: agent.key, scope: { kind: "thread" } })}>
        Whole thread's diff
      </button>
      <details className="panel-changes" data-testid="changes-usage" onToggle={(event) => setOpen(event.currentTarget.open)}>
        <summary>All turns ({turns.length})</summary>
        {/* Rendered only while open: a closed fold costs nothing, whatever the turns hold (issue 43). */}
        {open ? <TurnList agent={agent} turns={turns} /> : null}
      </details>
    </div>
  );
}

/** The agent's figures, unexpanded: its usage, and its changes when it has any. */
export function ChangesAndUsage({ agent }: { agent: AgentView }) {
  const warningPercent = useFleet(contextWarningPercent);
  const turns = agent.changes ?? [];
  const near = nearContextLimit(agent, warningPercent);
  return (
    <div className="panel-figures" data-testid="agent-figures">
      <UsageLine agent={agent} near={near} />
      {turns.length ? <ChangesLine agent={agent} turns={turns} /> : null}
    </div>
  );
}
