// The one dispatcher of user actions (shared/fleet/action-registry.ts): the keys (keys.ts), the
// views' buttons and cards, the palette and the tray (over the bridge, bridge-events.ts) all run an
// action by its id here, with its arguments (action-args.ts), so an action does one thing whichever
// way the user asked for it: its handler (action-handlers.ts). Excalidraw's executeAction(action,
// source, value) behind every surface.
import { type ActionId, actionSpec, keyHint } from "../../../shared/fleet/action-registry";
import type { ArgsOf, ResultOf } from "./action-args";
import { actionContext, currentAgent } from "./action-context";
import { type HandlerCall, type HandlerName, handlers, keyedDecision } from "./action-handlers";
import { useFleet } from "./store";

/** Where the user asked for an action. */
export type ActionSource = "keys" | "button" | "palette" | "tray";

/** Announced on `window` for each action run (tests and diagnostics watch it): which handler ran it. */
export const ACTION_RUN_EVENT = "t3fleet:command";
export interface ActionRun {
  id: ActionId;
  source: ActionSource;
  handler: string;
}

const HANDLERS: Record<ActionId, HandlerName> = {
  "palette.open": "togglePalette",
  "palette.close": "closePalette",
  "fleet.next-needs-you": "openNextNeedingYou",
  "fleet.search": "focusSearch",
  "fleet.down": "moveSelection",
  "fleet.up": "moveSelection",
  "fleet.expand": "expandOrCollapse",
  "fleet.collapse": "expandOrCollapse",
  "view.toggle": "toggleView",
  "view.set": "setView",
  "fleet.group-toggle": "toggleGrouping",
  "fleet.group": "setGrouping",
  "fleet.filter": "filter",
  "fleet.clear-filters": "clearFilters",
  "fleet.search-text": "searchFor",
  "fleet.toggle": "toggleRow",
  "fleet.toggle-older": "toggleOlder",
  "agent.open": "openAgent",
  "agent.close": "closeAgent",
  "agent.select": "selectAgent",
  "agent.accept": "decideApproval",
  "agent.accept-session": "decideApproval",
  "agent.decline": "decideApproval",
  "agent.decide": "decide",
  "agent.respond": "respond",
  "agent.send": "send",
  "agent.answer": "focusAnswer",
  "agent.acknowledge": "acknowledge",
  "agent.mark-reviewed": "markReviewed",
  "agent.snooze": "snooze",
  "agent.snooze-hour": "snooze",
  "agent.unsnooze": "unsnooze",
  "action.undo": "undoLast",
  "action.confirm": "confirm",
  "action.cancel": "cancel",
  "confirmation.dismiss": "dismissConfirmation",
  "failure.dismiss": "dismissFailure",
  "inbox.handled": "showHandled",
  "inbox.snoozed": "showSnoozed",
  "list.close": "closeList",
  "agent.interrupt": "interrupt",
  "agent.stop": "stop",
  "agent.open-in-t3": "openInT3",
  "agent.diff": "showDiff",
  "agent.message": "focusComposer",
  "agent.new": "openNewAgent",
  "agent.new-child": "openNewAgent",
  "delivery.release": "deliveryAction",
  "delivery.discard": "deliveryAction",
  "delivery.recheck": "deliveryAction",
  "delivery.cancel-queued": "deliveryAction",
  "link.open": "openLink",
  "diff.show": "showChanges",
  "diff.close": "closeChanges",
  "notice.dismiss": "dismissNotices",
  "creation.retry": "retryCreation",
  "creation.dismiss": "dismissCreation",
  "new-agent.close": "closeNewAgent",
  "machine.show": "showMachine",
  "machine.rename": "renameMachine",
  "machine.remove": "removeMachine",
  "machine.mute": "muteMachine",
  "machine.retry": "retryMachine",
  "machines.find": "findMachines",
  "machines.find-close": "closeFindMachines",
  "machines.scan": "scanForMachines",
  "machines.add-port": "lookAt",
  "machines.remove-port": "lookAt",
  "machines.add-ssh-host": "lookAt",
  "machines.remove-ssh-host": "lookAt",
  "new-agent.choose-machine": "chooseNewAgentMachine",
  "new-agent.create": "createAgent",
  "agent.forget-lost-send": "forgetLostSend",
  "machines.pair-found": "pairFoundMachine",
  "app.open": "shellOnly",
  "pairing.open": "openPairing",
  "pairing.close": "closePairing",
  "pairing.inspect": "inspectPairing",
  "pairing.confirm": "confirmPairing",
  "settings.open": "openSettings",
  "settings.close": "closeSettings",
  "settings.update": "updateSettings",
  "settings.older-than": "setOlderThan",
  "settings.browser-notifications": "enableBrowserNotifications",
  "notifications.pause": "pauseOrResumeNotifications",
  "notifications.resume": "pauseOrResumeNotifications",
  "app.quit": "shellOnly",
};

