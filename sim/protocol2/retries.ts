// A simulated protocol-2 provider retrying through a capacity limit (`#capacity`, sim/protocol2/steps.ts).
// Contract only, not recorded: T3's contract gives an `error` turn item an optional `retry` {attempt,
// maxAttempts, retryDelayMs}, nullable where the provider does not say (Codex says only that it
// will retry, its counters in the text), and the protocol note (§16.7) reads an `error` item still
// `running` as a retry in flight. No recording of T3's V2 engine holds one (../shared/fixtures/t3-v2dev), so
// what the item becomes once the retry gets through (`completed` here) is this simulator's reading.
import { PROVIDERS } from "../providers";
import type { AgentStep, EngineCore, Runner, ThreadState } from "./engine-types";
import type { TurnItem } from "./model";

type RetryStep = Extract<AgentStep, { kind: "retry" }>;

/** One `error` item, `running` while the provider retries (one update per attempt), then `completed`; `next` goes on with the run. */
export function retryThroughLimit(engine: EngineCore, state: ThreadState, runner: Runner, step: RetryStep, next: () => void): void {
  const codex = state.provider === "codex";
  const base = engine.newItem(state, runner.run, "running", null, { providerTurnId: runner.providerTurn?.id ?? null });
  const item = (attempt: number): Extract<TurnItem, { type: "error" }> => ({
    ...base,
    type: "error",
    failure: {
      class: step.failureClass,
      // Codex's own words under T3 0.0.42 (docs/t3-protocols.md, "Harnesses under T3"); the others' are the simulator's.
      message: codex ? `Reconnecting... ${attempt}/${step.attempts}` : `${PROVIDERS[state.provider].label} is over capacity; retrying`,
      code: "rate_limited",
      retryable: true,
    },
    retry: { attempt, maxAttempts: codex ? null : step.attempts, retryDelayMs: codex ? null : step.retryDelayMs },
  });
  const attempt = (n: number): void => {
    if (state.runner !== runner || runner.phase !== "running") return;
    if (n > step.attempts) {
      engine.putItem(state, { ...item(step.attempts), status: "completed", completedAt: engine.now() });
      next();
      return;
    }
    engine.putItem(state, item(n));
    clearTimeout(runner.timer);
    runner.timer = setTimeout(() => attempt(n + 1), step.retryDelayMs);
  };
  attempt(1);
}
