import { describe, expect, it } from "vitest";
import { ACTIONS, actionForKey, paletteActions, type ActionContext } from "./action-registry";
import { connectionWords, countWords, fleetCounts, isOlder, needYouOrder, serverWords, t3ThreadUrl, triageRank } from "./views";
import { agentView, environmentView } from "./views.testkit";

const NOW = Date.parse("2026-11-29T10:00:00.000Z");
const ago = (ms: number) => new Date(NOW - ms).toISOString();

describe("shared fleet views", () => {
  it("names what a machine runs: version and, once connected, the protocol", () => {
    expect(serverWords({ serverVersion: "0.0.33", protocol: 2 })).toBe("T3 0.0.33 · protocol 2");
    expect(serverWords({ serverVersion: "0.0.42", protocol: 1 })).toBe("T3 0.0.42 · protocol 1");
    expect(serverWords({ serverVersion: "0.0.42", protocol: null })).toBe("T3 0.0.42");
    expect(serverWords({ serverVersion: null })).toBe("T3 ?");
  });

  it("triage: approvals, questions, failures and stalls first, then running, then the rest by recency", () => {
    const agents = [
      agentView("idle-new", "idle", { lastActivityAt: ago(1_000) }),
      agentView("run", "running", { lastActivityAt: ago(5_000) }),
      agentView("failed", "failed", { lastActivityAt: ago(60_000) }),
      agentView("stalled", "running", { stalled: true, lastActivityAt: ago(600_000) }),
      agentView("approval", "needs-approval", { lastActivityAt: ago(2_000) }),
      { ...agentView("acked", "failed", { lastActivityAt: ago(500) }), acknowledged: true },
    ];
    expect(agents.map(triageRank)).toEqual([2, 1, 0, 0, 0, 2]);
    expect(needYouOrder(agents).map((a) => a.threadId)).toEqual(["approval", "failed", "stalled"]);
    const counts = fleetCounts([environmentView()], agents);
    expect(counts.needsYou).toBe(3);
    expect(counts.byStatus).toMatchObject({ failed: 2, running: 2 });
  });

  it("folds idle agents older than the configured age, never ones that need you or run", () => {
    expect(isOlder(agentView("a", "idle", { lastActivityAt: ago(3 * 86_400_000) }), NOW, 86_400_000)).toBe(true);
    expect(isOlder(agentView("a", "idle", { lastActivityAt: ago(3_600_000) }), NOW, 86_400_000)).toBe(false);
    expect(isOlder(agentView("a", "failed", { lastActivityAt: ago(3 * 86_400_000) }), NOW, 86_400_000)).toBe(false);
  });

  it("says what a connection does and offers the one action that helps", () => {
    const nextAttemptAt = new Date(NOW + 11_200).toISOString();
    expect(connectionWords({ phase: "offline", since: "t", lastConfirmedAt: "t", nextAttemptAt, attempt: 3, error: "x" }, NOW)).toEqual({
      words: "offline · retrying in 12 s",
      action: "retry",
    });
    expect(connectionWords({ phase: "connecting", since: "t", lastConfirmedAt: "t" }, NOW)).toEqual({ words: "checking now", action: null });
    expect(connectionWords({ phase: "unauthorized", since: "t", lastConfirmedAt: null, error: "revoked" }, NOW)).toEqual({
      words: "needs pairing again",
      action: "pair",
    });
  });

  it("counts read as words in severity order", () => {
    expect(countWords({ idle: 2, "needs-approval": 1 }).map((entry) => entry.words)).toEqual(["1 needs approval", "2 idle"]);
    expect(countWords({ running: 1, "held-up": 1, stalled: 2, failed: 1 }).map((entry) => entry.words)).toEqual([
      "1 failed",
      "2 stalled",
      "1 held up",
      "1 running",
    ]);
  });

  it("opens a thread at its machine's T3 web app route", () => {
    expect(t3ThreadUrl({ baseUrl: "http://box:3773", environmentId: "env-1", generation: "upstream" }, "t 1")).toBe("http://box:3773/env-1/t%201");
    expect(t3ThreadUrl({ baseUrl: "http://box:3773/", environmentId: "env-1", generation: "fork" }, "t1")).toBe("http://box:3773/t1");
  });
});

describe("command registry", () => {
  const context: ActionContext = {
    agent: null,
    environment: null,
    agentPanelOpen: false,
    machines: 1,
    needYou: 0,
    notificationsPaused: false,
    grouping: "machine",
  };

  it("every id is unique and no key runs two commands", () => {
    expect(new Set(ACTIONS.map((spec) => spec.id)).size).toBe(ACTIONS.length);
    const keys = ACTIONS.filter((spec) => spec.surfaces.includes("keys")).flatMap((spec) => spec.keys);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("keys find their command; agent commands are enabled only when they can act", () => {
    expect(actionForKey({ key: "k", ctrlKey: true, metaKey: false, altKey: false })?.id).toBe("palette.open");
    expect(actionForKey({ key: "a", ctrlKey: false, metaKey: false, altKey: false })?.id).toBe("agent.accept");
    const waiting = agentView("w", "needs-approval", {
      pending: [
        {
          requestId: "r",
          kind: "approval",
          detail: "npm test",
          requestKind: "command",
          decisions: [{ decision: "accept", label: "Accept", warning: null }],
          createdAt: "t",
        },
      ],
    });
    const onWaiting = { ...context, agent: waiting, environment: environmentView() };
    expect(paletteActions(onWaiting, "accept").map((spec) => spec.id)).toEqual(["agent.accept", "agent.accept-session"]);
    // Named as the approval cards name them on both protocols; found by the older words too.
    expect(paletteActions(onWaiting, "allow").map((spec) => spec.label)).toEqual(["Allow once", "Allow for this session"]);
    expect(paletteActions(onWaiting, "approval").map((spec) => spec.label)).toEqual(["Allow once", "Allow for this session", "Deny"]);
    expect(paletteActions(context, "accept")).toEqual([]);
    expect(paletteActions({ ...context, agent: agentView("f", "failed"), environment: environmentView() }, "ack").map((spec) => spec.id)).toEqual([
      "agent.acknowledge",
    ]);
  });
});
