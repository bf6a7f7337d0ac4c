// The headless shell: serves the built renderer and the fleet bridge over one WebSocket on
// 127.0.0.1 (README.md, "Security"). Same contract as the Electron preload.
//
// Access (issue 9): the printed launch link carries a one-time code in its fragment (never sent in
// a request line, so never in a proxy or server log). The page trades it once, at POST /session,
// for a session secret it keeps in sessionStorage (this tab only, survives a reload, never a
// cookie) and offers as a WebSocket subprotocol. A spent code opens nothing. Every request must
// name this shell's own loopback address in Host (DNS rebinding), and the bridge and the exchange
// must come from this shell's own Origin. No handler can take the process down. How long codes and
// sessions last, and how failed exchanges are limited: electron/serve/shell-sessions.ts.
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { extname, join, normalize, sep } from "node:path";
import { WebSocketServer } from "ws";
import { BRIDGE_CLOSE_UNAUTHORIZED, BRIDGE_SESSION_PROTOCOL_PREFIX, BRIDGE_SUBPROTOCOL, MAX_BRIDGE_FRAME_BYTES } from "../../shared/bridge/contract";
import { describeError } from "../../shared/bridge/redact";
import { rendererContentType } from "../../shared/bridge/renderer-bundle";
import { parseJson } from "../../shared/t3/decode";
import type { FleetService } from "../fleet/service";
import { attachBridge, type BridgeLimits, DEFAULT_BRIDGE_LIMITS } from "./bridge-socket";
import { rateLimited, terminal } from "./terminal";
import { ShellSessions, type ShellSessionTiming } from "./shell-sessions";

/** The launch-code exchange: the page posts `{"code": …}` and gets `{"session": …}`. */
export const SESSION_PATH = "/session";
export const BRIDGE_PATH = "/bridge";
/** A session exchange body is a few dozen bytes; anything larger is not one. */
const MAX_SESSION_BODY_BYTES = 1_024;
/**
 * Connections that have not (yet) become a bridge with a session: the page's own requests need a
 * handful; more at once is a local process hammering the shell, and the newest are dropped.
 */
export const MAX_UNAUTHENTICATED_CONNECTIONS = 64;
/** A request's headers and body must have arrived by then: a client that dribbles them is cut off. */
export const REQUEST_TIMEOUT_MS = 10_000;

