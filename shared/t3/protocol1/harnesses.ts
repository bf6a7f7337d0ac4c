// What each harness does under a protocol-1 T3 server, as observed with the real CLIs against a
// scripted model (integration/realt3/harnesses.real.test.ts on T3 0.0.42; the table in
// docs/t3-protocols.md, "Harnesses under T3"). Protocol 1 reports none of this itself, so these
// facts stand in for it; a harness no test has run is `unobserved`, never guessed.
import type { ApprovalOption, RunningMessageBehaviour, RunningMessageMode } from "../../fleet/facts";

export interface ObservedHarness {
  /** What a message sent while a turn runs does (the model server saw it, and T3's turns agree). */
  runningMessage: RunningMessageBehaviour;
  /** The decisions T3 carried out for this harness's approvals when the request lists none itself. */
  decisions: readonly ApprovalOption[];
}

const ACCEPT: ApprovalOption = { decision: "accept", label: "Allow once", warning: null };
const ACCEPT_FOR_SESSION: ApprovalOption = { decision: "acceptForSession", label: "Allow for this session", warning: null };
const DECLINE: ApprovalOption = { decision: "decline", label: "Deny", warning: null };
// The words protocol 2 uses for the same decisions (shared/t3/protocol2/projection.ts), so they read alike on both.
const CANCEL: ApprovalOption = { decision: "cancel", label: "Deny and stop", warning: null };

const OBSERVED: Record<string, ObservedHarness> = {
  // Codex stops the response it is streaming and samples again with the message: one turn.
  codex: { runningMessage: "interrupts-reply", decisions: Object.freeze([ACCEPT, ACCEPT_FOR_SESSION, DECLINE, CANCEL]) },
  // Claude Code finishes its reply and ends the turn; T3 then starts a new turn with the message.
  claudeAgent: { runningMessage: "next-turn", decisions: Object.freeze([ACCEPT, ACCEPT_FOR_SESSION, DECLINE, CANCEL]) },
  // OpenCode finishes its reply, then reads the message in the same turn.
  opencode: { runningMessage: "after-reply", decisions: Object.freeze([ACCEPT, ACCEPT_FOR_SESSION, DECLINE]) },
};

/** Decisions T3 accepts on protocol 1, offered for a harness no test has run. */
const UNOBSERVED: ObservedHarness = { runningMessage: "unobserved", decisions: Object.freeze([ACCEPT, ACCEPT_FOR_SESSION, DECLINE]) };

/** What is known of `driver` (T3's provider driver, or the instance id where the driver is unknown). */
export function observedHarness(driver: string | null): ObservedHarness {
  return (driver && OBSERVED[driver]) || UNOBSERVED;
}

/** The one mode protocol 1 carries out: a message joins the running turn, or waits for the next. */
export function runningModeOf(behaviour: RunningMessageBehaviour): RunningMessageMode {
  return behaviour === "interrupts-reply" || behaviour === "after-reply" ? "steer" : "queue";
}
