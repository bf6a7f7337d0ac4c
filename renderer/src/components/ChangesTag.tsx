// The latest turn's changes on a tree row or inbox item ("3 files +40 −2"), and a flag when the agent
// is near its context limit and will not compact (the share is a setting, default 90 %).
import { changesWords, contextPercent, latestChanges, nearContextLimit } from "../../../shared/fleet/changes-usage";
import type { AgentView } from "../../../shared/fleet/types";
import { contextWarningPercent } from "../state/selectors";
import { useFleet } from "../state/store";

export function ChangesTag({ agent }: { agent: AgentView }) {
  const warningPercent = useFleet(contextWarningPercent);
  const latest = latestChanges(agent);
  const near = nearContextLimit(agent, warningPercent);
  if (!latest && !near) return null;
  return (
    <>
      {latest ? (
        <span className="changes-tag" data-testid="changes-tag" title={`Turn ${latest.turnCount}'s changes (c shows the diff)`}>
          {changesWords(latest)}
        </span>
      ) : null}
      {near ? (
        <span className="tag context-near-limit" data-testid="context-near-limit" title="Near its context limit, and its provider will not compact">
          context {contextPercent(agent.usage)} %
        </span>
      ) : null}
    </>
  );
}
