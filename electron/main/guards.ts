// Window and IPC guards of the Electron shell (design §6), written against thin interfaces of
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

/** Whether a URL is the app's own page (file:// build or the dev server origin). */
export function isAppUrl(url: string, appUrl: string): boolean {
  if (!URL.canParse(url) || !URL.canParse(appUrl)) return false;
  const candidate = new URL(url);
  const app = new URL(appUrl);
  if (app.protocol === "file:") return candidate.protocol === "file:" && candidate.pathname === app.pathname;
  return candidate.origin === app.origin;
}

/** IPC is answered only for the app's own top frame (design §6: IPC senders checked). */
export function isTrustedSender(frame: { url: string; parent: unknown } | null | undefined, appUrl: string): boolean {
  return frame != null && frame.parent === null && isAppUrl(frame.url, appUrl);
}
