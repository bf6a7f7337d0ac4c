// The window's side effects start here: the bridge's events into the store (fleet and transcript
// deltas applied once per animation frame, together), the tray's commands into the dispatcher, and the subscriptions that
// keep the tab, the saved view choices and the desktop shell in step with the store.
import { type BridgeEvent, ShellCommand } from "../../../shared/bridge/contract";
import type { Bridge } from "../bridge/client";
import { flushDetailDeltas, receiveDetail, receiveDetailDelta } from "./detail-deltas";
import { dispatch } from "./dispatch";
import { currentInbox } from "./inbox";
import { handledList } from "./handled-list";
import { navigation } from "./navigation";
import { useNewAgent } from "./new-agent";
import { showNotice, withdrawClearedNotices } from "./notices";
import { run, setRequestBridge } from "./requests";
import { useFleet } from "./store";
import { keepDiffCurrent } from "./diff-view";
import { keepFollowingCreations } from "./new-agent";
import { keepLostSends } from "./lost-sends";
import { keepTabUpToDate } from "./tab";
import { keepViewChoices, savedPane } from "./view-choices";

export function startEffects(instance: Bridge): () => void {
  setRequestBridge(instance);
  const store = useFleet.getState;
  // Before the first snapshot: a message lost before this tab reloaded is checked against it.
  const offLostSends = keepLostSends();
  // Fleet deltas arriving within one frame are applied together: one tree rebuild per frame at most.
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
  // One frame callback for fleet and transcript deltas: however many batches came since the last
  // frame, the window renders once for them (detail-deltas.ts).
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
        // The service's deliveries are known again: a lost message it has is its receipt now.
        store().checkLostSends();
        for (const creation of event.snapshot.creations ?? []) useNewAgent.getState().receive(creation);
        // The first view: the pane chosen earlier in this window, else the inbox when anything needs the user.
        if (store().view === null) store().setView(savedPane() ?? (currentInbox().items.length > 0 ? "inbox" : "fleet"));
        withdrawClearedNotices();
        handledList.resync();
        if (store().openKey) void navigation.openAgent(store().openKey!);
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
        // Applied in the frame, requested before the batch's acknowledgement (renderer/src/bridge/client.ts), so applied before it.
        receiveDetailDelta(event.delta);
        requestFrame();
        break;
      case "delivery":
        store().receiveDelivery(event.delivery);
        store().lostSendAnswered(event.delivery.commandId);
        break;
      case "creation":
        useNewAgent.getState().receive(event.creation);
        break;
      case "notification":
        showNotice(event.notification);
        break;
      case "settings":
        store().receiveSettings(event.settings);
        break;
      case "handled":
        handledList.received(event.entry);
        break;
      case "ui.openAgent":
        void navigation.openAgent(event.key);
        break;
      case "ui.command": {
        // From the desktop shell (its tray menu): checked like anything that crosses a boundary.
        const shell = ShellCommand.safeParse(event);
        if (shell.success) dispatch(shell.data.id, "tray");
        break;
      }
    }
  });
  // The shell may say why the page has no access (a spent launch link); it shows with the service's notices.
  const offConnection = instance.onConnection((connected: boolean, problem?: string) =>
    store().bridgeConnected(connected, new Date().toISOString(), problem ?? null),
  );
  const offTab = keepTabUpToDate();
  const offDiff = keepDiffCurrent();
  const offCreations = keepFollowingCreations();
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
    offDiff();
    offCreations();
    offView();
    offShowing();
    offLostSends();
  };
}
