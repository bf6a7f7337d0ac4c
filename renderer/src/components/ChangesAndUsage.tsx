// The agent's changes per turn and its token use (issue 24): each turn's files (path, kind, +/−)
// with its diff one click (or the `c` key, the registry's "agent.diff") away, the whole thread's
// diff, and the context fill, last-turn and thread tokens as T3 reported them ("not reported" where
// it did not). A missing or failed checkpoint says so.
import { changesWords, contextWords, nearContextLimit, tokenWords } from "../../../shared/fleet/changes-usage";
import type { TurnChanges } from "../../../shared/fleet/facts";
import type { AgentView } from "../../../shared/fleet/types";
import { diffView } from "../state/diff-view";
import { useFleet } from "../state/store";
import { CommandButton } from "./CommandButton";
import { FileList } from "./DiffView";

function turnWords(turn: TurnChanges): string {
  const additions = turn.files.reduce((sum, file) => sum + file.additions, 0);
  const deletions = turn.files.reduce((sum, file) => sum + file.deletions, 0);
  if (turn.status === "missing") return "T3 has no checkpoint for this turn (interrupted, or the workspace is not a git repository)";
  if (turn.status === "error") return "T3 could not capture this turn's checkpoint";
  return changesWords({ status: turn.status, files: turn.files.length, additions, deletions });
}

export function ChangesAndUsage({ agent }: { agent: AgentView }) {
  const warningPercent = useFleet((s) => s.contextWarningPercent);
  const turns = agent.changes ?? [];
  const near = nearContextLimit(agent, warningPercent);
  return (
    <details className="panel-changes" data-testid="changes-usage" open={turns.length > 0 || near}>
      <summary>
        Changes and usage
        {turns.length ? ` · latest turn: ${turnWords(turns.at(-1)!)}` : ""}
      </summary>
      <dl className="usage" data-testid="usage">
        <dt>Context</dt>
        <dd className={near ? "context-near-limit" : undefined} data-testid="context-fill">
          {contextWords(agent.usage)}
          {near ? " — near its limit: start a new thread or compact it in T3" : ""}
        </dd>
        <dt>Last turn</dt>
        <dd data-testid="last-turn-tokens">{agent.usage ? tokenWords(agent.usage.lastTurn) : "not reported"}</dd>
        <dt>Thread</dt>
        <dd data-testid="thread-tokens">{agent.usage ? tokenWords(agent.usage.thread) : "not reported"}</dd>
      </dl>
      {turns.length === 0 ? (
        <p className="hint" data-testid="no-changes">
          T3 has reported no file changes for this agent (it reports them per turn in a git workspace).
        </p>
      ) : (
        <>
          <div className="panel-actions">
            <CommandButton id="agent.diff" testId="show-diff" label="Latest turn's diff" />
            <button type="button" data-testid="thread-diff" onClick={() => void diffView.show(agent.key, { kind: "thread" })}>
              Whole thread's diff
            </button>
          </div>
          <ol className="turn-changes" reversed>
            {[...turns].reverse().map((turn) => (
              <li key={turn.turnCount} data-testid="turn-changes">
                <span>
                  Turn {turn.turnCount}: {turnWords(turn)}
                </span>{" "}
                {turn.status === "ready" ? (
                  <button type="button" onClick={() => void diffView.show(agent.key, { kind: "turn", turnCount: turn.turnCount })}>
                    Diff
                  </button>
                ) : null}
                <FileList files={turn.files} />
              </li>
            ))}
          </ol>
        </>
      )}
    </details>
  );
}
