// Electron shell entry: a single-instance app with one hardened window. Fleet logic lives in
// electron/fleet (plain Node); this file only hosts it.
import { join } from "node:path";
import { app, BrowserWindow } from "electron";

if (!app.requestSingleInstanceLock()) app.quit();

function createWindow(): BrowserWindow {
  const window = new BrowserWindow({
    width: 1200,
    height: 800,
    title: "T3 Fleet",
    webPreferences: {
      preload: join(__dirname, "../preload/index.cjs"),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
    },
  });
  window.webContents.setWindowOpenHandler(() => ({ action: "deny" }));
  window.webContents.on("will-navigate", (event) => event.preventDefault());
  void window.loadFile(join(__dirname, "../renderer/index.html"));
  return window;
}

void app.whenReady().then(createWindow);
app.on("window-all-closed", () => {
  if (process.platform !== "darwin") app.quit();
});
