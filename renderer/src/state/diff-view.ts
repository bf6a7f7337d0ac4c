// Showing a diff: the window asks the service for it (bridge `agent.diff`, read from T3 only now,
// electron/fleet/diffs.ts) and keeps the answer in the diff slice. Opening a diff reviews nothing by
// itself: the user marks changes reviewed (e), with a receipt and Undo (agent-commands.ts). A diff that
// could not be read because its machine was away is read again by itself once the machine is back.
import { errorMessage, requireBridge, tracked } from "./requests";
import type { DiffRequest, DiffShown } from "./slices/diff";
import { useFleet } from "./store";

export const diffView = {
  async show(key: string, scope: DiffRequest): Promise<void> {
    const store = useFleet.getState();
    store.showDiff({ key, scope, result: null, error: null });
    const current = () => {
      const shown = useFleet.getState().diff;
      return shown !== null && shown.key === key && JSON.stringify(shown.scope) === JSON.stringify(scope);
    };
    try {
      const result = await tracked(() => requireBridge().request("agent.diff", { key, scope }));
      if (current()) useFleet.getState().showDiff({ key, scope, result, error: null });
    } catch (error) {
      if (current()) useFleet.getState().showDiff({ key, scope, result: null, error: errorMessage(error) });
    }
  },

  close(): void {
    useFleet.getState().showDiff(null);
  },
};

/** The diff shown waits for its machine: the service could not ask T3 because the machine was not online. */
function waitsForMachine(shown: DiffShown): boolean {
  return shown.result?.state === "unavailable" && shown.result.offline === true;
}

/**
 * Reads the diff shown again when its machine comes back online (a diff opened while it was away
 * said so); only on that change, so an answer that still finds it away is not asked again in a loop.
 */
export function keepDiffCurrent(): () => void {
  let watched: { key: string; online: boolean } | null = null;
  return useFleet.subscribe((state) => {
    const shown = state.diff;
    if (!shown) {
      watched = null;
      return;
    }
    const environmentId = shown.key.slice(0, shown.key.indexOf("/"));
    const online = state.bridgeLostAt === null && state.environments.get(environmentId)?.connection.phase === "online";
    const wasOnline = watched?.key === shown.key ? watched.online : online;
    watched = { key: shown.key, online };
    if (online && !wasOnline && waitsForMachine(shown)) void diffView.show(shown.key, shown.scope);
  });
}