/** Strict CSP: only this origin's scripts and styles, the bridge socket, no framing. */
function contentSecurityPolicy(origin: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self' ${origin.replace(/^http/, "ws")}${BRIDGE_PATH}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

export interface HeadlessShellOptions {
  service: FleetService;
  /** Folder of the built renderer (electron-vite's out/renderer). */
  rendererDir: string;
  port?: number;
  /** Where problems are reported (already redacted); stderr by default, rate-limited. */
  log?: (line: string) => void;
  /** Bounds of each bridge socket (bridge-socket.ts); tests lower them. */
  bridgeLimits?: BridgeLimits;
  /** How long a request may take to arrive (headers and body); tests lower it. */
  requestTimeoutMs?: number;
  /** Launch-code and session lifetimes (electron/serve/shell-sessions.ts); tests shorten them. */
  sessionTiming?: Partial<ShellSessionTiming>;
  now?: () => number;
}

export interface HeadlessShell {
  /** The launch link printed at start: opens the fleet once, in one browser tab. */
  url: string;
  origin: string;
  /** Mints another single-use launch link (a second tab or browser; tests). */
  newLaunchUrl(): string;
  /** How long a launch link opens the fleet. */
  launchCodeMinutes: number;
  close(): Promise<void>;
}

/** The request's path, or undefined when the request line is not a plain absolute path. */
function requestPath(req: IncomingMessage): string | undefined {
  const raw = req.url ?? "";
  if (!raw.startsWith("/") || raw.startsWith("//")) return undefined;
  const url = URL.parse(raw, "http://127.0.0.1");
  return url?.pathname;
}

function offeredProtocols(req: IncomingMessage): string[] {
  const header = req.headers["sec-websocket-protocol"];
  return typeof header === "string" ? header.split(",").map((protocol) => protocol.trim()) : [];
}

export async function startHeadlessShell(options: HeadlessShellOptions): Promise<HeadlessShell> {
  const log = rateLimited(options.log ?? ((line: string) => terminal.err(line)));
  const report = (where: string, error: unknown) => log(`t3-fleet serve: ${where}: ${describeError(error)}`);
  const sockets = new Set<Socket>();
  const sessions = new ShellSessions(options.sessionTiming, options.now, log);
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_BRIDGE_FRAME_BYTES,
    handleProtocols: (protocols) => (protocols.has(BRIDGE_SUBPROTOCOL) ? BRIDGE_SUBPROTOCOL : false),
  });
  let origin = "";
  let host = "";

  const refuse = (res: ServerResponse, status: number, text: string) => {
    if (res.headersSent) return void res.destroy();
    res.writeHead(status, { "content-type": "text/plain; charset=utf-8", connection: "close", ...SECURITY_HEADERS });
    res.end(text);
  };

  const serveFile = async (path: string, res: ServerResponse, head: boolean) => {
    let relative: string;
    try {
      relative = path === "/" ? "index.html" : decodeURIComponent(path.slice(1));
    } catch {
      return refuse(res, 400, "Bad request");
    }
    const file = normalize(join(options.rendererDir, relative));
    if (!file.startsWith(normalize(options.rendererDir) + sep)) return refuse(res, 404, "Not found");
    let body: Buffer;
    try {
      body = await readFile(file);
    } catch {
      return refuse(res, 404, "Not found");
    }
    res.writeHead(200, {
      "content-type": rendererContentType(extname(file)),
      "content-security-policy": contentSecurityPolicy(origin),
      ...SECURITY_HEADERS,
    });
    res.end(head ? undefined : body);
  };

  const exchangeLaunchCode = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.origin !== origin) return refuse(res, 403, "Forbidden");
    if (!(req.headers["content-type"] ?? "").startsWith("application/json")) return refuse(res, 415, "Expected JSON");
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_SESSION_BODY_BYTES) return refuse(res, 413, "Too large");
      chunks.push(chunk);
    }
    const body = parseJson(Buffer.concat(chunks).toString("utf8"));
    const code = body.ok && typeof body.value === "object" && body.value !== null ? (body.value as { code?: unknown }).code : undefined;
    const exchanged = sessions.exchange(code);
    if (!exchanged.ok) return refuse(res, exchanged.status, exchanged.message);
    res.writeHead(200, { "content-type": "application/json", ...SECURITY_HEADERS });
    res.end(JSON.stringify({ session: exchanged.session }));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.host !== host) return refuse(res, 421, "This T3 Fleet serves only its own address.");
    const path = requestPath(req);
    if (path === undefined) return refuse(res, 400, "Bad request");
    if (path === SESSION_PATH) return req.method === "POST" ? exchangeLaunchCode(req, res) : refuse(res, 405, "Method not allowed");
    if (req.method !== "GET" && req.method !== "HEAD") return refuse(res, 405, "Method not allowed");
    // The page and its assets are the public renderer bundle: no secret in them, so no check here.
    return serveFile(path, res, req.method === "HEAD");
  };

  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const server: Server = createServer(
    // Node checks these deadlines every connectionsCheckingInterval: a slow-loris client that sends
    // its headers or its body a byte at a time is answered 408 and dropped.
    { maxHeaderSize: 16 * 1024, requestTimeout, headersTimeout: requestTimeout, connectionsCheckingInterval: Math.min(1_000, requestTimeout) },
    (req, res) => {
      handle(req, res).catch((error: unknown) => {
        report("request", error);
        refuse(res, 500, "Internal error");
      });
    },
  );

  // Every TCP connection counts as unauthenticated until it is a bridge socket with a session.
  const unauthenticated = new Set<Socket>();
  server.on("connection", (socket) => {
    if (unauthenticated.size >= MAX_UNAUTHENTICATED_CONNECTIONS) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    unauthenticated.add(socket);
    socket.on("close", () => {
      sockets.delete(socket);
      unauthenticated.delete(socket);
    });
  });
  // Malformed requests and oversized headers: answer and drop that socket, nothing else.
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) return void socket.destroy();
    const status =
      error.code === "HPE_HEADER_OVERFLOW"
        ? "431 Request Header Fields Too Large"
        : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? "408 Request Timeout"
          : "400 Bad Request";
    socket.end(`HTTP/1.1 ${status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
  });
  server.on("error", (error) => report("server", error));

  const refuseUpgrade = (socket: Duplex, status: string) => {
    if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
    else socket.destroy();
  };

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    try {
      if (req.headers.host !== host) return refuseUpgrade(socket, "421 Misdirected Request");
      // A page on any other origin (or a client that sends none) never reaches the bridge.
      if (req.headers.origin !== origin) return refuseUpgrade(socket, "403 Forbidden");
      // Exactly the bridge path: no query, no dot segments a URL parser would resolve.
      if (req.url !== BRIDGE_PATH) return refuseUpgrade(socket, "404 Not Found");
      const protocols = offeredProtocols(req);
      if (!protocols.includes(BRIDGE_SUBPROTOCOL)) return refuseUpgrade(socket, "400 Bad Request");
      const offered = protocols.find((protocol) => protocol.startsWith(BRIDGE_SESSION_PROTOCOL_PREFIX));
      const session = offered?.slice(BRIDGE_SESSION_PROTOCOL_PREFIX.length);
      wss.handleUpgrade(req, socket, head, (ws) => {
        // Oversized frames (1009) and invalid UTF-8 (1007): ws closes the socket with the right code
        // itself; the error needs a listener so that it cannot reach the process.
        ws.on("error", (error) => report("bridge socket", error));
        // Accepted only to say why: the page stops retrying and asks for a fresh launch link.
        if (session === undefined || !sessions.connect(session)) return ws.close(BRIDGE_CLOSE_UNAUTHORIZED, "unknown session");
        unauthenticated.delete(socket as Socket);
        ws.on("close", () => sessions.disconnected(session));
        attachBridge(ws, options.service, report, options.bridgeLimits ?? DEFAULT_BRIDGE_LIMITS);
      });
    } catch (error) {
      report("upgrade", error);
      refuseUpgrade(socket, "500 Internal Server Error");
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  origin = `http://${host}`;

  const newLaunchUrl = () => {
    return `${origin}/#code=${sessions.newLaunchCode()}`;
  };

  return {
    url: newLaunchUrl(),
    origin,
    newLaunchUrl,
    launchCodeMinutes: sessions.launchCodeMinutes,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
