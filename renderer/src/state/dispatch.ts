// The one dispatcher of registry commands (shared/fleet/command-registry.ts): the keys (keys.ts),
// the command buttons, the palette and the tray (over the bridge, bridge-events.ts) all run a
// command by its id here, so a command does one thing whichever way the user asked for it.
import { command, type CommandContext, type CommandId, keyHint } from "../../../shared/fleet/command-registry";
import type { ApprovalDecision } from "../../../shared/fleet/facts";
import { activeSnooze } from "../../../shared/fleet/snooze";
import type { AgentView } from "../../../shared/fleet/types";
import { acknowledgeable } from "../../../shared/fleet/views";
import { agentCommands } from "./agent-commands";
import { selectGlance, selectRows, selectSelectable } from "./derived";
import { focusTargets, focusWhenStill } from "./focus";
import { handledList } from "./handled-list";
import { diffView } from "./diff-view";
import { currentInbox } from "./inbox";
import { links } from "./links";
import { machineCommands } from "./machine-commands";
import { navigation } from "./navigation";
import { newAgent } from "./new-agent";
import { displayAgent, nextNeedingYou, paneView } from "./selectors";
import { settingsCommands } from "./settings-commands";
import { useFleet } from "./store";

/** Where the user asked for a command. */
export type CommandSource = "keys" | "button" | "palette" | "tray";

/** Announced on `window` for each command run (tests and diagnostics watch it): which handler ran it. */
export const COMMAND_RUN_EVENT = "t3fleet:command";
export interface CommandRun {
  id: CommandId;
  source: CommandSource;
  handler: string;
}

/** The agent the user is on: the open one, else the selected one (or `target`, a row's own command such as a list's Unsnooze). */
export function currentAgent(target?: string): AgentView | null {
  const { openKey, selectedKey, agents, bridgeLostAt } = useFleet.getState();
  const key = target ?? openKey ?? selectedKey;
  const agent = key ? agents.get(key) : undefined;
  return agent ? displayAgent(agent, bridgeLostAt) : null;
}

