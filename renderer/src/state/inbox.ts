// The inbox as the window shows it, and Linear's triage: after an item is handled from the inbox,
// its next item opens.
import { needClass, needsYou } from "../../../shared/fleet/needs";
import type { AgentView } from "../../../shared/fleet/types";
import { needFingerprint } from "../../../shared/fleet/views";
import { selectInbox } from "./derived";
import type { Inbox } from "./selectors";
import { focusTargets, focusWhenStill } from "./focus";
import { navigation } from "./navigation";
import { useFleet, type FleetState } from "./store";

/** The inbox as the window shows it now (the pane's filters and snoozes). */
export function currentInbox(): Inbox {
  return selectInbox(useFleet.getState());
}

export const inboxKeys = (): string[] => currentInbox().items.map((agent) => agent.key);

/**
 * Agents handled a moment ago, by what they needed then. The service answers an action before its
 * view of the agent reaches the page (that lands on the next frame), so an agent handled just before
 * may still read "needs you" when the next one is handled: it is never the next item. Each is let go
 * once its view needs nothing or something else.
 */
const justHandled = new Map<string, string>();
let stopWatching: (() => void) | undefined;

const needOf = (agent: AgentView) => `${needClass(agent)}|${needFingerprint(agent)}`;

function noteHandled(key: string): void {
  const agent = useFleet.getState().agents.get(key);
  if (!agent || !needsYou(agent)) return;
  justHandled.set(key, needOf(agent));
  stopWatching ??= useFleet.subscribe(letGoSettled);
}

function letGoSettled(state: FleetState): void {
  for (const [key, need] of justHandled) {
    const agent = state.agents.get(key);
    if (!agent || !needsYou(agent) || needOf(agent) !== need) justHandled.delete(key);
  }
  if (justHandled.size > 0) return;
  stopWatching?.();
  stopWatching = undefined;
}

/** After an answer, an approval, an acknowledgement or a snooze from the inbox (`before`: its keys then), its next item opens. */
export function advanceInbox(handledKey: string, before: string[]): void {
  const state = useFleet.getState();
  noteHandled(handledKey);
  if (state.view !== "inbox" || state.openKey !== handledKey || !before.includes(handledKey)) return;
  // What was handled may still read "needs you" until its server's view arrives; it is not offered again.
  const left = new Set(inboxKeys().filter((key) => !justHandled.has(key)));
  left.delete(handledKey);
  const target = before.slice(before.indexOf(handledKey) + 1).find((key) => left.has(key)) ?? [...left][0];
  if (target) void navigation.openAgent(target).then(focusWhenStill("panel"));
  else {
    navigation.closeAgent();
    focusTargets.pane?.();
  }
}
