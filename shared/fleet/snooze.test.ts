// The inbox's snooze rule: T3's own snooze from the facts, this window's snooze "until it changes"
// or for a while, and which one the UI names.
import { describe, expect, it } from "vitest";
import { activeSnooze, snoozedAgents, snoozeWords, wakeDescription } from "./snooze";
import { agentView } from "./views.testkit";
import { needFingerprint } from "./views";

const NOW = Date.parse("2026-12-01T15:00:00.000Z");
const HOUR = 3_600_000;
const time = (ms: number) => new Date(ms).toISOString().slice(11, 16);

describe("snooze", () => {
  const failed = agentView("a", "failed", { reason: "turn failed" });

  it("a snooze made in T3 (by any client) holds until its wake time, and is named as the server's", () => {
    const snoozed = { ...failed, snoozedUntil: new Date(NOW + HOUR).toISOString() };
    expect(activeSnooze(snoozed, undefined, NOW)).toEqual({ where: "server", until: NOW + HOUR });
    expect(snoozeWords(activeSnooze(snoozed, undefined, NOW)!, time)).toBe("Snoozed on the server until 16:00");
    expect(activeSnooze(snoozed, undefined, NOW + HOUR)).toBeNull();
    expect(activeSnooze({ ...failed, snoozedUntil: null }, undefined, NOW)).toBeNull();
  });

  it("this window's snooze holds until its time, or until what the agent needs changes", () => {
    const fingerprint = needFingerprint(failed);
    expect(activeSnooze(failed, { until: null, fingerprint }, NOW)).toEqual({ where: "fleet", until: null, note: null });
    expect(snoozeWords(activeSnooze(failed, { until: null, fingerprint }, NOW)!, time)).toBe("Snoozed by T3 Fleet until it changes");
    expect(activeSnooze(failed, { until: NOW + HOUR, fingerprint, note: "T3 refused it: pending approval" }, NOW)).toEqual({
      where: "fleet",
      until: NOW + HOUR,
      note: "T3 refused it: pending approval",
    });
    expect(snoozeWords(activeSnooze(failed, { until: NOW + HOUR, fingerprint }, NOW)!, time)).toBe("Snoozed by T3 Fleet until 16:00");
    expect(activeSnooze(failed, { until: NOW + HOUR, fingerprint }, NOW + HOUR)).toBeNull();
    expect(activeSnooze({ ...failed, reason: "another failure" }, { until: null, fingerprint }, NOW)).toBeNull();
  });

  it("a snooze this window sent to T3 still ends when what the agent needs changes, before T3's wake time", () => {
    const fingerprint = needFingerprint(failed);
    const own = { until: NOW + HOUR, fingerprint };
    const snoozedUntil = new Date(NOW + HOUR).toISOString();
    expect(activeSnooze({ ...failed, snoozedUntil }, own, NOW)).toMatchObject({ where: "server" });
    const blocked = agentView("a", "needs-approval", { snoozedUntil });
    expect(activeSnooze(blocked, own, NOW)).toBeNull();
  });

  it("the snoozed list: agents that need the user and are snoozed, soonest to wake first, each with why", () => {
    const asking = agentView("q", "needs-input", { title: "Asking" });
    const serverSnoozed = { ...failed, key: "e/s", title: "Server", snoozedUntil: new Date(NOW + 2 * HOUR).toISOString() };
    const soon = agentView("w", "failed", { title: "Soon" });
    const idle = agentView("i", "idle", { title: "Idle", snoozedUntil: new Date(NOW + HOUR).toISOString() });
    const awake = agentView("x", "failed", { title: "Awake" });
    const own = new Map([
      [asking.key, { until: null, fingerprint: needFingerprint(asking) }],
      [soon.key, { until: NOW + HOUR, fingerprint: needFingerprint(soon) }],
    ]);
    const list = snoozedAgents([asking, serverSnoozed, soon, idle, awake], own, NOW);
    expect(list.map((entry) => entry.agent.title)).toEqual(["Soon", "Server", "Asking"]);
    expect(list.map((entry) => wakeDescription(entry.snooze, time))).toEqual([
      "wakes at 16:00 (kept by T3 Fleet only)",
      "wakes at 17:00 (kept by T3)",
      "until what it needs changes (kept by T3 Fleet)",
    ]);
    expect(snoozedAgents([soon], own, NOW + HOUR)).toEqual([]);
  });
});
