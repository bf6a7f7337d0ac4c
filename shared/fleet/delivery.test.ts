import { describe, expect, it } from "vitest";
import { intentHeadline, messageIntent } from "./delivery";
import type { RunningMessageBehaviour } from "./facts";
import type { AgentStatus, AgentView } from "./types";
import { agentView, environmentView } from "./views.testkit";

const env = environmentView;
const agent = (status: AgentStatus, patch: Partial<AgentView> = {}) => agentView("t", status, patch);

const queueing = { whileRunning: ["queue" as const], interrupt: true, stop: true, cancelQueued: false, answer: true, settle: false, snooze: false };
const choosing = { ...queueing, whileRunning: ["queue" as const, "steer" as const] };

describe("message intent", () => {
  it.each([
    ["running", "steer"],
    ["idle", "new-turn"],
    ["failed", "new-turn"],
    ["interrupted", "new-turn"],
    ["ended", "new-turn"],
    ["starting", "refused"],
    ["needs-approval", "refused"],
    ["needs-input", "refused"],
    ["needs-auth", "refused"],
    ["deleted", "refused"],
  ] as const)("%s → %s", (status, kind) => {
    expect(messageIntent(agent(status), env()).kind).toBe(kind);
  });

  it("while an approval or a question waits, says calmly what to do first rather than an error", () => {
    const approval = messageIntent(agent("needs-approval"), env());
    expect(approval).toEqual({ kind: "refused", reason: "Answer the approval above first; your message can be sent after.", wait: true });
    expect(intentHeadline(approval)).toBe("Answer the approval above first; your message can be sent after.");
    expect(intentHeadline(messageIntent(agent("needs-input"), env()))).toBe("Answer the question above first; your message can be sent after.");
    // A real obstacle still says it cannot send.
    expect(intentHeadline(messageIntent(agent("deleted"), env()))).toBe("Cannot send: This thread was deleted.");
  });

  it("refuses on an offline, unauthorized or read-only environment", () => {
    expect(
      messageIntent(agent("idle"), env({ connection: { phase: "offline", since: "t", lastConfirmedAt: null, nextAttemptAt: "t", attempt: 1, error: "x" } })),
    ).toMatchObject({ kind: "refused", reason: "studio is offline." });
    expect(messageIntent(agent("idle"), env({ connection: { phase: "unauthorized", since: "t", lastConfirmedAt: null, error: "x" } }))).toMatchObject({
      kind: "refused",
      reason: expect.stringContaining("Pair it again"),
    });
    expect(messageIntent(agent("idle"), env({ readOnly: true }))).toMatchObject({ kind: "refused", reason: expect.stringContaining("read-only") });
  });

  it("says before sending what each harness does with a message while it runs, as observed, and that an unrun harness is not observed", () => {
    const running = (driver: string, runningMessage: RunningMessageBehaviour, mode: "steer" | "queue") =>
      messageIntent(agent("running", { providerDriver: driver, capabilities: { ...queueing, whileRunning: [mode], runningMessage } }), env());
    expect(running("codex", "interrupts-reply", "steer")).toEqual({
      kind: "steer",
      runId: "turn-1",
      note: "Codex stops the reply it is writing and continues this turn with your message.",
      choices: ["steer"],
    });
    expect(running("opencode", "after-reply", "steer")).toMatchObject({
      kind: "steer",
      note: "OpenCode reads it when its current reply ends, in this same turn.",
    });
    const claude = running("claudeAgent", "next-turn", "queue");
    expect(claude).toMatchObject({ kind: "queue", note: "Claude finishes this turn first; T3 then starts a new turn with your message." });
    expect(intentHeadline(claude)).toBe("Start a new turn after the running one");
    const grok = running("grok", "unobserved", "queue");
    expect(grok).toMatchObject({
      kind: "queue",
      unobserved: true,
      note: expect.stringMatching(/^Not yet observed for Grok: .* whether it joined this turn or started a new one\.$/),
    });
    expect(intentHeadline(grok)).toBe("Send while the turn runs");
  });

  it("on protocol 2 (T3 reports each outcome) a queued message starts a new turn after the running one, and a steer needs no note", () => {
    expect(messageIntent(agent("running", { capabilities: queueing }), env())).toMatchObject({
      kind: "queue",
      note: "T3 starts a new turn with it after the running one.",
    });
    expect(messageIntent(agent("running"), env())).toEqual({ kind: "steer", runId: "turn-1", note: null, choices: ["steer"] });
  });

  it("lets the user choose where the agent offers both, and falls back to the default otherwise", () => {
    expect(messageIntent(agent("running", { capabilities: choosing }), env())).toMatchObject({ kind: "queue", choices: ["queue", "steer"] });
    expect(messageIntent(agent("running", { capabilities: choosing }), env(), "steer")).toMatchObject({ kind: "steer" });
    expect(messageIntent(agent("running", { capabilities: queueing }), env(), "steer")).toMatchObject({ kind: "queue" });
  });

  it("a stuck start offers to send anyway, with a warning; an archived thread refuses", () => {
    expect(messageIntent(agent("stuck"), env())).toEqual({
      kind: "new-turn",
      note: expect.stringContaining("stopping the session is the safer way out"),
      insteadOffer: "stop",
    });
    expect(messageIntent(agent("ended", { lifecycle: "archived" }), env())).toMatchObject({ kind: "refused", reason: expect.stringContaining("archived") });
  });

  it("a turn asked for and not yet running offers no second turn", () => {
    expect(messageIntent(agent("starting", { startingSince: "t" }), env())).toMatchObject({ kind: "refused", reason: expect.stringContaining("second turn") });
  });
});
