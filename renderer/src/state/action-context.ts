// What the registry's `enabled` rules read (shared/fleet/action-registry.ts), from the window's state
// now and the store's derived views (derived.ts): the dispatcher, the action buttons, the key hints and
// the palette all ask here, so an action is enabled alike wherever it shows.
import type { ActionContext } from "../../../shared/fleet/action-registry";
import { activeSnooze } from "../../../shared/fleet/snooze";
import type { AgentView } from "../../../shared/fleet/types";
import { selectGlance } from "./derived";
import { displayAgent } from "./selectors";
import { useFleet } from "./store";

/** The agent the user is on: the open one, else the selected one (or `target`, a row's or card's own agent). */
export function currentAgent(target?: string): AgentView | null {
  const { openKey, selectedKey, agents, bridgeLostAt } = useFleet.getState();
  const key = target ?? openKey ?? selectedKey;
  const agent = key ? agents.get(key) : undefined;
  return agent ? displayAgent(agent, bridgeLostAt) : null;
}

export function actionContext(target?: string): ActionContext {
  const state = useFleet.getState();
  const agent = currentAgent(target);
  const environment = agent && !state.bridgeLostAt ? (state.environments.get(agent.environmentId) ?? null) : null;
  return {
    agent,
    environment,
    agentPanelOpen: state.openKey !== null,
    machines: state.environments.size,
    needYou: selectGlance(state).needYou.length,
    notificationsPaused: state.settings?.notificationsPaused ?? false,
    grouping: state.grouping,
    undoable: state.confirmation?.undo != null,
    agentSnoozed: agent !== null && activeSnooze(agent, state.snoozed.get(agent.key), Date.now()) !== null,
  };
}
