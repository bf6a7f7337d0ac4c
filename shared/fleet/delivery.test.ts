import { describe, expect, it } from "vitest";
import { messageIntent } from "./delivery";
import type { AgentStatus, AgentView } from "./types";
import { agentView, environmentView } from "./views.testkit";

const env = environmentView;
const agent = (status: AgentStatus, patch: Partial<AgentView> = {}) => agentView("t", status, patch);

describe("message intent", () => {
  it.each([
    ["running", "steer"],
    ["idle", "new-turn"],
    ["failed", "new-turn"],
    ["ended", "new-turn"],
    ["starting", "refused"],
    ["needs-approval", "refused"],
    ["needs-input", "refused"],
  ] as const)("%s → %s", (status, kind) => {
    expect(messageIntent(agent(status), env()).kind).toBe(kind);
  });

  it("refuses on an offline, unauthorized or read-only environment", () => {
    expect(messageIntent(agent("idle"), env({ connection: { phase: "offline", since: "t", lastConfirmedAt: null, nextAttemptAt: "t", attempt: 1, error: "x" } }))).toMatchObject({ kind: "refused", reason: "studio is offline." });
    expect(messageIntent(agent("idle"), env({ connection: { phase: "unauthorized", since: "t", lastConfirmedAt: null, error: "x" } }))).toMatchObject({ kind: "refused", reason: expect.stringContaining("Pair it again") });
    expect(messageIntent(agent("idle"), env({ readOnly: true }))).toMatchObject({ kind: "refused", reason: expect.stringContaining("read-only") });
  });

  it("says when a running agent will not really be steered", () => {
    expect(messageIntent(agent("running", { providerDriver: "grok" }), env())).toMatchObject({ kind: "steer", note: expect.stringContaining("new turn after this one") });
    expect(messageIntent(agent("running"), env({ generation: "fork" }))).toMatchObject({ kind: "steer", note: expect.stringContaining("second turn") });
    expect(messageIntent(agent("running"), env())).toEqual({ kind: "steer", turnId: "turn-1", note: null });
  });
});
