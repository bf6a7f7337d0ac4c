// The renderer's own origin in the Electron shell: app://fleet, a privileged standard scheme served
// from the built renderer folder, instead of file:// (which would share an origin with every local
// file). Every answer carries the CSP as a header; the renderer talks only over the preload IPC, so
// it may connect nowhere.
import { readFile } from "node:fs/promises";
import { extname, join, normalize, sep } from "node:path";
import { rendererContentType } from "../../shared/bridge/renderer-bundle";

export const APP_SCHEME = "app";
export const APP_ORIGIN = `${APP_SCHEME}://fleet`;
export const APP_URL = `${APP_ORIGIN}/index.html`;

/** protocol.registerSchemesAsPrivileged privileges: a secure standard origin that can load ES modules. */
export const APP_SCHEME_PRIVILEGES = { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true } as const;

export const RENDERER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'none'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const HEADERS = { "content-security-policy": RENDERER_CSP, "x-content-type-options": "nosniff", "cache-control": "no-store" };

function notFound(): Response {
  return new Response("Not found", { status: 404, headers: { "content-type": "text/plain; charset=utf-8", ...HEADERS } });
}

/** Answers one app:// request from `rendererDir`; anything outside it, or on another host, is 404. */
export async function serveAppRequest(requestUrl: string, rendererDir: string): Promise<Response> {
  const url = URL.parse(requestUrl);
  if (!url || `${url.protocol}//${url.host}` !== APP_ORIGIN) return notFound();
  let relative: string;
  try {
    relative = url.pathname === "/" ? "index.html" : decodeURIComponent(url.pathname.slice(1));
  } catch {
    return notFound();
  }
  const root = normalize(rendererDir);
  const file = normalize(join(root, relative));
  if (!file.startsWith(root + sep)) return notFound();
  try {
    const body = await readFile(file);
    return new Response(new Uint8Array(body), { status: 200, headers: { "content-type": rendererContentType(extname(file)), ...HEADERS } });
  } catch {
    return notFound();
  }
}
