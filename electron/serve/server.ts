// The headless shell: serves the built renderer and the fleet bridge over one WebSocket on
// 127.0.0.1, guarded by a random per-launch token (design §1, §6). Same contract as the Electron preload.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { extname, join, normalize, sep } from "node:path";
import { WebSocketServer, type WebSocket } from "ws";
import { BridgeClientMessage, type BridgeEvent, type BridgeServerMessage } from "../../shared/bridge/contract";
import { parseJson } from "../../shared/t3/decode";
import { BridgeError } from "../fleet/bridge-error";
import type { FleetService } from "../fleet/service";

const COOKIE = "t3fleet_token";
/** Largest bridge request accepted from a page (a message is at most 120,000 characters). */
const MAX_BRIDGE_FRAME_BYTES = 1024 * 1024;

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
};

/** Strict CSP: only this origin's scripts and styles, the bridge socket, no framing (design §6). */
function contentSecurityPolicy(origin: string): string {
  const ws = origin.replace(/^http/, "ws");
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self' ${ws}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export interface HeadlessShellOptions {
  service: FleetService;
  /** Folder of the built renderer (electron-vite's out/renderer). */
  rendererDir: string;
  port?: number;
  /** Fixed token (tests); a random one per launch otherwise. */
  token?: string;
}

export interface HeadlessShell {
  url: string;
  origin: string;
  token: string;
  close(): Promise<void>;
}

function sameToken(candidate: string | undefined | null, token: string): boolean {
  if (!candidate) return false;
  const a = Buffer.from(candidate);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieToken(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === COOKIE) return value.join("=");
  }
  return undefined;
}

export async function startHeadlessShell(options: HeadlessShellOptions): Promise<HeadlessShell> {
  const token = options.token ?? randomBytes(24).toString("base64url");
  const sockets = new Set<Socket>();
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_BRIDGE_FRAME_BYTES });
  let origin = "";

  const authorized = (req: IncomingMessage, url: URL) => sameToken(url.searchParams.get("token"), token) || sameToken(cookieToken(req), token);

  const refuse = (res: ServerResponse, status: number, text: string) => {
    res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
    res.end(text);
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", origin);
      if (req.method !== "GET") return refuse(res, 405, "Method not allowed");
      if (!authorized(req, url)) return refuse(res, 403, "This T3 Fleet page needs the link printed when it started.");
      const relative = url.pathname === "/" ? "index.html" : decodeURIComponent(url.pathname.slice(1));
      const path = normalize(join(options.rendererDir, relative));
      if (!path.startsWith(normalize(options.rendererDir) + sep)) return refuse(res, 404, "Not found");
      let body: Buffer;
      try {
        body = await readFile(path);
      } catch {
        return refuse(res, 404, "Not found");
      }
      const headers: Record<string, string> = {
        "content-type": CONTENT_TYPES[extname(path)] ?? "application/octet-stream",
        "content-security-policy": contentSecurityPolicy(origin),
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "cache-control": "no-store",
      };
      // The page keeps the token in a strict same-site cookie so its assets and socket carry it.
      if (relative === "index.html") headers["set-cookie"] = `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`;
      res.writeHead(200, headers);
      res.end(body);
    })().catch(() => refuse(res, 500, "Internal error"));
  });

  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  server.on("upgrade", (req, socket, head) => {
    const url = new URL(req.url ?? "/", origin);
    // Browsers send cookies on cross-site WebSockets: the Origin must be this page's (design §6).
    const fromPage = req.headers.origin === undefined || req.headers.origin === origin;
    if (url.pathname !== "/bridge" || !authorized(req, url) || !fromPage) {
      socket.end("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => attachBridge(ws, options.service));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: `${origin}/?token=${token}`,
    origin,
    token,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One UI connection: a snapshot first, then every event; requests are decoded by the service. */
function attachBridge(ws: WebSocket, service: FleetService): void {
  const send = (message: BridgeServerMessage) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
  };
  const onEvent = (event: BridgeEvent) => send({ type: "event", event });
  service.on("event", onEvent);
  ws.on("close", () => service.off("event", onEvent));
  send({ type: "event", event: { type: "fleet.snapshot", snapshot: service.snapshot() } });

  ws.on("message", (data, isBinary) => {
    const json = isBinary ? { ok: false as const, message: "binary frame" } : parseJson(data.toString("utf8"));
    const message = json.ok ? BridgeClientMessage.safeParse(json.value) : undefined;
    if (!message?.success) {
      ws.close(4400, "malformed bridge message");
      return;
    }
    const { id, method, params } = message.data;
    service.request(method, params).then(
      (result) => send({ type: "response", id, ok: true, result: result ?? null }),
      (error: unknown) => {
        const kind = error instanceof BridgeError ? error.kind : "internal";
        const text = error instanceof Error ? error.message : String(error);
        send({ type: "response", id, ok: false, error: { kind, message: text } });
      },
    );
  });
}