/** Actions that must reach the agent's T3 server. */
const NEEDS_T3: Partial<Record<ActionId, string>> = {
  "agent.accept": "A decision",
  "agent.accept-session": "A decision",
  "agent.decline": "A decision",
  "agent.answer": "An answer",
  "agent.interrupt": "An interrupt",
  "agent.stop": "Stopping the session",
};

/** An action that cannot reach T3 says why where the user acted, instead of doing nothing. */
function sayWhyUnreachable(id: ActionId, target?: string): void {
  const what = NEEDS_T3[id];
  const agent = currentAgent(target);
  if (!what || !agent) return;
  const state = useFleet.getState();
  const env = state.environments.get(agent.environmentId);
  if (!state.bridgeLostAt && env?.connection.phase === "online") return;
  const machine = env?.label ?? agent.environmentId;
  const why = state.bridgeLostAt ? "T3 Fleet's service is not reachable" : `${machine} is not online`;
  state.commandFailed(
    `agent:${agent.key}`,
    `${why}: ${what.toLowerCase()} cannot reach T3 now. It shows as of when it was last confirmed; try again once it is back.`,
  );
}

/**
 * `z` with nothing to take back says so where confirmations show, and why, instead of doing nothing:
 * the shown action is one T3 cannot reverse, or the last Undo ended with its confirmation.
 */
function sayNothingToUndo(): void {
  const state = useFleet.getState();
  const action = state.confirmation && !state.confirmation.text.startsWith(NOTHING_TO_UNDO) ? state.confirmation : null;
  const why = action
    ? "T3 cannot take that back."
    : `Undo lasts while an action's confirmation shows; a snooze can still be ended from the Snoozed list (${keyHint(actionSpec("inbox.snoozed"))}).`;
  state.confirmDone(`${NOTHING_TO_UNDO}: ${why}`, null);
}

const NOTHING_TO_UNDO = "Nothing to undo";

/** `x` on changes waiting for review says which key ends them, rather than doing nothing. */
function sayHowToReview(key: string): void {
  const how = actionSpec("agent.mark-reviewed");
  useFleet.getState().commandFailed(`agent:${key}`, `These changes are not a failure to acknowledge: ${how.label.toLowerCase()} with ${keyHint(how)}.`);
}

/** The agent an action's arguments name (a row's or a card's own), else none: the agent the user is on. */
function targetOf(args: unknown): string | undefined {
  return typeof args === "object" && args !== null && "key" in args && typeof args.key === "string" ? args.key : undefined;
}

/**
 * Runs an action when the registry enables it now, and gives back what its handler gave (a send's
 * outcome, an opening to wait on); nothing when it did not run. A decision key (a, A, d) pressed on
 * the list opens the selected agent instead, so a key decides only what is on screen; the palette
 * and the buttons name the decision themselves. A view that names the agent to open opens it even
 * before the fleet lists it (a new agent's receipt, components/CreationReceipts.tsx).
 */
export function dispatch<Id extends ActionId>(id: Id, source: ActionSource, args?: ArgsOf<Id>): ResultOf<Id> | undefined {
  const { openKey, selectedKey } = useFleet.getState();
  const target = targetOf(args);
  const enabled = (id === "agent.open" && target !== undefined) || actionSpec(id).enabled(actionContext(target));
  const handler: HandlerName | null =
    source === "keys" && keyedDecision(id) && selectedKey && openKey !== selectedKey ? "openSelectedFirst" : enabled ? HANDLERS[id] : null;
  if (!handler) {
    if (id === "action.undo") sayNothingToUndo();
    else if (id === "agent.acknowledge" && currentAgent(target)?.review) sayHowToReview(currentAgent(target)!.key);
    else sayWhyUnreachable(id, target);
    return undefined;
  }
  if (typeof window !== "undefined") window.dispatchEvent(new CustomEvent<ActionRun>(ACTION_RUN_EVENT, { detail: { id, source, handler } }));
  const run = handlers[handler] as (call: HandlerCall<unknown>) => unknown;
  return run({ id, agent: currentAgent(target), args }) as ResultOf<Id>;
}
