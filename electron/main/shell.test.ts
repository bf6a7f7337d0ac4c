// The Electron shell's logic against thin stand-ins for Electron's objects (Electron is not launched).
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type BridgeBatch, type BridgeEvent, BridgeRequests } from "../../shared/bridge/contract";
import { ensurePrivateDir } from "../fleet/private-files";
import { MemorySecretStore } from "../fleet/secrets";
import { FleetService } from "../fleet/service";
import { ACK_CHANNEL, REQUEST_CHANNEL } from "../../shared/bridge/ipc-channels";
import { DEFAULT_FEED_LIMITS } from "../../shared/bridge/paced-feed";
import { type IpcMainLike, registerBridge } from "./bridge-ipc";
import { hardenWindow, isAppUrl, isTrustedSender } from "./guards";
import type { TrayItem, TrayVariant } from "../../shared/fleet/tray";
import { SimServer } from "../../sim/protocol1/server";
import { APP_URL, RENDERER_CSP, serveAppRequest } from "./app-protocol";
import { type SafeStorageLike, type UnprotectedChoice, openDesktopSecrets } from "./safe-storage-secrets";
import { TrayController } from "./tray";
import { trayIconBitmap } from "./tray-icons";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
const APP = APP_URL;

describe("window guards", () => {
  it("denies new windows, hands only http(s) links to the browser, and blocks navigation and permissions", () => {
    let openHandler: ((details: { url: string }) => { action: "deny" }) | undefined;
    const navigation: ((event: { preventDefault(): void }, url: string) => void)[] = [];
    let permission: ((wc: unknown, permission: string, callback: (granted: boolean) => void) => void) | undefined;
    const opened: string[] = [];
    hardenWindow(
      { setWindowOpenHandler: (handler) => (openHandler = handler), on: (_event, listener) => navigation.push(listener) },
      { setPermissionRequestHandler: (handler) => (permission = handler), setPermissionCheckHandler: () => {} },
      APP,
      (url) => opened.push(url),
    );
    expect(openHandler!({ url: "https://example.com/pr/1" })).toEqual({ action: "deny" });
    expect(openHandler!({ url: "javascript:alert(1)" })).toEqual({ action: "deny" });
    expect(openHandler!({ url: "file:///etc/passwd" })).toEqual({ action: "deny" });
    expect(opened).toEqual(["https://example.com/pr/1"]);

    const prevented = (url: string) => {
      let blocked = false;
      for (const listener of navigation) listener({ preventDefault: () => (blocked = true) }, url);
      return blocked;
    };
    expect(prevented("https://evil.example/")).toBe(true);
    expect(prevented("file:///etc/passwd")).toBe(true);
    expect(prevented("app://elsewhere/index.html")).toBe(true);
    expect(prevented(APP)).toBe(false);
    expect(prevented("app://fleet/assets/index.js")).toBe(false);

    let granted: boolean | undefined;
    permission!(null, "notifications", (value) => (granted = value));
    expect(granted).toBe(false);
  });

  it("trusts only the app's own top frame", () => {
    expect(isTrustedSender({ url: APP, parent: null }, APP)).toBe(true);
    expect(isTrustedSender({ url: APP, parent: {} }, APP)).toBe(false);
    expect(isTrustedSender({ url: "https://evil.example/", parent: null }, APP)).toBe(false);
    expect(isTrustedSender({ url: "file:///opt/t3-fleet/out/renderer/index.html", parent: null }, APP)).toBe(false);
    expect(isTrustedSender({ url: "app://other/index.html", parent: null }, APP)).toBe(false);
    expect(isTrustedSender(null, APP)).toBe(false);
    expect(isAppUrl("http://localhost:5173/x", "http://localhost:5173/")).toBe(true);
    expect(isAppUrl("http://localhost:5174/", "http://localhost:5173/")).toBe(false);
  });
});

