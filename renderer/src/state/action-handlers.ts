// What each action does: the one handler per action id (shared/fleet/action-registry.ts), run only
// by the dispatcher (dispatch.ts) whichever way the user asked: a key, a button or card, the palette
// or the tray. The *-commands.ts modules, navigation.ts and links.ts are these handlers'
// implementation; the views never import them (eslint.config.js).
import type { ActionId } from "../../../shared/fleet/action-registry";
import type { ApprovalDecision } from "../../../shared/fleet/facts";
import type { AgentView } from "../../../shared/fleet/types";
import { acknowledgeable } from "../../../shared/fleet/views";
import type { ActionArgs } from "./action-args";
import { agentCommands } from "./agent-commands";
import { selectInbox, selectRows, selectSelectable } from "./derived";
import { diffView } from "./diff-view";
import { discoveryCommands } from "./discovery-commands";
import { useDiscovery } from "./discovery";
import { focusTargets, focusWhenStill } from "./focus";
import { handledList } from "./handled-list";
import { links } from "./links";
import { machineCommands } from "./machine-commands";
import { navigation } from "./navigation";
import { newAgent, useNewAgent } from "./new-agent";
import { withdrawNotice } from "./notices";
import { nextNeedingYou, paneView } from "./selectors";
import { settingsCommands } from "./settings-commands";
import { useFleet } from "./store";

/** One run of a handler: the action, the agent the user is on (or the one its arguments name), and its arguments. */
export interface HandlerCall<Args = undefined> {
  id: ActionId;
  agent: AgentView | null;
  args: Args | undefined;
}

const store = useFleet.getState;

/** Opens or closes the palette; not over another dialog. */
function togglePalette(): void {
  const state = store();
  if (!state.pairing.open && !state.settingsOpen) state.showPalette(!state.paletteOpen);
}

function openNextNeedingYou(): void {
  const { openKey, selectedKey } = store();
  // The inbox as shown (its filters, without snoozed items), so `n` and "3 of 7" agree.
  const next = nextNeedingYou(selectInbox(store()).items, openKey ?? selectedKey);
  if (next) void navigation.openAgent(next).then(focusWhenStill("panel"));
}

function focusSearch(): void {
  focusTargets.search?.();
}

/** ↑/↓ through what the pane shows: the inbox's items, or the tree's matching agents. */
function moveSelection({ id }: HandlerCall): void {
  const selectable = selectSelectable(store());
  const index = selectable.indexOf(store().selectedKey ?? "");
  const target = id === "fleet.down" ? selectable[Math.min(index + 1, selectable.length - 1)] : selectable[Math.max(index - 1, 0)];
  navigation.select(target ?? null);
}

function expandOrCollapse({ id }: HandlerCall): void {
  const state = store();
  const row = selectRows(state).find((candidate) => candidate.kind === "agent" && candidate.id === state.selectedKey);
  if (row?.kind !== "agent") return;
  if (row.childCount > 0 && (id === "fleet.expand") === row.collapsed) state.toggleCollapsed(row.id);
}

function toggleView(): void {
  navigation.setView(paneView(store().view, 0) === "inbox" ? "fleet" : "inbox");
}

function setView({ args }: HandlerCall<ActionArgs["view.set"]>): void {
  if (args) navigation.setView(args.view);
}

function toggleGrouping(): void {
  store().setGrouping(store().grouping === "machine" ? "project" : "machine");
}

function setGrouping({ args }: HandlerCall<ActionArgs["fleet.group"]>): void {
  if (args) store().setGrouping(args.grouping);
}

/**
 * Opens the agent. From a key, the palette or the tray focus moves into it; a view's button asks for
 * that with `focus` (once it has loaded, unless the user moved focus meanwhile).
 */
function openAgent({ agent, args }: HandlerCall<ActionArgs["agent.open"]>): Promise<void> | undefined {
  const key = args?.key ?? agent?.key;
  if (!key) return undefined;
  const focusLater = focusWhenStill("panel");
  const opened = navigation.openAgent(key);
  if (!args) requestAnimationFrame(focusLater);
  else if (args.focus) void opened.then(focusLater);
  return opened;
}

function closeAgent(): void {
  navigation.closeAgent();
}

function selectAgent({ args }: HandlerCall<ActionArgs["agent.select"]>): void {
  if (args) navigation.select(args.key);
}

