// The one registry of user actions: every intent the window answers (a key, a button, a card's
// decision, a menu item, the palette, the tray) has an id, a label, its keys and when it is enabled
// here, so an action has one name and one key everywhere. Pure: what an action does lives in the
// window's one dispatcher (renderer/src/state/dispatch.ts), which takes its arguments; the tray sends
// it the id (electron/main/tray-commands.ts), except showing the window and quitting, the shell's.
// "Command" names only what goes to T3.
import type { AgentView, EnvironmentView } from "./types";
import { acknowledgeable, needsYou } from "./views";

export interface ActionContext {
  /** The agent the user is on: the open one, else the selected one. */
  agent: AgentView | null;
  environment: EnvironmentView | null;
  agentPanelOpen: boolean;
  machines: number;
  needYou: number;
  notificationsPaused: boolean;
  grouping: "machine" | "project";
  /** The window's last action can still be undone (its confirmation is on screen with Undo). */
  undoable?: boolean;
  /** The agent is snoozed (by this window or in T3) and can be woken. */
  agentSnoozed?: boolean;
}

/** Where an action is listed by itself; every action can also be run by a view's button or card. */
export type ActionSurface = "palette" | "keys" | "tray";

export interface ActionSpec {
  id: ActionId;
  label: string;
  /** Key names as `KeyboardEvent.key`, with `Mod+` for Ctrl or Cmd. */
  keys: readonly string[];
  surfaces: readonly ActionSurface[];
  enabled(context: ActionContext): boolean;
  /** Other words the palette finds it by (the approval decisions' older names: accept, decline). */
  keywords?: string;
}

const online = (context: ActionContext) => context.environment?.connection.phase === "online";
const pendingOf = (context: ActionContext, kind: "approval" | "input") =>
  Boolean(online(context) && context.agent?.pending.some((request) => request.kind === kind));
const always = () => true;

/** Actions only a view's own controls run: on no surface, always enabled (the handler checks its arguments). */
function viewOnly<const Entries extends readonly (readonly [string, string])[]>(entries: Entries) {
  return entries.map(([id, label]) => ({ id, label, keys: [], surfaces: [], enabled: always })) as {
    [Index in keyof Entries]: { id: Entries[Index][0]; label: string; keys: readonly []; surfaces: readonly []; enabled: () => true };
  };
}

