// The one place with side effects: bridge subscriptions into the store, and the commands that
// every entry point (buttons, shortcuts) runs.
import type { BridgeEvent, BridgeParams } from "../../../shared/bridge/contract";
import type { ApprovalDecision } from "../../../shared/fleet/facts";
import { type Bridge, BridgeRequestError } from "../bridge/client";
import { EMPTY_PAIRING, useFleet } from "./store";

let bridge: Bridge | undefined;

function requireBridge(): Bridge {
  if (!bridge) throw new Error("bridge not started");
  return bridge;
}

function message(error: unknown): string {
  return error instanceof BridgeRequestError || error instanceof Error ? error.message : String(error);
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
  };
  const offEvents = instance.onEvent((event) => {
    switch (event.type) {
      case "fleet.snapshot":
        pendingDeltas = [];
        store().applySnapshot(event.snapshot);
        if (store().openKey) void commands.openAgent(store().openKey!);
        break;
      case "fleet.delta":
        if (pendingDeltas.push(event) === 1) requestAnimationFrame(flushDeltas);
        break;
      case "agent.detail":
        store().setDetail(event.detail);
        break;
      case "agent.detailDelta":
        store().applyDetailDelta(event.delta);
        break;
      case "delivery":
        store().setDelivery(event.delivery);
        break;
      case "notification":
        store().pushToast(event.notification);
        break;
      case "settings":
        store().set({ settings: event.settings });
        break;
      case "ui.openAgent":
        void commands.openAgent(event.key);
        break;
      case "ui.openPairing":
        commands.openPairing();
        break;
    }
  });
  // A page without access (spent launch link) says so where the service's notices appear.
  const offConnection = instance.onConnection((connected, problem) => store().set(problem ? { connected, notices: [problem] } : { connected }));
  void instance.request("pair.probeLocal", {}).then((localServer) => store().set({ localServer }), () => {});
  return () => {
    offEvents();
    offConnection();
  };
}

export const commands = {
  select(key: string | null): void {
    useFleet.getState().set({ selectedKey: key });
  },

  async openAgent(key: string): Promise<void> {
    const state = useFleet.getState();
    if (state.openKey && state.openKey !== key) void requireBridge().request("agent.close", { key: state.openKey });
    state.set({ openKey: key, selectedKey: key });
    try {
      state.setDetail(await requireBridge().request("agent.open", { key }));
    } catch (error) {
      state.pushToast({ id: `open-${key}-${Date.now()}`, reason: "summary", environmentId: "", agentKey: null, title: "Could not open the agent", body: message(error) });
    }
  },

  closeAgent(): void {
    const state = useFleet.getState();
    if (state.openKey) void requireBridge().request("agent.close", { key: state.openKey });
    state.set({ openKey: null });
  },

  async send(key: string, text: string, expectedIntent: "steer" | "queue" | "new-turn"): Promise<void> {
    const delivery = await requireBridge().request("agent.send", { key, text, expectedIntent });
    useFleet.getState().setDelivery(delivery);
  },

  async respondApproval(key: string, requestId: string, decision: ApprovalDecision): Promise<void> {
    useFleet.getState().setDelivery(await requireBridge().request("agent.respondApproval", { key, requestId, decision }));
  },

  async respondInput(key: string, requestId: string, answers: Record<string, string | string[]>): Promise<void> {
    useFleet.getState().setDelivery(await requireBridge().request("agent.respondInput", { key, requestId, answers }));
  },

  async interrupt(key: string): Promise<void> {
    useFleet.getState().setDelivery(await requireBridge().request("agent.interrupt", { key }));
  },

  async stop(key: string): Promise<void> {
    useFleet.getState().setDelivery(await requireBridge().request("agent.stop", { key }));
  },

  async recheck(commandId: string): Promise<void> {
    useFleet.getState().setDelivery(await requireBridge().request("delivery.recheck", { commandId }));
  },

  /** Links from thread content go through the bridge, which opens only parsed http(s) URLs. */
  async openLink(url: string): Promise<void> {
    try {
      await requireBridge().request("link.open", { url });
      if (!window.t3fleet) window.open(url, "_blank", "noopener,noreferrer");
    } catch (error) {
      useFleet.getState().pushToast({ id: `link-${Date.now()}`, reason: "summary", environmentId: "", agentKey: null, title: "Link not opened", body: message(error) });
    }
  },

  openPairing(environmentId: string | null = null, input = ""): void {
    useFleet.getState().set({ pairing: { ...EMPTY_PAIRING, open: true, environmentId, input } });
  },

  closePairing(): void {
    useFleet.getState().set({ pairing: EMPTY_PAIRING });
  },

  async inspectPairing(): Promise<void> {
    const { pairing, setPairing } = useFleet.getState();
    setPairing({ busy: true, error: null, preview: null });
    try {
      setPairing({ busy: false, preview: await requireBridge().request("pair.inspect", { input: pairing.input }) });
    } catch (error) {
      setPairing({ busy: false, error: message(error) });
    }
  },

  async confirmPairing(): Promise<void> {
    const { pairing, setPairing } = useFleet.getState();
    setPairing({ busy: true, error: null });
    try {
      await requireBridge().request("pair.confirm", {
        input: pairing.input,
        ...(pairing.token.trim() && { token: pairing.token.trim() }),
        ...(pairing.label.trim() && { label: pairing.label.trim() }),
      });
      commands.closePairing();
    } catch (error) {
      setPairing({ busy: false, error: message(error) });
    }
  },

  async updateSettings(patch: BridgeParams<"settings.update">): Promise<void> {
    const state = useFleet.getState();
    const current = state.settings;
    // Show the choice at once; the service's answer (or its refusal) then settles it.
    if (current) state.set({ settings: { ...current, ...patch, notifications: { ...current.notifications, ...patch.notifications } } });
    try {
      state.set({ settings: await requireBridge().request("settings.update", patch) });
    } catch (error) {
      state.set({ settings: current });
      state.pushToast({ id: `settings-${Date.now()}`, reason: "summary", environmentId: "", agentKey: null, title: "Settings not saved", body: message(error) });
    }
  },

  async renameEnvironment(environmentId: string, label: string): Promise<void> {
    await requireBridge().request("environment.rename", { environmentId, label });
  },

  async removeEnvironment(environmentId: string): Promise<void> {
    await requireBridge().request("environment.remove", { environmentId });
  },

  async muteEnvironment(environmentId: string, muted: boolean): Promise<void> {
    await requireBridge().request("environment.mute", { environmentId, muted });
  },

  async retryEnvironment(environmentId: string): Promise<void> {
    await requireBridge().request("environment.retry", { environmentId });
  },
};
