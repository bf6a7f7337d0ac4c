import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { BridgeServerMessage } from "../../shared/bridge/contract";
import { MemorySecretStore } from "../fleet/secrets";
import { FleetService } from "../fleet/service";
import { type HeadlessShell, startHeadlessShell } from "./server";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function start(): Promise<HeadlessShell> {
  const dir = await mkdtemp(join(tmpdir(), "t3-fleet-serve-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, "index.html"), "<!doctype html><title>T3 Fleet</title>");
  await writeFile(join(dir, "app.js"), "console.log('app')");
  const service = await FleetService.start({ dataDir: join(dir, "data"), secrets: new MemorySecretStore() });
  cleanups.push(() => service.stop());
  const shell = await startHeadlessShell({ service, rendererDir: dir });
  cleanups.push(() => shell.close());
  return shell;
}

function openBridge(url: string, headers: Record<string, string> = {}): Promise<{ ws: WebSocket; messages: BridgeServerMessage[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const messages: BridgeServerMessage[] = [];
    ws.on("message", (data) => messages.push(JSON.parse(data.toString()) as BridgeServerMessage));
    ws.once("open", () => resolve({ ws, messages }));
    ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once("error", reject);
  });
}

describe("headless shell", () => {
  it("binds 127.0.0.1 and refuses pages and the bridge without the per-launch token", async () => {
    const shell = await start();
    expect(shell.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${shell.origin}/`)).status).toBe(403);
    expect((await fetch(`${shell.origin}/app.js?token=wrong`)).status).toBe(403);
    await expect(openBridge(`${shell.origin.replace("http", "ws")}/bridge`)).rejects.toThrow("HTTP 403");
  });

  it("serves the page with a strict CSP and a same-site cookie that carries the token", async () => {
    const shell = await start();
    const page = await fetch(shell.url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(page.headers.get("content-security-policy")).not.toContain("unsafe-inline");
    const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
    expect(page.headers.get("set-cookie")).toContain("SameSite=Strict");
    expect((await fetch(`${shell.origin}/app.js`, { headers: { cookie } })).status).toBe(200);
    expect((await fetch(`${shell.origin}/..%2f..%2fetc%2fpasswd`, { headers: { cookie } })).status).toBe(404);
  });

  it("refuses a bridge connection from another origin even with the cookie", async () => {
    const shell = await start();
    await expect(openBridge(`${shell.origin.replace("http", "ws")}/bridge?token=${shell.token}`, { origin: "http://evil.example" })).rejects.toThrow("HTTP 403");
  });

  it("sends a snapshot first and answers typed requests, with clear errors for bad ones", async () => {
    const shell = await start();
    const { ws, messages } = await openBridge(`${shell.origin.replace("http", "ws")}/bridge?token=${shell.token}`, { origin: shell.origin });
    cleanups.push(() => ws.close());
    const next = (predicate: (m: BridgeServerMessage) => boolean) =>
      new Promise<BridgeServerMessage>((resolve) => {
        const found = messages.find(predicate);
        if (found) return resolve(found);
        const listener = () => {
          const match = messages.find(predicate);
          if (match) {
            ws.off("message", listener);
            resolve(match);
          }
        };
        ws.on("message", listener);
      });
    const first = await next(() => true);
    expect(first).toMatchObject({ type: "event", event: { type: "fleet.snapshot", snapshot: { environments: [], agents: [] } } });
    ws.send(JSON.stringify({ type: "request", id: 1, method: "settings.update", params: { notificationsPaused: true } }));
    expect(await next((m) => m.type === "response" && m.id === 1)).toMatchObject({ ok: true, result: { notificationsPaused: true } });
    ws.send(JSON.stringify({ type: "request", id: 2, method: "agent.send", params: { key: "a/b", text: "" } }));
    expect(await next((m) => m.type === "response" && m.id === 2)).toMatchObject({ ok: false, error: { kind: "invalid" } });
    const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
    ws.send("not json");
    expect(await closed).toBe(4400);
  });
});
