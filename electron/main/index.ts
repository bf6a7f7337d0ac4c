// Electron shell: single instance, one hardened window, the fleet service in this (main) process,
// the bridge over sender-checked IPC, native notifications, and re-checks after system wake.
import { join } from "node:path";
import { BrowserWindow, Menu, Notification, Tray, app, dialog, ipcMain, nativeImage, powerMonitor, protocol, safeStorage, session, shell } from "electron";
import type { TrayItem, TrayVariant } from "../../shared/fleet/tray";
import type { BridgeBatch, BridgeEvent } from "../../shared/bridge/contract";
import { describeError } from "../../shared/bridge/redact";
import { DataFolderBusyError, lockDataFolder } from "../fleet/data-folder-lock";
import { ensurePrivateDir } from "../fleet/private-files";
import { KeytarSecretStore } from "../fleet/secrets";
import { FleetService } from "../fleet/service";
import { APP_SCHEME, APP_SCHEME_PRIVILEGES, serveAppRequest } from "./app-protocol";
import { EVENT_CHANNEL } from "../../shared/bridge/ipc-channels";
import { WINDOW_VIEWER, registerBridge } from "./bridge-ipc";
import { hardenWindow } from "./guards";
import { NativeNotifier } from "./notifications";
import { type SafeStorageLike, UNPROTECTED_WARNING, type UnprotectedChoice, openDesktopSecrets } from "./safe-storage-secrets";
import { claimSingleInstance, demoPairingLinks, rendererUrl } from "./startup";
import { TrayController } from "./tray";
import { TrayCommands, WindowMailbox } from "./tray-commands";
import { trayIconBitmap } from "./tray-icons";
import { watchSystemWake } from "./wake";

// A second start ends here: the first instance shows its window (the "second-instance" event).
const firstInstance = claimSingleInstance(app);
// Must happen before "ready": app:// gets a real, secure origin of its own (electron/main/app-protocol.ts).
protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: APP_SCHEME_PRIVILEGES }]);

let window: BrowserWindow | undefined;
/** Set once the fleet service runs: every window that loads (again) gets the whole fleet first. */
let sendSnapshot: (() => void) | undefined;
/** Set once the service runs: a page that navigated away (a reload) or closed shows no agent and has none open. */
let onPageLeft: (() => void) | undefined;
const appUrl = () => rendererUrl(app, process.env);
/** Events for the window's page (the tray's commands, a clicked agent), held while it loads. */
const mailbox = new WindowMailbox((event) => send(event));

/** safeStorage as the secret stores see it; the backend name exists on Linux only. */
const safeStorageView: SafeStorageLike = {
  isEncryptionAvailable: () => safeStorage.isEncryptionAvailable(),
  encryptString: (text) => safeStorage.encryptString(text),
  decryptString: (data) => safeStorage.decryptString(data),
  ...(process.platform === "linux" && { getSelectedStorageBackend: () => safeStorage.getSelectedStorageBackend() }),
};

/** Asked once, before the first token would be stored without protection. */
async function askToStoreUnprotected(): Promise<UnprotectedChoice> {
  const { response } = await dialog.showMessageBox({
    type: "warning",
    title: "T3 Fleet: tokens would not be protected",
    message: "Store T3 tokens on this computer without protection?",
    detail: `${UNPROTECTED_WARNING}\n\n"Keep in memory only" keeps pairings until T3 Fleet quits; you pair again after a restart.`,
    buttons: ["Keep in memory only", "Store unprotected"],
    defaultId: 0,
    cancelId: 0,
  });
  return response === 1 ? "store-unprotected" : "memory-only";
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
  // On each window, not only the first: closing the window keeps the fleet running, and the tray
  // opens a new one that must not start empty.
  // A page that navigates (a reload) starts showing no agent, before its scripts can say otherwise.
  window.webContents.on("did-navigate", () => {
    mailbox.pageLeft();
    onPageLeft?.();
  });
  window.webContents.on("did-finish-load", () => {
    sendSnapshot?.();
    mailbox.pageLoaded();
  });
  window.on("closed", () => {
    mailbox.windowClosed();
    onPageLeft?.();
  });
  void window.loadURL(appUrl());
  return window;
}

function send(message: BridgeEvent | BridgeBatch): void {
  if (window && !window.isDestroyed()) window.webContents.send(EVENT_CHANNEL, message);
}