describe("IPC bridge", () => {
  it("answers the app's frame through the service and refuses other senders", async () => {
    const dir = await mkdtemp(join(tmpdir(), "t3-fleet-ipc-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const service = await FleetService.start({ dataDir: dir, secrets: new MemorySecretStore() });
    cleanups.push(() => service.stop());
    const handlers = new Map<string, Parameters<IpcMainLike["handle"]>[1]>();
    const listeners = new Map<string, Parameters<IpcMainLike["on"]>[1]>();
    const messages: (BridgeEvent | BridgeBatch)[] = [];
    const bridge = registerBridge(
      {
        handle: (channel, listener) => handlers.set(channel, listener),
        removeHandler: (channel) => handlers.delete(channel),
        on: (channel, listener) => listeners.set(channel, listener),
        removeAllListeners: (channel) => listeners.delete(channel),
      },
      service,
      () => APP,
      (message) => messages.push(message),
    );
    const invoke = handlers.get(REQUEST_CHANNEL)!;
    const app = { senderFrame: { url: APP, parent: null } };
    expect(await invoke(app, "settings.update", { notificationsPaused: true })).toMatchObject({
      ok: true,
      result: { notificationsPaused: true },
    });
    const batches = () => messages.filter((message): message is BridgeBatch => message.type === "events");
    await vi.waitFor(() => expect(batches().flatMap((batch) => batch.events)).toContainEqual(expect.objectContaining({ type: "settings" })));
    // Paced by the page: no batch past its window until it acknowledges, and only its own frame's acknowledgement counts.
    for (let index = 1; index < DEFAULT_FEED_LIMITS.window; index++) {
      expect(await invoke(app, "settings.update", { notificationsPaused: true })).toMatchObject({ ok: true });
      await vi.waitFor(() => expect(batches()).toHaveLength(index + 1));
    }
    expect(await invoke(app, "settings.update", { notificationsPaused: false })).toMatchObject({ ok: true });
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches()).toHaveLength(DEFAULT_FEED_LIMITS.window);
    const ack = listeners.get(ACK_CHANNEL)!;
    ack({ senderFrame: { url: "https://evil.example/", parent: null } }, { type: "ack", seq: batches()[0]!.seq });
    ack(app, { type: "ack", seq: "1" });
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches()).toHaveLength(DEFAULT_FEED_LIMITS.window);
    ack(app, { type: "ack", seq: batches()[0]!.seq });
    await vi.waitFor(() => expect(batches()).toHaveLength(DEFAULT_FEED_LIMITS.window + 1));
    expect(batches().at(-1)!.events).toContainEqual(
      expect.objectContaining({ type: "settings", settings: expect.objectContaining({ notificationsPaused: false }) }),
    );
    expect(await invoke({ senderFrame: { url: "https://evil.example/", parent: null } }, "settings.update", {})).toEqual({
      ok: false,
      error: { kind: "forbidden", message: "Untrusted sender." },
    });
    expect(await invoke(app, "agent.send", { key: 1 })).toMatchObject({ ok: false, error: { kind: "invalid" } });
    bridge.dispose();
    expect(handlers.size).toBe(0);
    expect(listeners.size).toBe(0);
  });

  it("answers every fuzzed request to every method with a result or a clear error, never an internal one", async () => {
    const dir = await mkdtemp(join(tmpdir(), "t3-fleet-ipc-fuzz-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const service = await FleetService.start({ dataDir: dir, secrets: new MemorySecretStore() });
    cleanups.push(() => service.stop());
    const handlers = new Map<string, Parameters<IpcMainLike["handle"]>[1]>();
    registerBridge(
      { handle: (channel, listener) => handlers.set(channel, listener), removeHandler: () => {}, on: () => {}, removeAllListeners: () => {} },
      service,
      () => APP,
      () => {},
    );
    const invoke = handlers.get(REQUEST_CHANNEL)!;
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.constantFrom(...Object.keys(BridgeRequests)), fc.anything()), fc.anything(), async (method, params) => {
        const answer = (await invoke({ senderFrame: { url: APP, parent: null } }, method, params)) as {
          ok: boolean;
          error?: { kind: string; message: string };
        };
        if (!answer.ok) {
          expect(answer.error!.kind).not.toBe("internal");
          expect(answer.error!.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("renderer origin (app://)", () => {
  it("serves the built renderer with the CSP as a header, and nothing outside it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "t3-fleet-app-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await mkdir(join(dir, "renderer/assets"), { recursive: true });
    await writeFile(join(dir, "renderer/index.html"), "<!doctype html><title>T3 Fleet</title>");
    await writeFile(join(dir, "renderer/assets/app.js"), "export {}");
    await writeFile(join(dir, "secret.txt"), "outside");
    const rendererDir = join(dir, "renderer");

    const page = await serveAppRequest(APP, rendererDir);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toBe(RENDERER_CSP);
    expect(await page.text()).toContain("T3 Fleet");
    const script = await serveAppRequest("app://fleet/assets/app.js", rendererDir);
    expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
    for (const url of [
      "app://fleet/../secret.txt",
      "app://fleet/%2e%2e%2fsecret.txt",
      "app://fleet/..%5csecret.txt",
      "app://other/index.html",
      "app://fleet/%E0%A4%A",
      "not a url",
    ]) {
      expect((await serveAppRequest(url, rendererDir)).status, url).toBe(404);
    }
    // The renderer reaches the fleet only through the preload: it may connect nowhere, and never be framed.
    expect(RENDERER_CSP).toContain("connect-src 'none'");
    expect(RENDERER_CSP).toContain("frame-ancestors 'none'");
    expect(RENDERER_CSP).not.toContain("unsafe");
  });
});

describe("desktop token storage", () => {
  // A reversible stand-in for the OS-backed encryption (the real one needs Electron's keychain access).
  const fakeSafeStorage = (backend: string): SafeStorageLike => ({
    isEncryptionAvailable: () => true,
    encryptString: (text: string) => Buffer.from([...Buffer.from(text)].map((byte) => byte ^ 0x5a)),
    decryptString: (data: Buffer) => Buffer.from([...data].map((byte) => byte ^ 0x5a)).toString(),
    getSelectedStorageBackend: () => backend,
  });
  const noKeychain = () => Promise.reject(new Error("The system keychain did not answer: no Secret Service."));

  async function dataDir(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), "t3-fleet-safe-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const data = join(dir, "T3 Fleet");
    await ensurePrivateDir(data);
    return data;
  }

  it("uses the keychain when it answers, and asks nothing", async () => {
    const keychain = new MemorySecretStore();
    const { secrets, notices } = await openDesktopSecrets({
      openKeychain: async () => keychain,
      safeStorage: fakeSafeStorage("basic_text"),
      path: "/nonexistent/x",
      ask: () => Promise.reject(new Error("asked")),
    });
    expect(secrets).toBe(keychain);
    expect(notices).toEqual([]);
  });

  it("without a keychain, keeps only ciphertext from an OS-backed safeStorage, 0600 in a 0700 folder", async () => {
    const dir = await dataDir();
    const path = join(dir, "tokens.enc.json");
    const { secrets, notices } = await openDesktopSecrets({
      openKeychain: noKeychain,
      safeStorage: fakeSafeStorage("gnome_libsecret"),
      path,
      ask: () => Promise.reject(new Error("asked")),
    });
    expect(notices.join(" ")).toContain("encrypted with the system's safe storage");
    await Promise.all([secrets.set("a", "secret-token-a"), secrets.set("b", "secret-token-b")]);
    expect(await secrets.get("a")).toBe("secret-token-a");
    expect(await readFile(path, "utf8")).not.toContain("secret-token");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    await secrets.delete("a");
    expect(await secrets.get("a")).toBeUndefined();
    expect(await secrets.get("b")).toBe("secret-token-b");
  });

  it("on basic_text says plainly that tokens are not protected and asks before storing the first one", async () => {
    for (const answer of ["memory-only", "store-unprotected"] as UnprotectedChoice[]) {
      const dir = await dataDir();
      const path = join(dir, "tokens.enc.json");
      let asked = 0;
      const { secrets, notices } = await openDesktopSecrets({
        openKeychain: noKeychain,
        safeStorage: fakeSafeStorage("basic_text"),
        path,
        ask: async () => (asked++, answer),
      });
      expect(notices.join(" ")).toMatch(/would not be protected/);
      expect(notices.join(" ")).not.toMatch(/encrypted with/);
      expect(asked).toBe(0);
      await Promise.all([secrets.set("a", "token-a"), secrets.set("b", "token-b")]);
      expect(asked).toBe(1);
      expect(await secrets.get("a")).toBe("token-a");
      const onDisk = await readFile(path, "utf8").catch(() => undefined);
      if (answer === "memory-only") expect(onDisk).toBeUndefined();
      else expect((await stat(path)).mode & 0o777).toBe(0o600);
    }
  });

  it("asks again on the next token when the question could not be answered", async () => {
    const path = join(await dataDir(), "tokens.enc.json");
    const answers: (() => Promise<UnprotectedChoice>)[] = [() => Promise.reject(new Error("The dialog could not open.")), async () => "store-unprotected"];
    const { secrets } = await openDesktopSecrets({ openKeychain: noKeychain, safeStorage: fakeSafeStorage("basic_text"), path, ask: () => answers.shift()!() });
    await expect(secrets.set("a", "token-a")).rejects.toThrow("The dialog could not open.");
    expect(await secrets.get("a")).toBeUndefined();
    await secrets.set("a", "token-a");
    expect(answers).toHaveLength(0);
    expect(await secrets.get("a")).toBe("token-a");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("narrows a data folder others could read to 0700", async () => {
    const dir = await mkdtemp(join(tmpdir(), "t3-fleet-wide-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await chmod(dir, 0o755);
    await ensurePrivateDir(dir);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });
});

describe("tray", () => {
  it("draws a distinct icon per fleet state", () => {
    const variants: TrayVariant[] = ["nothing-paired", "failed", "needs-you", "host-offline", "working", "all-clear"];
    const bitmaps = variants.map((variant) => trayIconBitmap(variant, 16));
    for (const bitmap of bitmaps) expect(bitmap.length).toBe(16 * 16 * 4);
    expect(new Set(bitmaps.map((bitmap) => bitmap.toString("base64"))).size).toBe(variants.length);
    const centre = (8 * 16 + 8) * 4 + 3;
    expect(trayIconBitmap("failed", 16)[centre]).toBe(255);
    expect(trayIconBitmap("nothing-paired", 16)[centre]).toBe(0);
  });

  it("follows the fleet: nothing paired, then the paired machine and the agent that needs you", async () => {
    const sim = await new SimServer({ generation: "upstream", tickMs: 5 }).start();
    cleanups.push(() => sim.stop());
    const dir = await mkdtemp(join(tmpdir(), "t3-fleet-tray-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const service = await FleetService.start({ dataDir: dir, secrets: new MemorySecretStore() });
    cleanups.push(() => service.stop());
    const seen: { variant?: TrayVariant; tooltip?: string; items?: TrayItem[] } = {};
    const updated: (() => void)[] = [];
    const controller = new TrayController(
      {
        setVariant: (variant) => (seen.variant = variant),
        setToolTip: (tooltip) => (seen.tooltip = tooltip),
        setMenu: (items) => {
          seen.items = items;
          updated.splice(0).forEach((resolve) => resolve());
        },
      },
      service,
    );
    cleanups.push(() => controller.dispose());
    expect(seen.variant).toBe("nothing-paired");
    const now = new Date().toISOString();
    sim.engine.dispatch({ type: "project.create", commandId: "p", projectId: "p1", title: "Repo", workspaceRoot: "/r", createdAt: now });
    sim.engine.dispatch({
      type: "thread.create",
      commandId: "t",
      threadId: "deploy",
      projectId: "p1",
      title: "Deploy",
      modelSelection: { instanceId: "codex", model: "m" },
      runtimeMode: "full-access",
      interactionMode: "default",
      branch: null,
      worktreePath: null,
      createdAt: now,
    });
    await service.request("pair.confirm", { input: sim.pairingUrl() });
    sim.engine.dispatch({
      type: "thread.turn.start",
      commandId: "go",
      threadId: "deploy",
      message: { messageId: "m1", role: "user", text: "#approval", attachments: [] },
      runtimeMode: "full-access",
      interactionMode: "default",
      createdAt: now,
    });
    while (seen.variant !== "needs-you") await new Promise<void>((resolve) => updated.push(resolve));
    expect(seen.items).toContainEqual({ kind: "agent", agentKey: `${sim.environmentId}/deploy`, label: `Deploy (${sim.label}) — needs approval` });
    expect(seen.tooltip).toContain(`${sim.label}: online`);
  });
});
