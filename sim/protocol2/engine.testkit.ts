// Waiting on the simulated protocol-2 engine itself (its events and agent steps), for tests that
// must act at a point only the server sees, such as "the provider turn is running" before a steer.
import type { V2Engine } from "./engine";

export function untilEngine(engine: V2Engine, check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      engine.off("event", listener);
      engine.off("step", listener);
      reject(new Error(`timed out waiting for: ${what}`));
    }, timeoutMs);
    const listener = () => {
      if (!check()) return;
      clearTimeout(timer);
      engine.off("event", listener);
      engine.off("step", listener);
      resolve();
    };
    engine.on("event", listener);
    engine.on("step", listener);
  });
}

/** True while the thread's active run has a provider turn running: the moment T3 takes a steer. */
export function providerTurnRunning(engine: V2Engine, threadId: string): boolean {
  const state = engine.threads.get(threadId);
  const run = state?.runs.find((entry) => entry.status === "running");
  return run !== undefined && state!.providerTurns.some((turn) => turn.status === "running" && turn.runAttemptId === run.activeAttemptId);
}
