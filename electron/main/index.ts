// Electron shell: single instance, one hardened window, the fleet service in this (main) process,
// the bridge over sender-checked IPC, native notifications, and re-checks after system wake.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { BrowserWindow, Menu, Notification, Tray, app, ipcMain, nativeImage, powerMonitor, safeStorage, session, shell } from "electron";
import type { TrayItem, TrayVariant } from "../../shared/fleet/tray";
import type { BridgeEvent } from "../../shared/bridge/contract";
import { KeytarSecretStore, type SecretStore } from "../fleet/secrets";
import { FleetService } from "../fleet/service";
import { EVENT_CHANNEL, registerBridge } from "./bridge-ipc";
import { hardenWindow } from "./guards";
import { SafeStorageSecretStore } from "./safe-storage-secrets";
import { TrayController } from "./tray";
import { trayIconBitmap } from "./tray-icons";

if (!app.requestSingleInstanceLock()) app.quit();

let window: BrowserWindow | undefined;
const appUrl = () => process.env.ELECTRON_RENDERER_URL ?? pathToFileURL(join(__dirname, "../renderer/index.html")).href;

async function openSecrets(dataDir: string): Promise<{ secrets: SecretStore; notices: string[] }> {
  try {
    return { secrets: await KeytarSecretStore.open(), notices: [] };
  } catch (keytarError) {
    // Keychain unavailable: fall back to safeStorage behind the same interface (design §6).
    const secrets = SafeStorageSecretStore.open(safeStorage, join(dataDir, "tokens.enc.json"));
    return { secrets, notices: [`${(keytarError as Error).message} Tokens are kept ${secrets.description} instead.`] };
  }
}

function showWindow(): BrowserWindow {
  if (window && !window.isDestroyed()) {
    if (window.isMinimized()) window.restore();
    window.show();
    window.focus();
    return window;
  }
  window = new BrowserWindow({
    width: 1280,
    height: 820,
    title: "T3 Fleet",
    show: false,
    webPreferences: {
      preload: join(__dirname, "../preload/index.cjs"),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
    },
  });
  hardenWindow(window.webContents, session.defaultSession, appUrl(), (url) => void shell.openExternal(url));
  window.once("ready-to-show", () => window?.show());
  void window.loadURL(appUrl());
  return window;
}

function send(event: BridgeEvent): void {
  if (window && !window.isDestroyed()) window.webContents.send(EVENT_CHANNEL, event);
}

async function main(): Promise<void> {
  await app.whenReady();
  const dataDir = app.getPath("userData");
  await mkdir(dataDir, { recursive: true });
  const { secrets, notices } = await openSecrets(dataDir);
  const service = await FleetService.start({ dataDir, secrets, notices, openExternal: (url) => shell.openExternal(url) });

  registerBridge(ipcMain, service, appUrl, send);
  service.on("event", (event) => {
    if (event.type !== "notification") return;
    // Quiet while the fleet window is focused: the window already shows it (design §5).
    if (window?.isFocused()) return;
    const { notification } = event;
    const native = new Notification({ title: notification.title, body: notification.body });
    native.on("click", () => {
      showWindow();
      if (notification.agentKey) send({ type: "ui.openAgent", key: notification.agentKey });
    });
    native.show();
  });

  // The demo passes pairing links of its simulated machines.
  for (const link of JSON.parse(process.env.T3_FLEET_DEMO_PAIRING ?? "[]") as string[]) {
    await service.request("pair.confirm", { input: link }).catch((error: unknown) => console.error(String(error)));
  }

  const tray = new Tray(trayImage("nothing-paired"));
  new TrayController(
    {
      setVariant: (variant) => tray.setImage(trayImage(variant)),
      setToolTip: (text) => tray.setToolTip(text),
      setMenu: (items) => tray.setContextMenu(Menu.buildFromTemplate(items.map((item) => menuItem(item, service)))),
    },
    service,
  );
  tray.on("click", () => showWindow());

  powerMonitor.on("resume", () => service.recheckAll());
  app.on("second-instance", () => showWindow());
  app.on("activate", () => showWindow());
  const win = showWindow();
  win.webContents.on("did-finish-load", () => send({ type: "fleet.snapshot", snapshot: service.snapshot() }));
  app.on("before-quit", () => void service.stop());
}

function trayImage(variant: TrayVariant): Electron.NativeImage {
  const image = nativeImage.createFromBitmap(trayIconBitmap(variant, 16), { width: 16, height: 16 });
  image.addRepresentation({ scaleFactor: 2, width: 32, height: 32, buffer: trayIconBitmap(variant, 32) });
  return image;
}

function menuItem(item: TrayItem, service: FleetService): Electron.MenuItemConstructorOptions {
  switch (item.kind) {
    case "separator":
      return { type: "separator" };
    case "label":
      return { label: item.label, enabled: false };
    case "agent":
      return {
        label: item.label,
        click: () => {
          showWindow();
          send({ type: "ui.openAgent", key: item.agentKey });
        },
      };
    case "action":
      return {
        label: item.label,
        click: () => {
          if (item.action === "open") showWindow();
          if (item.action === "pair") {
            showWindow();
            send({ type: "ui.openPairing" });
          }
          if (item.action === "pause" || item.action === "resume") void service.request("settings.update", { notificationsPaused: item.action === "pause" });
          if (item.action === "quit") app.quit();
        },
      };
  }
}

// Tray-resident: closing the window keeps the fleet watched; Quit is in the tray menu.
app.on("window-all-closed", () => {});
// No <webview> may ever be attached, in any web contents.
app.on("web-contents-created", (_event, contents) => contents.on("will-attach-webview", (event) => event.preventDefault()));

void main();
