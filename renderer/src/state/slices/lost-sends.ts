// Messages whose answer was lost with the page's socket to T3 Fleet (issue 43): the request had left,
// so the service may have it (it records each message before dispatching it, deliveries.ts). Such a
// message is neither shown failed nor sendable until the service's deliveries are known again (the
// snapshot after reconnecting): one the service has ends as its receipt; one it has not may be sent
// again, under the same commandId, which the service and T3 both take as the same send.
import type { StateCreator } from "zustand";
import type { BridgeParams } from "../../../../shared/bridge/contract";
import type { FleetState } from "../store";

export interface LostSend {
  key: string;
  commandId: string;
  text: string;
  expectedIntent: BridgeParams<"agent.send">["expectedIntent"];
  /** The service's deliveries were read since the loss and do not hold it: it never reached T3 Fleet's record. */
  checked: boolean;
}

export interface LostSendsSlice {
  /** By agent key: at most one per composer. */
  lostSends: Map<string, LostSend>;
  sendLost(lost: Omit<LostSend, "checked">): void;
  /** The service's deliveries are known again (a snapshot): those it has are done, the rest were not received. */
  checkLostSends(): void;
  /** The service answered for this commandId (its receipt shows): the message is no longer lost. */
  lostSendAnswered(commandId: string): void;
  /** The composer sent another message instead: the lost one is no longer offered. */
  forgetLostSend(key: string): void;
  /** Lost sends kept across a reload of this tab (lost-sends.ts), unchecked until the next snapshot. */
  restoreLostSends(lost: Omit<LostSend, "checked">[]): void;
}

export const createLostSendsSlice: StateCreator<FleetState, [], [], LostSendsSlice> = (set, get) => ({
  lostSends: new Map(),
  sendLost: (lost) =>
    set((state) =>
      // Its receipt came before the socket dropped: the service has it, nothing is lost.
      state.deliveries.has(lost.commandId) ? {} : { lostSends: new Map(state.lostSends).set(lost.key, { ...lost, checked: false }) },
    ),
  checkLostSends: () => {
    const { lostSends, deliveries } = get();
    if (lostSends.size === 0) return;
    const next = new Map<string, LostSend>();
    for (const [key, lost] of lostSends) if (!deliveries.has(lost.commandId)) next.set(key, lost.checked ? lost : { ...lost, checked: true });
    set({ lostSends: next });
  },
  lostSendAnswered: (commandId) => {
    const { lostSends } = get();
    const found = [...lostSends.values()].find((lost) => lost.commandId === commandId);
    if (!found) return;
    const next = new Map(lostSends);
    next.delete(found.key);
    set({ lostSends: next });
  },
  forgetLostSend: (key) => {
    if (!get().lostSends.has(key)) return;
    const next = new Map(get().lostSends);
    next.delete(key);
    set({ lostSends: next });
  },
  restoreLostSends: (restored) =>
    set((state) => {
      const next = new Map(state.lostSends);
      for (const lost of restored) if (!next.has(lost.key)) next.set(lost.key, { ...lost, checked: false });
      return { lostSends: next };
    }),
});
