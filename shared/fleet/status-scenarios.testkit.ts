// The shared status scenario table: situations a user can recognise, and the agent status the fleet
// must show for each, whatever protocol the machine speaks. Every protocol adapter's tests build its
// own wire for each situation (or say it cannot occur on that protocol) and run the table through
// its mapping and the fleet model, so both protocols give the same statuses for the same situations.
import { expect, it } from "vitest";
import type { AgentFacts, ThreadDetailFacts } from "./facts";
import { FleetModel } from "./model";
import type { AgentStatus } from "./types";

export type StatusSituation =
  | "never-ran"
  | "running"
  | "turn-completed"
  | "approval-pending-while-running"
  | "question-pending"
  | "auth-refresh-pending"
  | "turn-failed"
  | "turn-could-not-start"
  | "capacity-limit-on-running-turn"
  | "turn-interrupted"
  | "turn-cancelled"
  | "turn-rolled-back"
  | "message-sent-no-turn-yet"
  | "session-starting"
  | "ready-gap-before-first-turn"
  | "queued-behind-active-run"
  | "answer-final-background-draining"
  | "session-stopped"
  | "archived"
  | "deleted";

export interface StatusScenario {
  situation: StatusSituation;
  status: AgentStatus;
  /** A part of the reason the user must see, when the status needs one. */
  reason?: string;
  /** Running but held up by the provider (shown with the stalled look); false when not given. */
  heldUp?: boolean;
}

export const STATUS_SCENARIOS: readonly StatusScenario[] = [
  { situation: "never-ran", status: "idle" },
  { situation: "running", status: "running" },
  { situation: "turn-completed", status: "idle" },
  { situation: "approval-pending-while-running", status: "needs-approval" },
  { situation: "question-pending", status: "needs-input" },
  { situation: "auth-refresh-pending", status: "needs-auth" },
  { situation: "turn-failed", status: "failed", reason: "failure" },
  { situation: "turn-could-not-start", status: "failed" },
  // The provider retries through a capacity limit: the run goes on, held up (not failed).
  { situation: "capacity-limit-on-running-turn", status: "running", reason: "capacity", heldUp: true },
  { situation: "turn-interrupted", status: "interrupted" },
  { situation: "turn-cancelled", status: "interrupted", reason: "Cancelled" },
  { situation: "turn-rolled-back", status: "interrupted", reason: "Rolled back" },
  { situation: "message-sent-no-turn-yet", status: "starting" },
  { situation: "session-starting", status: "starting" },
  { situation: "ready-gap-before-first-turn", status: "starting" },
  { situation: "queued-behind-active-run", status: "queued" },
  { situation: "answer-final-background-draining", status: "waiting" },
  { situation: "session-stopped", status: "ended" },
  { situation: "archived", status: "ended", reason: "Archived" },
  { situation: "deleted", status: "deleted" },
];

/**
 * What an adapter's wire gives for one situation: the facts its fleet stream reported, in order
 * (the last one is current; earlier ones let a situation depend on what came before), and what a
 * followed thread stream revealed. `undefined`: the situation cannot occur on this protocol.
 */
export interface ScenarioInput {
  facts: AgentFacts[];
  detail?: ThreadDetailFacts;
}

/** Registers one test per scenario; `build` maps a situation to the adapter's facts. */
export function runStatusScenarios(build: (situation: StatusSituation) => ScenarioInput | undefined): void {
  for (const scenario of STATUS_SCENARIOS) {
    const input = build(scenario.situation);
    if (!input) continue;
    it(`${scenario.situation} → ${scenario.status}`, () => {
      const model = new FleetModel({ stalledAfterMs: 60_000, now: () => Date.parse("2026-11-30T00:30:00.000Z") });
      model.upsertEnvironment(
        { environmentId: "env", label: "studio", baseUrl: "http://studio", serverVersion: null, generation: "upstream", readOnly: false, muted: false },
        { phase: "online", since: "2026-11-30T00:00:00.000Z" },
      );
      const threadId = input.facts.at(-1)!.threadId;
      for (const facts of input.facts) model.upsertAgent("env", facts);
      if (input.detail) model.setThreadDetail("env", threadId, input.detail);
      const agent = model.agent(`env/${threadId}`)!;
      expect(agent.status).toBe(scenario.status);
      if (scenario.reason) expect(agent.reason ?? "").toContain(scenario.reason);
      expect(agent.heldUp).toBe(scenario.heldUp ?? false);
      if (scenario.heldUp) expect(agent.stalled).toBe(true);
    });
  }
}