const SPECS = [
  { id: "palette.open", label: "Command palette", keys: ["Mod+k"], surfaces: ["keys"], enabled: always },
  { id: "fleet.next-needs-you", label: "Next agent that needs you", keys: ["n"], surfaces: ["palette", "keys"], enabled: (c) => c.needYou > 0 },
  { id: "fleet.search", label: "Search agents", keys: ["/"], surfaces: ["palette", "keys"], enabled: always },
  { id: "fleet.down", label: "Move down", keys: ["ArrowDown", "j"], surfaces: ["keys"], enabled: always },
  { id: "fleet.up", label: "Move up", keys: ["ArrowUp", "k"], surfaces: ["keys"], enabled: always },
  { id: "fleet.expand", label: "Expand", keys: ["ArrowRight"], surfaces: ["keys"], enabled: always },
  { id: "fleet.collapse", label: "Collapse", keys: ["ArrowLeft"], surfaces: ["keys"], enabled: always },
  { id: "view.toggle", label: "Switch between the inbox and the fleet", keys: ["v"], surfaces: ["palette", "keys"], enabled: always },
  { id: "fleet.group-toggle", label: "Group by project / by machine", keys: ["g"], surfaces: ["palette", "keys"], enabled: always },
  { id: "agent.open", label: "Open agent", keys: ["Enter"], surfaces: ["keys"], enabled: (c) => c.agent !== null },
  {
    id: "agent.accept",
    label: "Allow once",
    keywords: "approve accept approval",
    keys: ["a"],
    surfaces: ["palette", "keys"],
    enabled: (c) => pendingOf(c, "approval"),
  },
  {
    id: "agent.accept-session",
    label: "Allow for this session",
    keywords: "approve accept approval",
    keys: ["A"],
    surfaces: ["palette", "keys"],
    enabled: (c) => pendingOf(c, "approval"),
  },
  {
    id: "agent.decline",
    label: "Deny",
    keywords: "decline reject approval",
    keys: ["d"],
    surfaces: ["palette", "keys"],
    enabled: (c) => pendingOf(c, "approval"),
  },
  { id: "agent.answer", label: "Answer the question", keys: ["r"], surfaces: ["palette", "keys"], enabled: (c) => pendingOf(c, "input") },
  {
    id: "agent.acknowledge",
    label: "Acknowledge the failure",
    keys: ["x"],
    surfaces: ["palette", "keys"],
    enabled: (c) => Boolean(c.agent && acknowledgeable(c.agent)),
  },
  {
    id: "agent.mark-reviewed",
    label: "Mark the changes reviewed",
    keywords: "review reviewed seen done diff changes",
    keys: ["e"],
    surfaces: ["palette", "keys"],
    enabled: (c) => c.agent?.review === true,
  },
  { id: "agent.snooze", label: "Snooze until it changes", keys: ["s"], surfaces: ["palette", "keys"], enabled: (c) => Boolean(c.agent && needsYou(c.agent)) },
  { id: "agent.snooze-hour", label: "Snooze for an hour", keys: ["S"], surfaces: ["palette", "keys"], enabled: (c) => Boolean(c.agent && needsYou(c.agent)) },
  { id: "agent.unsnooze", label: "Wake the snoozed agent", keys: [], surfaces: ["palette"], enabled: (c) => c.agentSnoozed === true },
  { id: "action.undo", label: "Undo the last action", keys: ["z"], surfaces: ["palette", "keys"], enabled: (c) => c.undoable === true },
  { id: "inbox.handled", label: "Handled today", keys: ["h"], surfaces: ["palette", "keys"], enabled: always },
  { id: "inbox.snoozed", label: "Snoozed agents", keys: ["Z"], surfaces: ["palette", "keys"], enabled: always },
  {
    id: "agent.interrupt",
    label: "Interrupt the run",
    keys: ["i"],
    surfaces: ["palette", "keys"],
    enabled: (c) => online(c) && c.agent?.capabilities.interrupt === true && (c.agent.status === "running" || c.agent.status === "starting"),
  },
  {
    id: "agent.stop",
    label: "Stop the session",
    keys: [],
    surfaces: ["palette"],
    // Offered only where the protocol has a session stop (protocol 2 has none).
    enabled: (c) => online(c) && c.agent !== null && c.agent.capabilities.stop && c.agent.status !== "ended",
  },
  {
    id: "agent.diff",
    label: "Show the changes (diff)",
    keys: ["c"],
    surfaces: ["palette", "keys"],
    enabled: (c) => Boolean(c.agent?.changes?.length),
  },
  { id: "agent.open-in-t3", label: "Open in T3", keys: ["o"], surfaces: ["palette", "keys"], enabled: (c) => c.agent !== null && c.environment !== null },
  { id: "agent.message", label: "Write a message", keys: ["m"], surfaces: ["palette", "keys"], enabled: (c) => c.agentPanelOpen },
  // Issue 42: start work on any paired machine (the form says which machines can take it now).
  {
    id: "agent.new",
    label: "New agent on…",
    keywords: "new start create launch thread",
    keys: ["N"],
    surfaces: ["palette", "keys"],
    enabled: (c) => c.machines > 0,
  },
  {
    id: "agent.new-child",
    label: "New child of this agent",
    keywords: "new start create child subagent thread",
    keys: [],
    surfaces: ["palette"],
    enabled: (c) => c.agent !== null && c.agent.lifecycle === "active",
  },
  { id: "app.open", label: "Open T3 Fleet", keys: [], surfaces: ["tray"], enabled: always },
  { id: "pairing.open", label: "Pair a machine…", keys: ["p"], surfaces: ["palette", "keys", "tray"], enabled: always },
  { id: "settings.open", label: "Settings…", keys: [","], surfaces: ["palette", "keys"], enabled: always },
  { id: "notifications.pause", label: "Pause notifications", keys: [], surfaces: ["palette", "tray"], enabled: (c) => !c.notificationsPaused },
  { id: "notifications.resume", label: "Resume notifications", keys: [], surfaces: ["palette", "tray"], enabled: (c) => c.notificationsPaused },
  { id: "app.quit", label: "Quit", keys: [], surfaces: ["tray"], enabled: always },
  // The views' own actions (buttons, cards, menus, links), with their arguments (renderer/src/state/action-args.ts):
  // listed on no surface, run by the same dispatcher.
  ...viewOnly([
    ["agent.select", "Select an agent"],
    ["agent.close", "Close the agent"],
    ["agent.decide", "Decide the approval"],
    ["agent.respond", "Answer the question"],
    ["agent.send", "Send the message"],
    ["action.confirm", "Confirm the action"],
    ["action.cancel", "Keep it as it is"],
    ["confirmation.dismiss", "Dismiss the confirmation"],
    ["failure.dismiss", "Dismiss the error"],
    ["delivery.release", "Send the held message now"],
    ["delivery.discard", "Discard the held message"],
    ["delivery.recheck", "Check the message again"],
    ["delivery.cancel-queued", "Cancel the queued message"],
    ["view.set", "Show the inbox or the fleet"],
    ["fleet.group", "Group by machine or by project"],
    ["fleet.filter", "Filter the fleet"],
    ["fleet.clear-filters", "Clear the search and filters"],
    ["fleet.search-text", "Search for"],
    ["fleet.toggle", "Expand or collapse"],
    ["fleet.toggle-older", "Show or hide older agents"],
    ["machine.show", "Show a machine"],
    ["machine.rename", "Rename the machine"],
    ["machine.remove", "Remove the machine"],
    ["machine.mute", "Mute the machine"],
    ["machine.retry", "Reconnect the machine"],
    ["machines.find", "Find machines"],
    ["machines.find-close", "Close Find machines"],
    ["machines.scan", "Look for machines"],
    ["machines.pair-found", "Pair a found machine"],
    ["machines.add-port", "Also look on this port"],
    ["machines.remove-port", "Stop looking on this port"],
    ["machines.add-ssh-host", "Also look at this ssh host"],
    ["machines.remove-ssh-host", "Stop looking at this ssh host"],
    ["pairing.close", "Close pairing"],
    ["pairing.inspect", "Check the pairing link"],
    ["pairing.confirm", "Pair"],
    ["link.open", "Open the link"],
    ["diff.show", "Show the changes"],
    ["diff.close", "Close the changes"],
    ["notice.dismiss", "Dismiss the notice"],
    ["creation.retry", "Try creating the agent again"],
    ["creation.dismiss", "Dismiss the new agent's receipt"],
    ["new-agent.close", "Close the New agent form"],
    ["new-agent.choose-machine", "Choose the new agent's machine"],
    ["new-agent.create", "Create the agent"],
    ["agent.forget-lost-send", "Forget the message T3 Fleet never received"],
    ["palette.close", "Close the command palette"],
    ["list.close", "Close the list"],
    ["settings.close", "Close settings"],
    ["settings.update", "Change a setting"],
    ["settings.older-than", "Fold idle agents after"],
    ["settings.browser-notifications", "Allow browser notifications"],
  ]),
] as const satisfies readonly (Omit<ActionSpec, "id"> & { id: string })[];