/** What the registry's `enabled` rules read, from the window's state now. */
export function commandContext(target?: string): CommandContext {
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

type Handler = (id: CommandId, agent: AgentView | null) => void;

/** Opens or closes the palette; not over another dialog. */
function togglePalette(): void {
  const state = useFleet.getState();
  if (!state.pairing.open && !state.settingsOpen) state.showPalette(!state.paletteOpen);
}

function openNextNeedingYou(): void {
  const { openKey, selectedKey } = useFleet.getState();
  // The inbox as shown (its filters, without snoozed items), so `n` and "3 of 7" agree.
  const next = nextNeedingYou(currentInbox().items, openKey ?? selectedKey);
  if (next) void navigation.openAgent(next).then(focusWhenStill("panel"));
}

function focusSearch(): void {
  focusTargets.search?.();
}

/** ↑/↓ through what the pane shows: the inbox's items, or the tree's matching agents. */
function moveSelection(id: CommandId): void {
  const selectable = selectSelectable(useFleet.getState());
  const index = selectable.indexOf(useFleet.getState().selectedKey ?? "");
  const target = id === "fleet.down" ? selectable[Math.min(index + 1, selectable.length - 1)] : selectable[Math.max(index - 1, 0)];
  navigation.select(target ?? null);
}

function expandOrCollapse(id: CommandId): void {
  const state = useFleet.getState();
  const row = selectRows(state).find((candidate) => candidate.kind === "agent" && candidate.id === state.selectedKey);
  if (row?.kind !== "agent") return;
  if (row.childCount > 0 && (id === "fleet.expand") === row.collapsed) state.toggleCollapsed(row.id);
}

function toggleView(): void {
  navigation.setView(paneView(useFleet.getState().view, 0) === "inbox" ? "fleet" : "inbox");
}

function toggleGrouping(): void {
  const state = useFleet.getState();
  state.setGrouping(state.grouping === "machine" ? "project" : "machine");
}

/** Opens the agent and moves focus into it. */
function openCurrentAgent(_id: CommandId, agent: AgentView | null): void {
  if (!agent) return;
  void navigation.openAgent(agent.key);
  requestAnimationFrame(focusWhenStill("panel"));
}

const DECISIONS: Partial<Record<CommandId, ApprovalDecision>> = {
  "agent.accept": "accept",
  "agent.accept-session": "acceptForSession",
  "agent.decline": "decline",
};

function decideApproval(id: CommandId, agent: AgentView | null): void {
  const approval = agent?.pending.find((request) => request.kind === "approval");
  const wanted = DECISIONS[id];
  if (!agent || approval?.kind !== "approval" || !wanted) return;
  // Only a decision the request offers is sent.
  if (approval.decisions.some((option) => option.decision === wanted)) void agentCommands.respondApproval(agent.key, approval.requestId, wanted);
  else useFleet.getState().commandFailed(`request:${approval.requestId}`, `This request does not offer “${wanted}”.`);
}

/** A decision key pressed on the list shows the agent first: its approval card says the command, folder and reason. */
function openSelectedFirst(): void {
  const { selectedKey } = useFleet.getState();
  if (selectedKey) void navigation.openAgent(selectedKey).then(focusWhenStill("panel"));
}

function focusAnswer(_id: CommandId, agent: AgentView | null): void {
  if (agent && useFleet.getState().openKey !== agent.key) void navigation.openAgent(agent.key).then(focusWhenStill("answer"));
  else focusTargets.answer?.();
}

function acknowledge(_id: CommandId, agent: AgentView | null): void {
  if (agent && acknowledgeable(agent)) void agentCommands.acknowledge(agent.key);
}

function markReviewed(_id: CommandId, agent: AgentView | null): void {
  if (agent) void agentCommands.markReviewed(agent.key);
}

function snooze(id: CommandId, agent: AgentView | null): void {
  if (agent) agentCommands.snooze(agent.key, id === "agent.snooze" ? null : 3_600_000);
}

/** The open agent's interrupt asks first when messages are queued behind the turn (InterruptAction). */
function interrupt(_id: CommandId, agent: AgentView | null): void {
  if (agent && !focusTargets.interrupt?.(agent.key)) void agentCommands.interrupt(agent.key);
}

/** Asks first: stopping cannot be taken back (agentCommands.stop). */
function stop(_id: CommandId, agent: AgentView | null): void {
  if (agent) void agentCommands.stop(agent.key);
}

function unsnooze(_id: CommandId, agent: AgentView | null): void {
  if (agent) void agentCommands.unsnooze(agent.key);
}

function undoLast(): void {
  void agentCommands.undoLast();
}

function showHandled(): void {
  handledList.open();
}

function showSnoozed(): void {
  useFleet.getState().showList("snoozed");
}

/** The diff of the agent's latest turn (diff-view.ts reads it from T3 when shown). */
function showDiff(_id: CommandId, agent: AgentView | null): void {
  const latest = agent?.changes?.at(-1);
  if (agent && latest) void diffView.show(agent.key, { kind: "turn", turnCount: latest.turnCount });
}

function openInT3(_id: CommandId, agent: AgentView | null): void {
  if (agent) void links.openInT3(agent);
}

function focusComposer(): void {
  focusTargets.composer?.();
}

/** The "New agent" form; for a child, on the agent's machine with the agent as its parent. */
function openNewAgent(id: CommandId, agent: AgentView | null): void {
  newAgent.open(id === "agent.new-child" && agent ? agent.key : null);
}

function openPairing(): void {
  machineCommands.openPairing();
}

function openSettings(): void {
  useFleet.getState().showSettings(true);
}

function pauseOrResumeNotifications(id: CommandId): void {
  void settingsCommands.updateSettings({ notificationsPaused: id === "notifications.pause" });
}

/** Showing the window and quitting are the desktop shell's own (electron/main/tray-commands.ts). */
function shellOnly(): void {}

/** The handlers by name (object keys, so the name survives minification and shows in COMMAND_RUN_EVENT). */
const handlers = {
  togglePalette,
  openNextNeedingYou,
  focusSearch,
  moveSelection,
  expandOrCollapse,
  toggleView,
  toggleGrouping,
  openCurrentAgent,
  decideApproval,
  focusAnswer,
  acknowledge,
  markReviewed,
  snooze,
  interrupt,
  stop,
  openInT3,
  showDiff,
  focusComposer,
  shellOnly,
  openPairing,
  openNewAgent,
  openSettings,
  pauseOrResumeNotifications,
  openSelectedFirst,
  unsnooze,
  undoLast,
  showHandled,
  showSnoozed,
} satisfies Record<string, Handler>;

type HandlerName = keyof typeof handlers;

const HANDLERS: Record<CommandId, HandlerName> = {
  "palette.open": "togglePalette",
  "fleet.next-needs-you": "openNextNeedingYou",
  "fleet.search": "focusSearch",
  "fleet.down": "moveSelection",
  "fleet.up": "moveSelection",
  "fleet.expand": "expandOrCollapse",
  "fleet.collapse": "expandOrCollapse",
  "view.toggle": "toggleView",
  "fleet.group-toggle": "toggleGrouping",
  "agent.open": "openCurrentAgent",
  "agent.accept": "decideApproval",
  "agent.accept-session": "decideApproval",
  "agent.decline": "decideApproval",
  "agent.answer": "focusAnswer",
  "agent.acknowledge": "acknowledge",
  "agent.mark-reviewed": "markReviewed",
  "agent.snooze": "snooze",
  "agent.snooze-hour": "snooze",
  "agent.unsnooze": "unsnooze",
  "action.undo": "undoLast",
  "inbox.handled": "showHandled",
  "inbox.snoozed": "showSnoozed",
  "agent.interrupt": "interrupt",
  "agent.stop": "stop",
  "agent.open-in-t3": "openInT3",
  "agent.diff": "showDiff",
  "agent.message": "focusComposer",
  "agent.new": "openNewAgent",
  "agent.new-child": "openNewAgent",
  "app.open": "shellOnly",
  "pairing.open": "openPairing",
  "settings.open": "openSettings",
  "notifications.pause": "pauseOrResumeNotifications",
  "notifications.resume": "pauseOrResumeNotifications",
  "app.quit": "shellOnly",
};

/** Commands that must reach the agent's T3 server. */
const NEEDS_T3: Partial<Record<CommandId, string>> = {
  "agent.accept": "A decision",
  "agent.accept-session": "A decision",
  "agent.decline": "A decision",
  "agent.answer": "An answer",
  "agent.interrupt": "An interrupt",
  "agent.stop": "Stopping the session",
};

/** A command that cannot reach T3 says why where the user acted, instead of doing nothing. */
function sayWhyUnreachable(id: CommandId): void {
  const what = NEEDS_T3[id];
  const agent = currentAgent();
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
    : `Undo lasts while an action's confirmation shows; a snooze can still be ended from the Snoozed list (${keyHint(command("inbox.snoozed"))}).`;
  state.confirmDone(`${NOTHING_TO_UNDO}: ${why}`, null);
}

const NOTHING_TO_UNDO = "Nothing to undo";

/** `x` on changes waiting for review says which key ends them, rather than doing nothing. */
function sayHowToReview(key: string): void {
  const how = command("agent.mark-reviewed");
  useFleet.getState().commandFailed(`agent:${key}`, `These changes are not a failure to acknowledge: ${how.label.toLowerCase()} with ${keyHint(how)}.`);
}

/**
 * Runs a registry command when the registry enables it now. A decision key (a, A, d) pressed on the
 * list opens the selected agent instead, so a key decides only what is on screen; the palette and
 * the buttons name the decision themselves.
 */
export function dispatch(id: CommandId, source: CommandSource, target?: string): void {
  const { openKey, selectedKey } = useFleet.getState();
  const handler: HandlerName | null =
    source === "keys" && DECISIONS[id] && selectedKey && openKey !== selectedKey
      ? "openSelectedFirst"
      : command(id).enabled(commandContext(target))
        ? HANDLERS[id]
        : null;
  if (!handler) {
    if (id === "action.undo") sayNothingToUndo();
    else if (id === "agent.acknowledge" && currentAgent(target)?.review) sayHowToReview(currentAgent(target)!.key);
    else sayWhyUnreachable(id);
    return;
  }
  if (typeof window !== "undefined") window.dispatchEvent(new CustomEvent<CommandRun>(COMMAND_RUN_EVENT, { detail: { id, source, handler } }));
  handlers[handler](id, currentAgent(target));
}
