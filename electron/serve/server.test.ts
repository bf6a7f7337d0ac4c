import { describe, expect, it } from "vitest";
import { BRIDGE_CLOSE_MALFORMED } from "../../shared/bridge/contract";
import { cleanups, exchangeLaunchCode, httpRequest, openBridge, startShell } from "./shell.testkit";

describe("headless shell", () => {
  it("binds 127.0.0.1 and prints a launch link whose code is in the fragment, never in a request", async () => {
    const { shell } = await startShell();
    expect(shell.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const link = new URL(shell.url);
    expect(link.search).toBe("");
    expect(link.hash).toMatch(/^#code=[A-Za-z0-9_-]{43}$/);
  });

  it("serves the page with a strict CSP and no cookie", async () => {
    const { shell } = await startShell();
    const page = await httpRequest(shell.origin, "/");
    expect(page.status).toBe(200);
    const csp = String(page.headers["content-security-policy"]);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain(`connect-src 'self' ${shell.origin.replace("http", "ws")}/bridge`);
    expect(csp).not.toContain("unsafe-inline");
    expect(page.headers["set-cookie"]).toBeUndefined();
    expect((await httpRequest(shell.origin, "/app.js")).status).toBe(200);
    expect((await httpRequest(shell.origin, "/..%2f..%2fetc%2fpasswd")).status).toBe(404);
  });

  it("sends a snapshot first and answers typed requests, with clear errors for bad ones", async () => {
    const { shell } = await startShell();
    const session = await exchangeLaunchCode(shell.origin, shell.url);
    const bridge = await openBridge(shell.origin, session);
    cleanups.push(() => bridge.ws.close());
    const first = await bridge.next(() => true);
    expect(first).toMatchObject({ type: "event", event: { type: "fleet.snapshot", snapshot: { environments: [], agents: [] } } });
    bridge.ws.send(JSON.stringify({ type: "request", id: 1, method: "settings.update", params: { notificationsPaused: true } }));
    expect(await bridge.next((m) => m.type === "response" && m.id === 1)).toMatchObject({ ok: true, result: { notificationsPaused: true } });
    bridge.ws.send(JSON.stringify({ type: "request", id: 2, method: "agent.send", params: { key: "a/b", text: "" } }));
    expect(await bridge.next((m) => m.type === "response" && m.id === 2)).toMatchObject({ ok: false, error: { kind: "invalid" } });
    bridge.ws.send("not json");
    expect(await bridge.closed).toBe(BRIDGE_CLOSE_MALFORMED);
  });
});
