// What the Electron shell decides before it shows anything, as thin functions over the parts of
// Electron they read (tested in electron/main/startup.test.ts without launching Electron).
import { z } from "zod";
import { parseJson } from "../../shared/t3/decode";
import { APP_URL } from "./app-protocol";

/** The parts of Electron's `app` the start-up decisions read. */
export interface AppLike {
  readonly isPackaged: boolean;
  requestSingleInstanceLock(): boolean;
  exit(code?: number): void;
}

/**
 * Claims the single-instance lock; a second start exits at once (the first one shows its window on
 * "second-instance") instead of going on to open the data folder and connect to T3 servers.
 */
export function claimSingleInstance(app: AppLike): boolean {
  if (app.requestSingleInstanceLock()) return true;
  app.exit(0);
  return false;
}

/**
 * Where the window loads the renderer from: the dev server only in development; a packaged build
 * always loads its own bundle, whatever ELECTRON_RENDERER_URL says (it would hand the bridge to a page from anywhere).
 */
export function rendererUrl(app: Pick<AppLike, "isPackaged">, env: NodeJS.ProcessEnv): string {
  if (app.isPackaged) return APP_URL;
  return env.ELECTRON_RENDERER_URL || APP_URL;
}

const DemoLinks = z.array(z.string().max(4_000)).max(50);

/** Pairing links the demo passes in development; never in a packaged build (a variable must not pair a user's app). */
export function demoPairingLinks(app: Pick<AppLike, "isPackaged">, env: NodeJS.ProcessEnv): string[] {
  if (app.isPackaged || !env.T3_FLEET_DEMO_PAIRING) return [];
  const json = parseJson(env.T3_FLEET_DEMO_PAIRING);
  const links = json.ok ? DemoLinks.safeParse(json.value) : undefined;
  return links?.success ? links.data : [];
}
