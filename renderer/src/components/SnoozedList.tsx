// The snoozed agents (issue 25 point 3): each with its machine, when it wakes and why (a time, or
// until what it needs changes) and who keeps the snooze; Unsnooze wakes it (through T3 where T3 holds it).
import { snoozedAgents, wakeDescription } from "../../../shared/fleet/snooze";
import { dispatch } from "../state/dispatch";
import { useFleetFacts } from "../state/fleet-facts";
import { clockTime } from "../state/format";
import { useFleet } from "../state/store";
import { PlaceError, useNow } from "./common";
import { ListDialog } from "./ListDialog";
import { needWords } from "./Inbox";

export function SnoozedList() {
  const facts = useFleetFacts();
  const own = useFleet((s) => s.snoozed);
  const environments = useFleet((s) => s.environments);
  const now = useNow();
  const list = snoozedAgents(facts.agents.values(), own, now);
  return (
    <ListDialog title="Snoozed" testId="snoozed-list">
      {list.length === 0 ? (
        <p className="hint" data-testid="snoozed-empty">
          Nothing is snoozed. Snooze puts an agent aside from the inbox (s until it changes, Shift+S for an hour).
        </p>
      ) : (
        <ul className="action-list" aria-label="Snoozed agents, soonest to wake first">
          {list.map(({ agent, snooze }) => (
            <li key={agent.key} data-testid="snoozed-entry" data-key={agent.key}>
              <span className="action-list-main">
                <strong>{agent.title}</strong> on {environments.get(agent.environmentId)?.label ?? agent.environmentId}:{" "}
                {needWords(agent, now, environments.get(agent.environmentId)?.label)}
                <span className="hint" data-testid="snoozed-wake">
                  {" "}
                  · {wakeDescription(snooze, clockTime)}
                </span>
              </span>
              <button
                type="button"
                data-testid="unsnooze"
                aria-label={`Unsnooze ${agent.title}`}
                onClick={() => dispatch("agent.unsnooze", "button", { key: agent.key })}
              >
                Unsnooze
              </button>
              <PlaceError place={`agent:${agent.key}`} />
            </li>
          ))}
        </ul>
      )}
    </ListDialog>
  );
}