const DECISIONS: Partial<Record<ActionId, ApprovalDecision>> = {
  "agent.accept": "accept",
  "agent.accept-session": "acceptForSession",
  "agent.decline": "decline",
};

/** The decision a key (a, A, d) or the palette names, on the agent's open approval. */
export function keyedDecision(id: ActionId): ApprovalDecision | undefined {
  return DECISIONS[id];
}

function decideApproval({ id, agent }: HandlerCall): void {
  const approval = agent?.pending.find((request) => request.kind === "approval");
  const wanted = DECISIONS[id];
  if (!agent || approval?.kind !== "approval" || !wanted) return;
  // Only a decision the request offers is sent.
  if (approval.decisions.some((option) => option.decision === wanted)) void agentCommands.respondApproval(agent.key, approval.requestId, wanted);
  else store().commandFailed(`request:${approval.requestId}`, `This request does not offer “${wanted}”.`);
}

/** A card's decision: sent at once, except one that stops work, which asks first (agent-commands.ts). */
function decide({ args }: HandlerCall<ActionArgs["agent.decide"]>): void {
  if (args) void agentCommands.respondApproval(args.key, args.requestId, args.decision);
}

function respond({ args }: HandlerCall<ActionArgs["agent.respond"]>): void {
  if (args) void agentCommands.respondInput(args.key, args.requestId, args.answers);
}

function send({ args }: HandlerCall<ActionArgs["agent.send"]>): Promise<"sent" | "lost" | "failed"> | undefined {
  return args ? agentCommands.send(args.key, args.text, args.intent) : undefined;
}

/** A decision key pressed on the list shows the agent first: its approval card says the command, folder and reason. */
function openSelectedFirst(): void {
  const { selectedKey } = store();
  if (selectedKey) void navigation.openAgent(selectedKey).then(focusWhenStill("panel"));
}

function focusAnswer({ agent }: HandlerCall): void {
  if (agent && store().openKey !== agent.key) void navigation.openAgent(agent.key).then(focusWhenStill("answer"));
  else focusTargets.answer?.();
}

function acknowledge({ agent }: HandlerCall): void {
  if (agent && acknowledgeable(agent)) void agentCommands.acknowledge(agent.key);
}

function markReviewed({ agent }: HandlerCall): void {
  if (agent) void agentCommands.markReviewed(agent.key);
}

function snooze({ id, agent }: HandlerCall): void {
  if (agent) agentCommands.snooze(agent.key, id === "agent.snooze" ? null : 3_600_000);
}

/** The messages T3 queued behind the open agent's running turn, as its transcript shows them. */
function queuedBehind(key: string): boolean {
  const { openKey, details } = store();
  return openKey === key && (details.get(key)?.items ?? []).some((item) => item.type === "message" && item.queue?.state === "queued");
}

/** Asks first when messages are queued behind the open agent's turn: they would start next (components/InterruptAction.tsx asks). */
function interrupt({ agent }: HandlerCall): void {
  if (!agent) return;
  if (queuedBehind(agent.key)) store().askConfirm({ action: "interrupt", key: agent.key });
  else void agentCommands.interrupt(agent.key);
}

/** Asks first: stopping cannot be taken back (agentCommands.stop). */
function stop({ agent }: HandlerCall): void {
  if (agent) void agentCommands.stop(agent.key);
}

/** The choice made in the question asked (a stop, a decision that stops work, an interrupt with messages queued). */
function confirm({ args }: HandlerCall<ActionArgs["action.confirm"]>): void {
  const pending = store().confirming;
  if (pending?.action === "interrupt") {
    store().askConfirm(null);
    void agentCommands.interrupt(pending.key, args?.holdQueued === true);
  } else if (pending?.action === "remove-machine") {
    store().askConfirm(null);
    void machineCommands.removeEnvironment(pending.environmentId);
  } else void agentCommands.confirmPending();
}

/** Keeps things as they are: the question goes, nothing is sent. */
function cancel(): void {
  store().askConfirm(null);
}

function unsnooze({ agent }: HandlerCall): void {
  if (agent) void agentCommands.unsnooze(agent.key);
}

function undoLast(): void {
  void agentCommands.undoLast();
}

function dismissConfirmation({ args }: HandlerCall<ActionArgs["confirmation.dismiss"]>): void {
  if (args) store().clearConfirmation(args.id);
}

function dismissFailure({ args }: HandlerCall<ActionArgs["failure.dismiss"]>): void {
  if (args) store().clearFailure(args.place);
}

