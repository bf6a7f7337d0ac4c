// Showing a diff: the window asks the service for it (bridge `agent.diff`, read from T3 only now,
// electron/fleet/diffs.ts) and keeps the answer in the diff slice. Opening an agent's diff counts as
// having looked at its changes (the "finished with changes" inbox item then clears).
import { errorMessage, requireBridge, tracked } from "./requests";
import type { DiffRequest } from "./slices/diff";
import { useFleet } from "./store";

export const diffView = {
  async show(key: string, scope: DiffRequest): Promise<void> {
    const store = useFleet.getState();
    store.showDiff({ key, scope, result: null, error: null });
    const agent = store.agents.get(key);
    const newest = agent?.changes?.at(-1)?.turnCount;
    if (newest !== undefined) store.markChangesSeen(key, newest);
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
