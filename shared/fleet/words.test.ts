// Words a user reads where the servers speak in ids and timestamps (issue 40 point 4).
import { describe, expect, it } from "vitest";
import { agentAsOfWords, durationWords, idWords, offlineWords, plainText, stalledWords } from "./words";

describe("words", () => {
  it("names the servers' ids in words, never raw", () => {
    expect(idWords("provider_native")).toBe("the provider's own subagent");
    expect(idWords("app_owned")).toBe("run by T3");
    expect(idWords("local_agent")).toBe("local subagent");
    expect(idWords("mcp-elicitation")).toBe("tool's question");
    expect(idWords("full-access")).toBe("full access");
    // One the fleet does not know yet still reads as words.
    expect(idWords("remote_agent")).toBe("remote agent");
    for (const id of ["provider_native", "app_owned", "local_agent", "file-change", "approval-required", "some_new-kind"])
      expect(idWords(id)).not.toMatch(/[_-]/);
  });

  it("quotes an agent's Markdown question as plain text", () => {
    expect(plainText("Run `npm test`?")).toBe("Run npm test?");
    expect(plainText("`api` and `web`?")).toBe("api and web?");
  });

  it("says a span of time as people do", () => {
    expect(durationWords(40_000)).toBe("40 s");
    expect(durationWords(12 * 60_000)).toBe("12 min");
    expect(durationWords(125 * 60_000)).toBe("2 h 5 min");
    expect(durationWords(20 * 3_600_000)).toBe("20 h");
    expect(durationWords(3 * 86_400_000)).toBe("3 days");
  });

  it("a stall says for how long nothing happened, up to now, or to when its machine was last confirmed", () => {
    const now = Date.parse("2026-12-01T12:00:00Z");
    const stalled = { reason: null, lastActivityAt: "2026-12-01T11:48:00Z", asOf: null, status: "running" as const };
    expect(stalledWords(stalled, now)).toBe("stalled: no activity for 12 min");
    expect(stalledWords({ ...stalled, status: "unknown", asOf: "2026-12-01T11:53:00Z" }, now)).toBe("stalled: no activity for 5 min");
    expect(stalledWords({ ...stalled, reason: "Waiting for capacity" }, now)).toBe("stalled: Waiting for capacity");
  });
});

describe("offline, named and as of", () => {
  const time = (ms: number) => new Date(ms).toISOString().slice(11, 16);
  const away = { since: "2026-12-01T14:06:00Z", nextAttemptAt: "2026-12-01T14:07:00Z", attempt: 2, error: "refused" };
  it("a machine is offline as of its last confirmation, with its name, never a bare unknown", () => {
    expect(offlineWords("build-box", { phase: "offline", lastConfirmedAt: "2026-12-01T14:05:00Z", ...away }, time)).toBe("build-box offline as of 14:05");
    expect(offlineWords("build-box", { phase: "connecting", since: "2026-12-01T14:06:00Z", lastConfirmedAt: null }, time)).toBe(
      "build-box offline, not reached since 14:06",
    );
    expect(offlineWords("build-box", { phase: "online", since: "2026-12-01T14:06:00Z" }, time)).toBe("build-box online");
  });

  it("an agent away says what it was doing and as of when, naming what is away", () => {
    const agent = { lastKnownStatus: "running" as const, stalled: false, heldUp: false, asOf: "2026-12-01T14:05:00Z" };
    expect(agentAsOfWords(agent, "build-box offline", time)).toBe("was running · build-box offline as of 14:05");
    expect(agentAsOfWords({ ...agent, stalled: true }, "T3 Fleet's service not reachable", time)).toBe(
      "was stalled · T3 Fleet's service not reachable as of 14:05",
    );
  });
});