export type ActionId = (typeof SPECS)[number]["id"];

export const ACTIONS: readonly ActionSpec[] = SPECS;

/** Every command id, for checking one that crossed a boundary (shared/bridge/contract.ts). */
export const ACTION_IDS = SPECS.map((spec) => spec.id) as [ActionId, ...ActionId[]];

export const ACTION_BY_ID = new Map<ActionId, ActionSpec>(ACTIONS.map((spec) => [spec.id, spec]));

export function actionSpec(id: ActionId): ActionSpec {
  return ACTION_BY_ID.get(id)!;
}

/** The key event's name as the registry writes it (`Mod+k`, `A`, `ArrowDown`). */
export function keyName(event: { key: string; ctrlKey: boolean; metaKey: boolean; altKey: boolean }): string | null {
  if (event.altKey) return null;
  return event.ctrlKey || event.metaKey ? `Mod+${event.key.toLowerCase()}` : event.key;
}

/** The command a key runs, if any is bound to it. */
export function actionForKey(event: { key: string; ctrlKey: boolean; metaKey: boolean; altKey: boolean }): ActionSpec | null {
  const name = keyName(event);
  if (!name) return null;
  return ACTIONS.find((spec) => spec.surfaces.includes("keys") && spec.keys.includes(name)) ?? null;
}

/** A key for people: "Ctrl+K", "Shift+A", "↓". */
export function keyHint(spec: ActionSpec): string {
  const key = spec.keys[0];
  if (!key) return "";
  const arrows: Record<string, string> = { ArrowDown: "↓", ArrowUp: "↑", ArrowLeft: "←", ArrowRight: "→" };
  if (key.startsWith("Mod+")) return `Ctrl+${key.slice(4).toUpperCase()}`;
  if (arrows[key]) return arrows[key]!;
  if (key.length === 1 && key !== key.toLowerCase()) return `Shift+${key}`;
  return key;
}

/** Commands the palette lists for a query: enabled ones first, by label match. */
export function paletteActions(context: ActionContext, query: string): ActionSpec[] {
  const needle = query.trim().toLowerCase();
  return ACTIONS.filter(
    (spec) =>
      spec.surfaces.includes("palette") && spec.enabled(context) && (spec.label.toLowerCase().includes(needle) || (spec.keywords?.includes(needle) ?? false)),
  );
}
