// Window and IPC guards of the Electron shell (README.md, "Security"), written against thin interfaces of
// Electron's objects so they are tested without launching Electron.
import { safeExternalUrl } from "../../shared/bridge/contract";

export interface WebContentsLike {
  setWindowOpenHandler(handler: (details: { url: string }) => { action: "deny" }): void;
  on(event: "will-navigate" | "will-redirect", listener: (event: { preventDefault(): void }, url: string) => void): void;
}

export interface SessionLike {
  setPermissionRequestHandler(handler: (webContents: unknown, permission: string, callback: (granted: boolean) => void) => void): void;
  setPermissionCheckHandler(handler: () => boolean): void;
}

/**
 * No new windows, no navigation away from the app, no permissions. A window.open of an http(s)
 * link is handed to the system browser instead; anything else is dropped.
 */
export function hardenWindow(webContents: WebContentsLike, session: SessionLike, appUrl: string, openExternal: (url: string) => void): void {
  webContents.setWindowOpenHandler(({ url }) => {
    const safe = safeExternalUrl(url);
    if (safe) openExternal(safe);
    return { action: "deny" };
  });
  const stayInApp = (event: { preventDefault(): void }, url: string) => {
    if (!isAppUrl(url, appUrl)) event.preventDefault();
  };
  webContents.on("will-navigate", stayInApp);
  webContents.on("will-redirect", stayInApp);
  session.setPermissionRequestHandler((_webContents, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
}

/** Whether a URL is the app's own page (the app:// origin of a build, or the dev server's origin). */
export function isAppUrl(url: string, appUrl: string): boolean {
  const candidate = URL.parse(url);
  const app = URL.parse(appUrl);
  if (!candidate || !app) return false;
  // Custom schemes have an opaque ("null") origin in URL: compare scheme and host instead.
  if (app.protocol === "http:" || app.protocol === "https:") return candidate.origin === app.origin;
  if (app.protocol === "file:") return false;
  return candidate.protocol === app.protocol && candidate.host === app.host && candidate.host !== "";
}

/** IPC is answered only for the app's own top frame: IPC senders are checked. */
export function isTrustedSender(frame: { url: string; parent: unknown } | null | undefined, appUrl: string): boolean {
  return frame != null && frame.parent === null && isAppUrl(frame.url, appUrl);
}
