// The Electron shell's logic against thin stand-ins for Electron's objects (Electron is not launched).
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MemorySecretStore } from "../fleet/secrets";
import { FleetService } from "../fleet/service";
import { type IpcMainLike, REQUEST_CHANNEL, registerBridge } from "./bridge-ipc";
import { hardenWindow, isAppUrl, isTrustedSender } from "./guards";
import type { TrayItem, TrayVariant } from "../../shared/fleet/tray";
import { SimServer } from "../../sim/server";
import { SafeStorageSecretStore } from "./safe-storage-secrets";
import { TrayController } from "./tray";
import { trayIconBitmap } from "./tray-icons";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
const APP = "file:///opt/t3-fleet/resources/app/out/renderer/index.html";

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
    expect(prevented(APP)).toBe(false);

    let granted: boolean | undefined;
    permission!(null, "notifications", (value) => (granted = value));
    expect(granted).toBe(false);
  });

  it("trusts only the app's own top frame", () => {
    expect(isTrustedSender({ url: APP, parent: null }, APP)).toBe(true);
    expect(isTrustedSender({ url: APP, parent: {} }, APP)).toBe(false);
    expect(isTrustedSender({ url: "https://evil.example/", parent: null }, APP)).toBe(false);
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
    const events: unknown[] = [];
    const dispose = registerBridge({ handle: (channel, listener) => handlers.set(channel, listener), removeHandler: (channel) => handlers.delete(channel) }, service, () => APP, (event) => events.push(event));
    const invoke = handlers.get(REQUEST_CHANNEL)!;
    expect(await invoke({ senderFrame: { url: APP, parent: null } }, "settings.update", { notificationsPaused: true })).toMatchObject({ ok: true, result: { notificationsPaused: true } });
    expect(events).toContainEqual(expect.objectContaining({ type: "settings" }));
    expect(await invoke({ senderFrame: { url: "https://evil.example/", parent: null } }, "settings.update", {})).toEqual({ ok: false, error: { kind: "forbidden", message: "Untrusted sender." } });
    expect(await invoke({ senderFrame: { url: APP, parent: null } }, "agent.send", { key: 1 })).toMatchObject({ ok: false, error: { kind: "invalid" } });
    dispose();
    expect(handlers.size).toBe(0);
  });
});

describe("safeStorage secret store", () => {
  // A reversible stand-in for the OS-backed encryption (the real one needs Electron's keychain access).
  const fakeSafeStorage = {
    isEncryptionAvailable: () => true,
    encryptString: (text: string) => Buffer.from([...Buffer.from(text)].map((byte) => byte ^ 0x5a)),
    decryptString: (data: Buffer) => Buffer.from([...data].map((byte) => byte ^ 0x5a)).toString(),
  };

  it("keeps only ciphertext on disk, mode 0600, and round-trips tokens", async () => {
    const dir = await mkdtemp(join(tmpdir(), "t3-fleet-safe-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, "tokens.enc.json");
    const store = SafeStorageSecretStore.open(fakeSafeStorage, path);
    await Promise.all([store.set("a", "secret-token-a"), store.set("b", "secret-token-b")]);
    expect(await store.get("a")).toBe("secret-token-a");
    expect(await readFile(path, "utf8")).not.toContain("secret-token");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await store.delete("a");
    expect(await store.get("a")).toBeUndefined();
    expect(await store.get("b")).toBe("secret-token-b");
  });

  it("refuses to store when encryption is unavailable", () => {
    expect(() => SafeStorageSecretStore.open({ ...fakeSafeStorage, isEncryptionAvailable: () => false }, "/tmp/x")).toThrow(/not available/);
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
    sim.engine.dispatch({ type: "thread.create", commandId: "t", threadId: "deploy", projectId: "p1", title: "Deploy", modelSelection: { instanceId: "codex", model: "m" }, runtimeMode: "full-access", interactionMode: "default", branch: null, worktreePath: null, createdAt: now });
    await service.request("pair.confirm", { input: sim.pairingUrl() });
    sim.engine.dispatch({ type: "thread.turn.start", commandId: "go", threadId: "deploy", message: { messageId: "m1", role: "user", text: "#approval", attachments: [] }, runtimeMode: "full-access", interactionMode: "default", createdAt: now });
    while (seen.variant !== "needs-you") await new Promise<void>((resolve) => updated.push(resolve));
    expect(seen.items).toContainEqual({ kind: "agent", agentKey: `${sim.environmentId}/deploy`, label: `Deploy (${sim.label}) — needs approval` });
    expect(seen.tooltip).toContain(`${sim.label}: online`);
  });
});
