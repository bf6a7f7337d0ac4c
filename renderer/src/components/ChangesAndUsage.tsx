// The agent's changes per turn and its token use (issue 24): each turn's files (path, kind, +/−)
// with its diff one click (or the `c` key, the registry's "agent.diff") away, the whole thread's
// diff, and the context fill, last-turn and thread tokens as T3 reported them ("not reported" where
// it did not), in the agent's Details. A missing or failed checkpoint says so. Folded by default:
// the transcript keeps its room on a phone.
import { changesWords, contextWords, lineTotals, nearContextLimit, tokenWords } from "../../../shared/fleet/changes-usage";
import type { TurnChanges } from "../../../shared/fleet/facts";
import type { AgentView } from "../../../shared/fleet/types";
import { diffView } from "../state/diff-view";
import { contextWarningPercent } from "../state/selectors";
import { useFleet } from "../state/store";
import { CommandButton } from "./CommandButton";
import { FileList } from "./DiffView";

function turnWords(turn: TurnChanges): string {
  if (turn.status === "missing") return "T3 has no checkpoint for this turn (interrupted, or the workspace is not a git repository)";
  if (turn.status === "error") return "T3 could not capture this turn's checkpoint";
  return changesWords({ status: turn.status, files: turn.files.length, ...lineTotals(turn.files) });
}

/**
 * The agent's token figures as rows of its Details list, each saying what it is: the context fill
 * (what the window holds, never use), the last turn's or model request's tokens, and the tokens T3
 * reported for the thread ("not reported" where T3 gave none).
 */
export function UsageRows({ agent }: { agent: AgentView }) {
  return (
    <>
      <dt>Context fill</dt>
      <dd data-testid="context-fill">{contextWords(agent.usage)}</dd>
      <dt>{agent.usage?.lastScope === "request" ? "Last model request" : "Last turn tokens"}</dt>
      <dd data-testid="last-turn-tokens">{agent.usage ? tokenWords(agent.usage.lastTurn) : "not reported"}</dd>
      <dt>Thread tokens T3 reported</dt>
      <dd data-testid="thread-tokens">{agent.usage ? tokenWords(agent.usage.thread) : "not reported"}</dd>
    </>
  );
}

/** Each turn's changes with their diffs, and the near-limit warning; nothing when there is neither (the usage is in Details). */
export function ChangesAndUsage({ agent }: { agent: AgentView }) {
  const warningPercent = useFleet(contextWarningPercent);
  const turns = agent.changes ?? [];
  const near = nearContextLimit(agent, warningPercent);
  if (turns.length === 0 && !near) return null;
  return (
    <details className="panel-changes" data-testid="changes-usage">
      <summary>
        {turns.length ? `Changes · latest turn: ${turnWords(turns.at(-1)!)}` : "Context"}
        {near ? (
          <span className="context-near-limit" data-testid="context-warning">
            {" "}
            · context {contextWords(agent.usage)}: near its limit, start a new thread or compact it in T3
          </span>
        ) : null}
      </summary>
      {turns.length ? (
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
      ) : null}
    </details>
  );
}
