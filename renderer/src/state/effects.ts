// The one place with side effects: bridge subscriptions into the store, every command the user
// can run (buttons, keys, the palette and the tray all run them by registry id), notices with
// their browser counterparts, and the tab's title and icon.
import type { AgentDetail, AgentDetailDelta, BridgeEvent, BridgeParams } from "../../../shared/bridge/contract";
import type { CommandId } from "../../../shared/fleet/command-registry";
import type { CommandContext } from "../../../shared/fleet/command-registry";
import { noticeCondition, noticeIsCritical, noticeStillHolds, TRANSIENT_NOTICE_MS, type NotificationIntent } from "../../../shared/fleet/notifications";
import { noticeInView } from "../../../shared/fleet/notice-in-view";
import { fleetHeadline, trayVariant, type TrayVariant } from "../../../shared/fleet/tray";
import type { AgentView } from "../../../shared/fleet/types";
import { needFingerprint, t3ThreadUrl } from "../../../shared/fleet/views";
import type { ApprovalDecision, QuestionAnswers } from "../../../shared/fleet/facts";
import { type Bridge, BridgeRequestError } from "../bridge/client";
import { displayAgent, displayFacts, glance, inbox, nextNeedingYou, paneView } from "./selectors";
import type { PaneView } from "./slices/ui";
import { useDiscovery } from "./discovery";
import { useFleet } from "./store";

let bridge: Bridge | undefined;

function requireBridge(): Bridge {
  if (!bridge) throw new Error("bridge not started");
  return bridge;
}

function message(error: unknown): string {
  return error instanceof BridgeRequestError || error instanceof Error ? error.message : String(error);
}

/**
 * Runs one bridge request for a place in the UI: counted while in flight, its failure shown at
 * that place (never swallowed, never an unhandled rejection), cleared when it next succeeds.
 */
async function run<T>(place: string, request: () => Promise<T>): Promise<T | undefined> {
  const store = useFleet.getState();
  store.requestStarted();
  try {
    const result = await request();
    useFleet.getState().clearFailure(place);
    return result;
  } catch (error) {
    useFleet.getState().commandFailed(place, message(error));
    return undefined;
  } finally {
    useFleet.getState().requestSettled();
  }
}

// ------------------------------------------------------------------ notices

const noticeTimers = new Map<string, ReturnType<typeof setTimeout>>();
const browserNotices = new Map<string, Notification>();

function browserNotificationsUsable(): boolean {
  return !window.t3fleet && typeof Notification !== "undefined" && Notification.permission === "granted";
}

function showNotice(intent: NotificationIntent): void {
  // The user is looking at this agent in a focused window: its panel already says it.
  if (noticeInView(intent, { focused: document.hasFocus(), agentKey: useFleet.getState().openKey })) return;
  const condition = noticeCondition(intent);
  const critical = noticeIsCritical(intent.reason);
  useFleet.getState().upsertNotice({ condition, intent, critical });
  clearTimeout(noticeTimers.get(condition));
  if (!critical) noticeTimers.set(condition, setTimeout(() => withdrawNotice(condition), TRANSIENT_NOTICE_MS));
  // The browser gets the same notifications as the Electron shell's native ones, one per condition.
  if (browserNotificationsUsable()) {
    browserNotices.get(condition)?.close();
    const shown = new Notification(intent.title, { body: intent.body, tag: condition });
    shown.onclick = () => {
      window.focus();
      if (intent.agentKey) void commands.openAgent(intent.agentKey);
    };
    browserNotices.set(condition, shown);
  }
}

export function withdrawNotice(condition: string): void {
  clearTimeout(noticeTimers.get(condition));
  noticeTimers.delete(condition);
  browserNotices.get(condition)?.close();
  browserNotices.delete(condition);
  useFleet.getState().withdrawNotices([condition]);
}