function showHandled(): void {
  handledList.open();
}

function showSnoozed(): void {
  store().showList("snoozed");
}

function closeList(): void {
  store().showList(null);
}

/** The diff of the agent's latest turn (diff-view.ts reads it from T3 when shown). */
function showDiff({ agent }: HandlerCall): void {
  const latest = agent?.changes?.at(-1);
  if (agent && latest) void diffView.show(agent.key, { kind: "turn", turnCount: latest.turnCount });
}

/** A turn's or the whole thread's diff, as a view's button names it. */
function showChanges({ args }: HandlerCall<ActionArgs["diff.show"]>): void {
  if (args) void diffView.show(args.key, args.scope);
}

function closeChanges(): void {
  diffView.close();
}

function dismissNotices({ args }: HandlerCall<ActionArgs["notice.dismiss"]>): void {
  for (const condition of args?.conditions ?? []) withdrawNotice(condition);
}

function retryCreation({ args }: HandlerCall<ActionArgs["creation.retry"]>): void {
  if (args) void newAgent.retry(args.creationId);
}

function dismissCreation({ args }: HandlerCall<ActionArgs["creation.dismiss"]>): void {
  if (args) useNewAgent.getState().dismiss(args.creationId);
}

function closeNewAgent(): void {
  newAgent.close();
}

function openInT3({ agent }: HandlerCall): void {
  if (agent) void links.openInT3(agent);
}

function openLink({ args }: HandlerCall<ActionArgs["link.open"]>): void {
  if (args) void links.openLink(args.url);
}

function focusComposer(): void {
  focusTargets.composer?.();
}

/** The "New agent" form; for a child, on the agent's machine with the agent as its parent. */
function openNewAgent({ id, agent }: HandlerCall): void {
  newAgent.open(id === "agent.new-child" && agent ? agent.key : null);
}

function deliveryAction({ id, args }: HandlerCall<ActionArgs["delivery.release"]>): void {
  if (!args) return;
  const run = {
    "delivery.release": agentCommands.releaseHeld,
    "delivery.discard": agentCommands.discardHeld,
    "delivery.recheck": agentCommands.recheck,
    "delivery.cancel-queued": agentCommands.cancelQueued,
  }[id as "delivery.release"];
  void run(args.commandId);
}

function filter({ args }: HandlerCall<ActionArgs["fleet.filter"]>): void {
  if (args) store().setFilters(args.patch);
}

function clearFilters(): void {
  store().clearFilters();
}

function searchFor({ args }: HandlerCall<ActionArgs["fleet.search-text"]>): void {
  if (args) store().setSearch(args.text);
}

function toggleRow({ args }: HandlerCall<ActionArgs["fleet.toggle"]>): void {
  if (args) store().toggleCollapsed(args.id);
}

function toggleOlder({ args }: HandlerCall<ActionArgs["fleet.toggle-older"]>): void {
  if (args) store().toggleOlder(args.groupId);
}

/** The palette's machine: the fleet, filtered to it. */
function showMachine({ args }: HandlerCall<ActionArgs["machine.show"]>): void {
  if (!args) return;
  navigation.setView("fleet");
  store().setFilters({ environmentId: args.environmentId });
}

function renameMachine({ args }: HandlerCall<ActionArgs["machine.rename"]>): void {
  if (args) void machineCommands.renameEnvironment(args.environmentId, args.label);
}

/** Asks first: the machine's token is deleted from the keychain (action.confirm removes it). */
function removeMachine({ args }: HandlerCall<ActionArgs["machine.remove"]>): void {
  if (args) store().askConfirm({ action: "remove-machine", environmentId: args.environmentId });
}

function muteMachine({ args }: HandlerCall<ActionArgs["machine.mute"]>): void {
  if (args) void machineCommands.muteEnvironment(args.environmentId, args.muted);
}

function retryMachine({ args }: HandlerCall<ActionArgs["machine.retry"]>): void {
  if (args) void machineCommands.retryEnvironment(args.environmentId);
}

function findMachines(): void {
  useDiscovery.getState().show(true);
}

function closeFindMachines(): void {
  useDiscovery.getState().show(false);
}

function scanForMachines({ args }: HandlerCall<ActionArgs["machines.scan"]>): void {
  void discoveryCommands.scan(args?.refresh === true);
}

