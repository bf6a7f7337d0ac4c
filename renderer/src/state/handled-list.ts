// The "handled today" list as the fleet service keeps it (electron/fleet/handled-log.ts): read when
// the list opens, kept current by the service's `handled` events, read again after a reconnect.
import type { HandledEntry } from "../../../shared/fleet/handled";
import { startOfLocalDay } from "../../../shared/fleet/handled";
import { requireBridge, run } from "./requests";
import { useFleet } from "./store";

export const handledList = {
  /** Reads today's list (since local midnight) from the service. */
  async load(): Promise<void> {
    const result = await run("handled", () => requireBridge().request("handled.list", { since: startOfLocalDay(Date.now()) }));
    if (result) useFleet.getState().setHandled(result.entries, result.letGo);
  },

  received(entry: HandledEntry): void {
    useFleet.getState().addHandled(entry);
  },

  /** After a (re)connection events may have been missed: read again if the list is open, else on its next opening. */
  resync(): void {
    if (useFleet.getState().listOpen === "handled") void handledList.load();
    else useFleet.getState().setHandled(null);
  },

  open(): void {
    useFleet.getState().showList("handled");
    void handledList.load();
  },
};