/** After every change of the facts: notices whose condition cleared go away. */
function withdrawClearedNotices(): void {
  const { notices, agents, environments } = useFleet.getState();
  for (const notice of notices.values()) {
    const { intent } = notice;
    const agent = intent.agentKey ? agents.get(intent.agentKey) : undefined;
    if (!noticeStillHolds(intent, agent, environments.get(intent.environmentId))) withdrawNotice(notice.condition);
  }
}

// ------------------------------------------------------------------ the tab: title and icon

const VARIANT_COLOURS: Record<TrayVariant, string> = {
  "nothing-paired": "#868e96",
  failed: "#e03131",
  "needs-you": "#d9480f",
  "host-offline": "#f59f00",
  working: "#2f9e44",
  "all-clear": "#3b5bdb",
};

let lastTab = "";

function updateTab(): void {
  const { agents, environments, bridgeLostAt, loaded } = useFleet.getState();
  if (!loaded) return;
  const { counts } = glance(displayFacts(agents, bridgeLostAt), environments);
  const variant = bridgeLostAt ? "host-offline" : trayVariant(counts);
  const title = bridgeLostAt ? "T3 Fleet — service not reachable" : counts.needsYou ? `(${counts.needsYou}) ${fleetHeadline(counts)} — T3 Fleet` : `T3 Fleet — ${fleetHeadline(counts)}`;
  const key = `${title}|${variant}|${counts.needsYou}`;
  if (key === lastTab) return;
  lastTab = key;
  document.title = title;
  const label = counts.needsYou > 99 ? "99+" : counts.needsYou > 0 ? String(counts.needsYou) : "";
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="16" cy="16" r="15" fill="${VARIANT_COLOURS[variant]}"/>${label ? `<text x="16" y="21.5" font-family="sans-serif" font-size="${label.length > 2 ? 11 : 15}" font-weight="700" text-anchor="middle" fill="#fff">${label}</text>` : ""}</svg>`;
  let link = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
  if (!link) {
    link = document.createElement("link");
    link.rel = "icon";
    document.head.append(link);
  }
  link.type = "image/svg+xml";
  link.href = `data:image/svg+xml,${encodeURIComponent(svg)}`;
  link.dataset.variant = variant;
  link.dataset.count = String(counts.needsYou);
}

// ------------------------------------------------------------------ the window's view choices

const VIEW_STORAGE_KEY = "t3fleet.view";

/** Grouping and the "older" age outlive a reload: restored at start, saved when they change. */
function keepViewChoices(): () => void {
  try {
    const saved = JSON.parse(localStorage.getItem(VIEW_STORAGE_KEY) ?? "{}") as { grouping?: unknown; olderThanMs?: unknown };
    if (saved.grouping === "machine" || saved.grouping === "project") useFleet.getState().setGrouping(saved.grouping);
    if (typeof saved.olderThanMs === "number" && Number.isFinite(saved.olderThanMs) && saved.olderThanMs >= 3_600_000) useFleet.getState().setOlderThan(saved.olderThanMs);
  } catch {
    // A corrupt or unavailable store keeps the defaults.
  }
  return useFleet.subscribe((state, previous) => {
    if (state.grouping === previous.grouping && state.olderThanMs === previous.olderThanMs) return;
    try {
      localStorage.setItem(VIEW_STORAGE_KEY, JSON.stringify({ grouping: state.grouping, olderThanMs: state.olderThanMs }));
    } catch {
      // Storage may be unavailable (private mode); the choice then lasts for this page.
    }
  });
}

/** The pane the user chose lasts for this window's session (a new window starts on the inbox when anything needs you). */
const PANE_STORAGE_KEY = "t3fleet.pane";

function savedPane(): PaneView | null {
  try {
    const saved = sessionStorage.getItem(PANE_STORAGE_KEY);
    return saved === "inbox" || saved === "fleet" ? saved : null;
  } catch {
    return null;
  }
}

/** The inbox as the window shows it now (the pane's filters and snoozes). */
export function currentInbox(): ReturnType<typeof inbox> {
  const state = useFleet.getState();
  return inbox(displayFacts(state.agents, state.bridgeLostAt), state.filters, state.search, state.snoozed, Date.now());
}

/** After an answer, an approval, an acknowledgement or a snooze from the inbox, its next item opens (Linear's triage). */
function advanceInbox(handledKey: string, before: string[]): void {
  const state = useFleet.getState();
  if (state.view !== "inbox" || state.openKey !== handledKey || !before.includes(handledKey)) return;
  // The handled agent may still read "needs you" until its server confirms; it is not offered again.
  const left = new Set(currentInbox().items.map((agent) => agent.key));
  left.delete(handledKey);
  const target = before.slice(before.indexOf(handledKey) + 1).find((key) => left.has(key)) ?? [...left][0];
  if (target) void commands.openAgent(target).then(() => focusTargets.panel?.());
  else {
    commands.closeAgent();
    focusTargets.pane?.();
  }
}

const inboxKeys = () => currentInbox().items.map((agent) => agent.key);

// ------------------------------------------------------------------ bridge subscription

// A streaming turn sends transcript deltas faster than frames on a busy machine: the first one since
// the last frame is applied at once (no added latency), the rest of that frame together just before
// it paints, so the transcript renders (and parses its streaming message) about once per frame.
let pendingDetailDeltas: AgentDetailDelta[] = [];
const MAX_QUEUED_DETAIL_DELTAS = 100;

function flushDetailDeltas(): void {
  const deltas = pendingDetailDeltas;
  pendingDetailDeltas = [];
  // One task: React renders once for all of them.
  for (const delta of deltas) useFleet.getState().applyDetailDelta(delta);
}

/** A whole detail replaces what the deltas before it built: those are applied first, in order. */
function receiveDetail(detail: AgentDetail): void {
  flushDetailDeltas();
  useFleet.getState().receiveDetail(detail);
}

export function startEffects(instance: Bridge): () => void {
  bridge = instance;
  const store = useFleet.getState;
  // Deltas arriving within one frame are applied together: one tree rebuild per frame at most.
  let pendingDeltas: Extract<BridgeEvent, { type: "fleet.delta" }>[] = [];
  const flushDeltas = () => {
    const deltas = pendingDeltas;
    pendingDeltas = [];
    if (deltas.length) store().applyDeltas(deltas);
    withdrawClearedNotices();
    // A machine filter for a machine that is gone would leave an empty, unexplained list.
    const { filters, environments } = store();
    if (filters.environmentId && !environments.has(filters.environmentId)) store().setFilters({ environmentId: null });
  };
  // One frame callback for fleet and transcript deltas, so a frame with both renders once.
  let frameRequested = false;
  let fleetDeltasDue = false;
  const flushFrame = () => {
    frameRequested = false;
    flushDetailDeltas();
    if (fleetDeltasDue) {
      fleetDeltasDue = false;
      flushDeltas();
    }
  };
  const requestFrame = () => {
    if (frameRequested) return;
    frameRequested = true;
    requestAnimationFrame(flushFrame);
  };
  const offEvents = instance.onEvent((event) => {
    switch (event.type) {
      case "fleet.snapshot":
        pendingDeltas = [];
        store().applySnapshot(event.snapshot);
        // The first view: the pane chosen earlier in this window, else the inbox when anything needs the user.
        if (store().view === null) store().setView(savedPane() ?? (currentInbox().items.length > 0 ? "inbox" : "fleet"));
        withdrawClearedNotices();
        if (store().openKey) void commands.openAgent(store().openKey!);
        break;
      case "fleet.delta":
        pendingDeltas.push(event);
        fleetDeltasDue = true;
        requestFrame();
        break;
      case "agent.detail":
        receiveDetail(event.detail);
        break;
      case "agent.detailDelta":
        // The first delta since the last frame shows at once; those after it join the next frame.
        // A hidden window gets no frames: a long queue is applied without waiting for one.
        if (!frameRequested) store().applyDetailDelta(event.delta);
        else if (pendingDetailDeltas.push(event.delta) >= MAX_QUEUED_DETAIL_DELTAS) flushDetailDeltas();
        requestFrame();
        break;
      case "delivery":
        store().receiveDelivery(event.delivery);
        break;
      case "notification":
        showNotice(event.notification);
        break;
      case "settings":
        store().receiveSettings(event.settings);
        break;
      case "ui.openAgent":
        void commands.openAgent(event.key);
        break;
      case "ui.openPairing":
        commands.openPairing();
        break;
    }
  });
  // The shell may say why the page has no access (a spent launch link); it shows with the service's notices.
  const offConnection = instance.onConnection((connected: boolean, problem?: string) => store().bridgeConnected(connected, new Date().toISOString(), problem ?? null));
  const offTab = useFleet.subscribe((state, previous) => {
    if (state.version !== previous.version || state.loaded !== previous.loaded) updateTab();
  });
  void run("pairing", () => instance.request("pair.probeLocal", {})).then((localServer) => store().localServerFound(localServer ?? null));
  const offView = keepViewChoices();
  // The desktop shell's native notifications follow the same rule as the notices here (shared/fleet/notice-in-view.ts): it is told which agent this window shows.
  const offShowing = useFleet.subscribe((state, previous) => {
    if (state.openKey !== previous.openKey) instance.showing?.(state.openKey);
  });
  return () => {
    offEvents();
    offConnection();
    offTab();
    offView();
    offShowing();
  };
}

// ------------------------------------------------------------------ commands

export const commands = {
  select(key: string | null): void {
    useFleet.getState().select(key);
  },

  async openAgent(key: string): Promise<void> {
    const state = useFleet.getState();
    const previous = state.openKey;
    if (previous && previous !== key) void run(`agent:${previous}`, () => requireBridge().request("agent.close", { key: previous }));
    state.showAgent(key);
    const detail = await run(`agent:${key}`, () => requireBridge().request("agent.open", { key }));
    if (detail) receiveDetail(detail);
  },

  closeAgent(): void {
    const { openKey, showAgent } = useFleet.getState();
    if (openKey) void run(`agent:${openKey}`, () => requireBridge().request("agent.close", { key: openKey }));
    showAgent(null);
  },

  /** Sends a message; true when the service took it (its delivery then reports what happened). */
  /** Sends a message with the intent the composer showed (steer, queue or a new turn). */
  async send(key: string, text: string, expectedIntent: BridgeParams<"agent.send">["expectedIntent"]): Promise<boolean> {
    const delivery = await run(`composer:${key}`, () => requireBridge().request("agent.send", { key, text, expectedIntent }));
    if (delivery) useFleet.getState().receiveDelivery(delivery);
    return delivery !== undefined;
  },

  async respondApproval(key: string, requestId: string, decision: ApprovalDecision): Promise<void> {
    const before = inboxKeys();
    const delivery = await run(`request:${requestId}`, () => requireBridge().request("agent.respondApproval", { key, requestId, decision }));
    if (delivery) useFleet.getState().receiveDelivery(delivery);
    if (delivery) advanceInbox(key, before);
  },

  async respondInput(key: string, requestId: string, answers: QuestionAnswers): Promise<void> {
    const before = inboxKeys();
    const delivery = await run(`request:${requestId}`, () => requireBridge().request("agent.respondInput", { key, requestId, answers }));
    if (delivery) useFleet.getState().receiveDelivery(delivery);
    if (delivery) advanceInbox(key, before);
  },

  /**
   * Puts an agent aside from the inbox for `ms`, or (null) until what it needs changes; the next item
   * opens. The window keeps it at once; a snooze for a while also goes to T3 where the server has
   * snooze (T3's wake time then comes back in the agent's facts), and T3's refusal is kept to be said.
   */
  snooze(key: string, ms: number | null): void {
    const agent = useFleet.getState().agents.get(key);
    if (!agent) return;
    const before = inboxKeys();
    const snooze = { until: ms === null ? null : Date.now() + ms, fingerprint: needFingerprint(agent) };
    useFleet.getState().snooze(key, snooze);
    advanceInbox(key, before);
    if (snooze.until === null) return;
    const until = new Date(snooze.until).toISOString();
    void requireBridge()
      .request("agent.snooze", { key, until })
      .then(
        (result) => result.note,
        (error: unknown) => `T3 Fleet could not ask T3: ${message(error)}`,
      )
      .then((note) => {
        // Only the snooze this call made: the user may have snoozed it again meanwhile.
        if (note && useFleet.getState().snoozed.get(key) === snooze) useFleet.getState().snooze(key, { ...snooze, note });
      });
  },

  /** The left pane: the inbox or the fleet tree; the choice lasts for this window's session. */
  setView(view: PaneView): void {
    useFleet.getState().setView(view);
    try {
      sessionStorage.setItem(PANE_STORAGE_KEY, view);
    } catch {
      // Storage may be unavailable; the choice then lasts for this page.
    }
  },

  /** `holdQueued`: keep the messages T3 queued behind the turn from starting (held in the fleet). */
  async interrupt(key: string, holdQueued = false): Promise<void> {
    const delivery = await run(`agent:${key}`, () => requireBridge().request("agent.interrupt", { key, ...(holdQueued && { holdQueued }) }));
    if (delivery) useFleet.getState().receiveDelivery(delivery);
  },

  /** Sends a held message now (once). */
  async releaseHeld(commandId: string): Promise<void> {
    const delivery = await run(`delivery:${commandId}`, () => requireBridge().request("delivery.release", { commandId }));
    if (delivery) useFleet.getState().receiveDelivery(delivery);
  },

  async discardHeld(commandId: string): Promise<void> {
    const delivery = await run(`delivery:${commandId}`, () => requireBridge().request("delivery.discard", { commandId }));
    if (delivery) useFleet.getState().receiveDelivery(delivery);
  },

  async stop(key: string): Promise<void> {
    const delivery = await run(`agent:${key}`, () => requireBridge().request("agent.stop", { key }));
    if (delivery) useFleet.getState().receiveDelivery(delivery);
  },

  /** Removes a failure or stall from "need you" until it changes (settled in T3 too where the server can). */
  async acknowledge(key: string): Promise<void> {
    const before = inboxKeys();
    const done = await run(`agent:${key}`, () => requireBridge().request("agent.acknowledge", { key }));
    if (done) advanceInbox(key, before);
  },

  async recheck(commandId: string): Promise<void> {
    const delivery = await run(`delivery:${commandId}`, () => requireBridge().request("delivery.recheck", { commandId }));
    if (delivery) useFleet.getState().receiveDelivery(delivery);
  },

  /** Withdraws a message still queued behind a running turn; the cancel is tracked like any send. */
  async cancelQueued(commandId: string): Promise<void> {
    const delivery = await run(`delivery:${commandId}`, () => requireBridge().request("delivery.cancelQueued", { commandId }));
    if (delivery) useFleet.getState().receiveDelivery(delivery);
  },

  /** Links from thread content go through the bridge, which opens only parsed http(s) URLs. */
  async openLink(url: string, place = "links"): Promise<void> {
    const opened = await run(place, async () => {
      await requireBridge().request("link.open", { url });
      return true;
    });
    if (opened && !window.t3fleet) window.open(url, "_blank", "noopener,noreferrer");
  },

  /** The thread in its machine's T3 web app, through the bridge like any link. */
  async openInT3(agent: AgentView): Promise<void> {
    const env = useFleet.getState().environments.get(agent.environmentId);
    const url = env ? t3ThreadUrl(env, agent.threadId) : null;
    if (!url) {
      useFleet.getState().commandFailed(`agent:${agent.key}`, "This machine has no web address to open.");
      return;
    }
    await commands.openLink(url, `agent:${agent.key}`);
  },

  openPairing(environmentId: string | null = null, input = ""): void {
    useFleet.getState().openPairing(environmentId, input);
  },

  closePairing(): void {
    useFleet.getState().closePairing();
  },

  async inspectPairing(): Promise<void> {
    const { pairing, pairingBusy } = useFleet.getState();
    pairingBusy();
    try {
      useFleet.getState().pairingPreviewed(await tracked(() => requireBridge().request("pair.inspect", { input: pairing.input })));
    } catch (error) {
      useFleet.getState().pairingFailed(message(error));
    }
  },

  async confirmPairing(): Promise<void> {
    const { pairing, pairingBusy } = useFleet.getState();
    pairingBusy();
    try {
      await tracked(() =>
        requireBridge().request("pair.confirm", {
          input: pairing.input,
          ...(pairing.token.trim() && { token: pairing.token.trim() }),
          ...(pairing.label.trim() && { label: pairing.label.trim() }),
          ...(pairing.moved && { moved: true }),
        }),
      );
      commands.closePairing();
    } catch (error) {
      useFleet.getState().pairingFailed(message(error));
    }
  },

  async updateSettings(patch: BridgeParams<"settings.update">): Promise<void> {
    const state = useFleet.getState();
    const current = state.settings;
    // Show the choice at once; the service's answer (or its refusal) then settles it.
    if (current) state.receiveSettings({ ...current, ...patch, notifications: { ...current.notifications, ...patch.notifications } });
    const saved = await run("settings", () => requireBridge().request("settings.update", patch));
    useFleet.getState().receiveSettings(saved ?? current);
  },

  /** Asks for the browser's permission to notify (must run from a click). */
  async enableBrowserNotifications(): Promise<NotificationPermission> {
    if (typeof Notification === "undefined") return "denied";
    return Notification.requestPermission();
  },

  async renameEnvironment(environmentId: string, label: string): Promise<void> {
    await run(`env:${environmentId}`, () => requireBridge().request("environment.rename", { environmentId, label }));
  },

  async removeEnvironment(environmentId: string): Promise<void> {
    await run(`env:${environmentId}`, () => requireBridge().request("environment.remove", { environmentId }));
  },

  async muteEnvironment(environmentId: string, muted: boolean): Promise<void> {
    await run(`env:${environmentId}`, () => requireBridge().request("environment.mute", { environmentId, muted }));
  },

  async retryEnvironment(environmentId: string): Promise<void> {
    await run(`env:${environmentId}`, () => requireBridge().request("environment.retry", { environmentId }));
  },
};

// ------------------------------------------------------------------ Find machines (state/discovery.ts)

export const discoveryCommands = {
  /** Looks again with the ports and ssh hosts the user added; the service answers a repeat within minutes from its last scan. */
  async scan(refresh = false): Promise<void> {
    const { ports, sshHosts } = useDiscovery.getState();
    const report = await run("discovery", () => requireBridge().request("discovery.scan", { ports, sshHosts, refresh }));
    if (report) useDiscovery.getState().scanned(report);
  },
  /** One action: the service mints a pairing code with T3's CLI (here or over ssh) and pairs. */
  async pair(id: string): Promise<void> {
    useDiscovery.getState().pairingStarted(id);
    try {
      const paired = await run(`discovery:${id}`, () => requireBridge().request("discovery.pair", { id }));
      if (paired) useDiscovery.getState().pairedAs(id, paired.label);
    } finally {
      useDiscovery.getState().pairingStarted(null);
    }
  },
};

/** Counts a request in flight whose failure its caller shows itself (the pairing dialog). */
async function tracked<T>(request: () => Promise<T>): Promise<T> {
  useFleet.getState().requestStarted();
  try {
    return await request();
  } finally {
    useFleet.getState().requestSettled();
  }
}

// ------------------------------------------------------------------ the registry's commands

/** The agent the user is on: the open one, else the selected one. */
export function currentAgent(): AgentView | null {
  const { openKey, selectedKey, agents, bridgeLostAt } = useFleet.getState();
  const key = openKey ?? selectedKey;
  const agent = key ? agents.get(key) : undefined;
  return agent ? displayAgent(agent, bridgeLostAt) : null;
}

export function commandContext(): CommandContext {
  const state = useFleet.getState();
  const agent = currentAgent();
  const environment = agent && !state.bridgeLostAt ? (state.environments.get(agent.environmentId) ?? null) : null;
  return {
    agent,
    environment,
    agentPanelOpen: state.openKey !== null,
    machines: state.environments.size,
    needYou: glance(displayFacts(state.agents, state.bridgeLostAt), state.environments).needYou.length,
    notificationsPaused: state.settings?.notificationsPaused ?? false,
    grouping: state.grouping,
  };
}

/** Elements the palette and keys focus (the views register them; effects never reach into React). */
export const focusTargets: {
  search?: () => void;
  composer?: () => void;
  answer?: () => void;
  panel?: () => void;
  pane?: () => void;
  /** The open agent's interrupt asks first when messages are queued (true: it took over). */
  interrupt?: (key: string) => boolean;
} = {};

/** Runs a registry command: the palette, the key handler and the buttons all come here. */
export function runCommand(id: CommandId): void {
  const state = useFleet.getState();
  const agent = currentAgent();
  const approval = agent?.pending.find((request) => request.kind === "approval");
  switch (id) {
    case "palette.open":
      state.showPalette(true);
      return;
    case "fleet.next-needs-you": {
      // The inbox as shown (its filters, without snoozed items), so `n` and "3 of 7" agree.
      const next = nextNeedingYou(currentInbox().items, state.openKey ?? state.selectedKey);
      if (next) void commands.openAgent(next).then(() => focusTargets.panel?.());
      return;
    }
    case "fleet.search":
      focusTargets.search?.();
      return;
    case "fleet.group-toggle":
      state.setGrouping(state.grouping === "machine" ? "project" : "machine");
      return;
    case "agent.open":
      if (agent) void commands.openAgent(agent.key);
      return;
    case "agent.accept":
    case "agent.accept-session":
    case "agent.decline":
      if (agent && approval?.kind === "approval") {
        const wanted: ApprovalDecision = id === "agent.accept" ? "accept" : id === "agent.decline" ? "decline" : "acceptForSession";
        // Only a decision the request offers is sent.
        if (approval.decisions.some((option) => option.decision === wanted)) void commands.respondApproval(agent.key, approval.requestId, wanted);
        else useFleet.getState().commandFailed(`request:${approval.requestId}`, `This request does not offer “${wanted}”.`);
      }
      return;
    case "agent.answer":
      if (agent && state.openKey !== agent.key) void commands.openAgent(agent.key).then(() => focusTargets.answer?.());
      else focusTargets.answer?.();
      return;
    case "agent.acknowledge":
      if (agent) void commands.acknowledge(agent.key);
      return;
    case "agent.snooze":
    case "agent.snooze-hour":
      if (agent) commands.snooze(agent.key, id === "agent.snooze" ? null : 3_600_000);
      return;
    case "view.toggle":
      commands.setView(paneView(state.view, 0) === "inbox" ? "fleet" : "inbox");
      return;
    case "agent.interrupt":
      if (agent && !focusTargets.interrupt?.(agent.key)) void commands.interrupt(agent.key);
      return;
    case "agent.stop":
      if (agent) void commands.stop(agent.key);
      return;
    case "agent.open-in-t3":
      if (agent) void commands.openInT3(agent);
      return;
    case "agent.message":
      focusTargets.composer?.();
      return;
    case "pairing.open":
    case "app.open":
      if (id === "pairing.open") commands.openPairing();
      return;
    case "settings.open":
      state.showSettings(true);
      return;
    case "notifications.pause":
    case "notifications.resume":
      void commands.updateSettings({ notificationsPaused: id === "notifications.pause" });
      return;
    case "fleet.down":
    case "fleet.up":
    case "fleet.expand":
    case "fleet.collapse":
    case "app.quit":
      // Tree movement needs the visible rows (App's key handler); quitting is the tray's.
      return;
  }
}