function pairFoundMachine({ args }: HandlerCall<ActionArgs["machines.pair-found"]>): void {
  if (args) void discoveryCommands.pair(args.id, args.plainHttp === true);
}

/** The ports and ssh hosts Find machines looks at besides T3's default. */
function lookAt({ id, args }: HandlerCall<{ port?: number; host?: string }>): void {
  const discovery = useDiscovery.getState();
  if (args?.port !== undefined) (id === "machines.add-port" ? discovery.addPort : discovery.removePort)(args.port);
  if (args?.host !== undefined) (id === "machines.add-ssh-host" ? discovery.addSshHost : discovery.removeSshHost)(args.host);
}

function chooseNewAgentMachine({ args }: HandlerCall<ActionArgs["new-agent.choose-machine"]>): void {
  if (args) void newAgent.load(args.environmentId);
}

function createAgent({ args }: HandlerCall<ActionArgs["new-agent.create"]>): void {
  if (args) void newAgent.submit(args.form);
}

/** Cleared by the user: a message T3 Fleet never received is not brought back after a reload. */
function forgetLostSend({ args }: HandlerCall<ActionArgs["agent.forget-lost-send"]>): void {
  if (args) store().forgetLostSend(args.key);
}

function openPairing({ args }: HandlerCall<ActionArgs["pairing.open"]>): void {
  machineCommands.openPairing(args?.environmentId ?? null, args?.input ?? "");
}

function closePairing(): void {
  machineCommands.closePairing();
}

function inspectPairing(): void {
  void machineCommands.inspectPairing();
}

function confirmPairing(): void {
  void machineCommands.confirmPairing();
}

function closePalette(): void {
  store().showPalette(false);
}

function openSettings(): void {
  store().showSettings(true);
}

function closeSettings(): void {
  store().showSettings(false);
}

function updateSettings({ args }: HandlerCall<ActionArgs["settings.update"]>): void {
  if (args) void settingsCommands.updateSettings(args.patch);
}

function setOlderThan({ args }: HandlerCall<ActionArgs["settings.older-than"]>): void {
  if (args) store().setOlderThan(args.ms);
}

/** Asks for the browser's permission to notify (must run from a click). */
function enableBrowserNotifications(): Promise<NotificationPermission> {
  return settingsCommands.enableBrowserNotifications();
}

function pauseOrResumeNotifications({ id }: HandlerCall): void {
  void settingsCommands.updateSettings({ notificationsPaused: id === "notifications.pause" });
}

/** Showing the window and quitting are the desktop shell's own (electron/main/tray-commands.ts). */
function shellOnly(): void {}

/** The handlers by name (object keys, so the name survives minification and shows in ACTION_RUN_EVENT). */
export const handlers = {
  togglePalette,
  closePalette,
  openNextNeedingYou,
  focusSearch,
  moveSelection,
  expandOrCollapse,
  toggleView,
  setView,
  toggleGrouping,
  setGrouping,
  openAgent,
  closeAgent,
  selectAgent,
  decideApproval,
  decide,
  respond,
  send,
  openSelectedFirst,
  focusAnswer,
  acknowledge,
  markReviewed,
  snooze,
  interrupt,
  stop,
  confirm,
  cancel,
  unsnooze,
  undoLast,
  dismissConfirmation,
  dismissFailure,
  showHandled,
  showSnoozed,
  closeList,
  showDiff,
  showChanges,
  closeChanges,
  dismissNotices,
  retryCreation,
  dismissCreation,
  closeNewAgent,
  openInT3,
  openLink,
  focusComposer,
  openNewAgent,
  deliveryAction,
  filter,
  clearFilters,
  searchFor,
  toggleRow,
  toggleOlder,
  showMachine,
  renameMachine,
  removeMachine,
  muteMachine,
  retryMachine,
  findMachines,
  closeFindMachines,
  scanForMachines,
  pairFoundMachine,
  lookAt,
  chooseNewAgentMachine,
  createAgent,
  forgetLostSend,
  openPairing,
  closePairing,
  inspectPairing,
  confirmPairing,
  openSettings,
  closeSettings,
  updateSettings,
  setOlderThan,
  enableBrowserNotifications,
  pauseOrResumeNotifications,
  shellOnly,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each handler reads its own arguments' type (action-args.ts)
} satisfies Record<string, (call: HandlerCall<any>) => unknown>;

export type HandlerName = keyof typeof handlers;