async function main(): Promise<void> {
  await app.whenReady();
  protocol.handle(APP_SCHEME, (request) => serveAppRequest(request.url, join(__dirname, "../renderer")));
  const dataDir = app.getPath("userData");
  await ensurePrivateDir(dataDir);
  // Also against a `./fleet serve` on the same folder, which Electron's single-instance lock does not see.
  const lock = await lockDataFolder(dataDir, "T3 Fleet app");
  app.on("will-quit", () => void lock.release());
  const { secrets, notices } = await openDesktopSecrets({
    openKeychain: () => KeytarSecretStore.open(),
    safeStorage: safeStorageView,
    path: join(dataDir, "tokens.enc.json"),
    ask: askToStoreUnprotected,
  });
  const service = await FleetService.start({ dataDir, secrets, notices, openExternal: (url) => shell.openExternal(url) });

  const notifier = new NativeNotifier({
    create: (options) => new Notification(options),
    windowFocused: () => Boolean(window && !window.isDestroyed() && window.isFocused()),
    showWindow,
    send: (event) => mailbox.deliver(event),
  });
  const bridge = registerBridge(ipcMain, service, appUrl, send, notifier);
  // A reloaded or closed page no longer shows the agents it had open: they are closed for it.
  onPageLeft = () => {
    notifier.showing(null);
    service.viewerLeft(WINDOW_VIEWER);
  };
  service.on("event", (event) => {
    if (event.type === "notification") notifier.notify(event.notification);
  });

  // The demo passes pairing links of its simulated machines.
  for (const link of demoPairingLinks(app, process.env)) {
    await service.request("pair.confirm", { input: link }).catch((error: unknown) => console.error(`demo pairing: ${describeError(error)}`));
  }

  const trayCommands = new TrayCommands(
    {
      showWindow,
      hasWindow: () => Boolean(window && !window.isDestroyed()),
      send,
      quit: () => app.quit(),
      setNotificationsPaused: (paused) =>
        void service
          .request("settings.update", { notificationsPaused: paused })
          .catch((error: unknown) => console.error(`T3 Fleet: could not ${paused ? "pause" : "resume"} notifications: ${describeError(error)}`)),
    },
    mailbox,
  );
  const tray = new Tray(trayImage("nothing-paired"));
  new TrayController(
    {
      setVariant: (variant) => tray.setImage(trayImage(variant)),
      setToolTip: (text) => tray.setToolTip(text),
      setMenu: (items) => tray.setContextMenu(Menu.buildFromTemplate(items.map((item) => menuItem(item, trayCommands)))),
    },
    service,
  );
  tray.on("click", () => showWindow());

  watchSystemWake(powerMonitor, () => service.recheckAll());
  app.on("second-instance", () => showWindow());
  app.on("activate", () => showWindow());
  sendSnapshot = () => bridge.pageLoaded();
  showWindow();
  app.on("before-quit", () => void service.stop());
}

function trayImage(variant: TrayVariant): Electron.NativeImage {
  const image = nativeImage.createFromBitmap(trayIconBitmap(variant, 16), { width: 16, height: 16 });
  image.addRepresentation({ scaleFactor: 2, width: 32, height: 32, buffer: trayIconBitmap(variant, 32) });
  return image;
}

function menuItem(item: TrayItem, commands: TrayCommands): Electron.MenuItemConstructorOptions {
  switch (item.kind) {
    case "separator":
      return { type: "separator" };
    case "label":
      return { label: item.label, enabled: false };
    case "agent":
      return { label: item.label, click: () => commands.openAgent(item.agentKey) };
    case "action":
      return { label: item.label, click: () => commands.run(item.command) };
  }
}

// Last resort: a bug in one handler is logged (without secrets) and the tray keeps watching the fleet.
process.on("uncaughtException", (error) => console.error(`T3 Fleet: unexpected error: ${describeError(error)}`));
process.on("unhandledRejection", (error) => console.error(`T3 Fleet: unexpected error: ${describeError(error)}`));

// Tray-resident: closing the window keeps the fleet watched; Quit is in the tray menu.
app.on("window-all-closed", () => {});
// No <webview> may ever be attached, in any web contents.
app.on("web-contents-created", (_event, contents) => contents.on("will-attach-webview", (event) => event.preventDefault()));

// A start that fails (unreadable data folder, no secret store) says why and quits, instead of
// leaving a process with no window and no tray.
if (firstInstance) {
  main().catch((error: unknown) => {
    dialog.showErrorBox("T3 Fleet could not start", error instanceof DataFolderBusyError ? error.message : describeError(error));
    app.exit(1);
  });
}
