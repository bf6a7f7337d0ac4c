// The headless shell's access never outlives its use: launch links expire, sessions end with the
// process and after long idleness, and a run of failed exchanges is refused and logged once.
// Time is a clock the test moves, never a sleep.
import { describe, expect, it } from "vitest";
import { BRIDGE_CLOSE_UNAUTHORIZED } from "../../shared/bridge/contract";
import { ShellSessions } from "./shell-sessions";
import { cleanups, exchangeLaunchCode, httpRequest, openBridge, startShell } from "./shell.testkit";

const MINUTE = 60_000;

function clock() {
  let now = Date.parse("2026-12-01T12:00:00Z");
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

async function connected(origin: string, session: string | undefined) {
  const bridge = await openBridge(origin, session);
  cleanups.push(() => bridge.ws.close());
  return bridge;
}

describe("headless shell session lifetime", () => {
  it("a launch link opens nothing once its minutes have passed", async () => {
    const time = clock();
    const { shell } = await startShell({ now: time.now, sessionTiming: { launchCodeTtlMs: 10 * MINUTE } });
    const fresh = shell.newLaunchUrl();
    const stale = shell.newLaunchUrl();
    time.advance(9 * MINUTE);
    expect(await exchangeLaunchCode(shell.origin, fresh)).toBeDefined();
    time.advance(2 * MINUTE);
    const code = new URLSearchParams(new URL(stale).hash.slice(1)).get("code");
    const answer = await httpRequest(shell.origin, "/session", {
      method: "POST",
      headers: { origin: shell.origin, "content-type": "application/json" },
      body: JSON.stringify({ code }),
    });
    expect(answer.status).toBe(403);
    expect(answer.body).toContain("This launch link has expired (a link opens within 10 minutes)");
  });

  it("a session no page used for long has ended; one a page keeps connected has not", async () => {
    const time = clock();
    const { shell } = await startShell({ now: time.now, sessionTiming: { sessionIdleMs: 60 * MINUTE } });
    const unused = await exchangeLaunchCode(shell.origin, shell.newLaunchUrl());
    const used = await exchangeLaunchCode(shell.origin, shell.newLaunchUrl());
    const open = await connected(shell.origin, used);
    await open.next((message) => message.type === "event");
    time.advance(5 * 60 * MINUTE);
    const late = await connected(shell.origin, unused);
    expect(await late.closed).toBe(BRIDGE_CLOSE_UNAUTHORIZED);
    // Connected all along: a second tab (or a reload) of that session still opens.
    const reload = await connected(shell.origin, used);
    await reload.next((message) => message.type === "event");
  });

  it("the idle time counts from when the last page disconnected", () => {
    const time = clock();
    const sessions = new ShellSessions({ sessionIdleMs: 60 * MINUTE }, time.now);
    const exchanged = sessions.exchange(sessions.newLaunchCode());
    if (!exchanged.ok) throw new Error(exchanged.message);
    expect(sessions.connect(exchanged.session)).toBe(true);
    expect(sessions.connect(exchanged.session)).toBe(true);
    time.advance(3 * 60 * MINUTE);
    sessions.disconnected(exchanged.session);
    time.advance(3 * 60 * MINUTE);
    sessions.disconnected(exchanged.session); // the last page leaves: the idle clock starts here
    time.advance(59 * MINUTE);
    expect(sessions.connect(exchanged.session)).toBe(true);
    sessions.disconnected(exchanged.session);
    time.advance(60 * MINUTE);
    expect(sessions.connect(exchanged.session)).toBe(false);
    time.advance(-120 * MINUTE);
    expect(sessions.connect(exchanged.session)).toBe(false); // forgotten, not merely late
  });

  it("a session ends when the shell restarts", async () => {
    const first = await startShell();
    const session = await exchangeLaunchCode(first.shell.origin, first.shell.url);
    await first.close();
    const second = await startShell();
    const bridge = await connected(second.shell.origin, session);
    expect(await bridge.closed).toBe(BRIDGE_CLOSE_UNAUTHORIZED);
  });

  it("repeated failed exchanges are refused for a while and logged once", async () => {
    const time = clock();
    const { shell, logs } = await startShell({ now: time.now, sessionTiming: { maxFailures: 5, failureWindowMs: MINUTE } });
    const valid = shell.newLaunchUrl();
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 20; attempt++) {
      const answer = await httpRequest(shell.origin, "/session", {
        method: "POST",
        headers: { origin: shell.origin, "content-type": "application/json" },
        body: JSON.stringify({ code: `guess-${attempt}` }),
      });
      statuses.push(answer.status);
    }
    expect(statuses.slice(0, 5)).toEqual([403, 403, 403, 403, 403]);
    expect(new Set(statuses.slice(5))).toEqual(new Set([429]));
    expect(await exchangeLaunchCode(shell.origin, valid)).toBeUndefined(); // even a good code waits
    expect(logs.filter((line) => line.includes("failed launch-link attempts"))).toHaveLength(1);
    time.advance(MINUTE);
    expect(await exchangeLaunchCode(shell.origin, valid)).toBeDefined(); // refused while locked, not spent
  });
});
