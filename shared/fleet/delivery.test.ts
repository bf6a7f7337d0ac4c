import { describe, expect, it } from "vitest";
import { messageIntent } from "./delivery";
import type { AgentStatus, AgentView, ConnectionPhase, EnvironmentView } from "./types";

const online: ConnectionPhase = { phase: "online", since: "t" };
function env(patch: Partial<EnvironmentView> = {}): EnvironmentView {
  return { environmentId: "e", label: "studio", baseUrl: "http://x", serverVersion: "0.0.33", generation: "upstream", readOnly: false, muted: false, connection: online, counts: {}, ...patch };
}
function agent(status: AgentStatus, patch: Partial<AgentView> = {}): AgentView {
  return {
    key: "e/t",
    environmentId: "e",
    threadId: "t",
    parentThreadId: null,
    orphaned: false,
    title: "T",
    projectId: "p",
    providerInstanceId: "codex",
    providerDriver: "codex",
    model: "m",
    effort: null,
    runtimeMode: "full-access",
    status,
    lastKnownStatus: status,
    asOf: null,
    stalled: false,
    reason: null,
    activeTurnId: status === "running" ? "turn-1" : null,
    pending: [],
    subagents: [],
    updatedAt: "t",
    lastActivityAt: "t",
    ...patch,
  };
}

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
