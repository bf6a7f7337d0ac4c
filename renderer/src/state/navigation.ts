// Where the window is: the selected agent, the open agent (the service follows its transcript while
// it is open) and the left pane.
import { receiveDetail } from "./detail-deltas";
import { requireBridge, run } from "./requests";
import type { PaneView } from "./slices/ui";
import { useFleet } from "./store";
import { savePane } from "./view-choices";

export const navigation = {
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

  /** The left pane: the inbox or the fleet tree; the choice lasts for this window's session. */
  setView(view: PaneView): void {
    useFleet.getState().setView(view);
    savePane(view);
  },
};
