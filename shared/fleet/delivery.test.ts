import { describe, expect, it } from "vitest";
import { messageIntent } from "./delivery";
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

  it("refuses on an offline, unauthorized or read-only environment", () => {
    expect(messageIntent(agent("idle"), env({ connection: { phase: "offline", since: "t", lastConfirmedAt: null, nextAttemptAt: "t", attempt: 1, error: "x" } }))).toMatchObject({ kind: "refused", reason: "studio is offline." });
    expect(messageIntent(agent("idle"), env({ connection: { phase: "unauthorized", since: "t", lastConfirmedAt: null, error: "x" } }))).toMatchObject({ kind: "refused", reason: expect.stringContaining("Pair it again") });
    expect(messageIntent(agent("idle"), env({ readOnly: true }))).toMatchObject({ kind: "refused", reason: expect.stringContaining("read-only") });
  });

  it("says 'starts a new turn after the running one' wherever T3 does not steer, and steers only where it does", () => {
    expect(messageIntent(agent("running", { providerDriver: "codex", capabilities: queueing }), env())).toEqual({
      kind: "queue",
      runId: "turn-1",
      note: expect.stringContaining("starts a new turn after this one"),
      choices: ["queue"],
    });
    expect(messageIntent(agent("running"), env())).toEqual({ kind: "steer", runId: "turn-1", note: null, choices: ["steer"] });
  });

  it("lets the user choose where the agent offers both, and falls back to the default otherwise", () => {
    expect(messageIntent(agent("running", { capabilities: choosing }), env())).toMatchObject({ kind: "queue", choices: ["queue", "steer"] });
    expect(messageIntent(agent("running", { capabilities: choosing }), env(), "steer")).toMatchObject({ kind: "steer" });
    expect(messageIntent(agent("running", { capabilities: queueing }), env(), "steer")).toMatchObject({ kind: "queue" });
  });

  it("a stuck start offers to send anyway, with a warning; an archived thread refuses", () => {
    expect(messageIntent(agent("stuck"), env())).toEqual({ kind: "new-turn", note: expect.stringContaining("stopping the session is the safer way out"), insteadOffer: "stop" });
    expect(messageIntent(agent("ended", { lifecycle: "archived" }), env())).toMatchObject({ kind: "refused", reason: expect.stringContaining("archived") });
  });

  it("a turn asked for and not yet running offers no second turn", () => {
    expect(messageIntent(agent("starting", { startingSince: "t" }), env())).toMatchObject({ kind: "refused", reason: expect.stringContaining("second turn") });
  });
});
