// The HTTP and WebSocket host both simulated T3 generations run on, 127.0.0.1 only: start and stop
// (graceful or killed), restart on the same port, a blackhole, a deaf window after listening, body
// reading, bearer checks and the `/ws` upgrade into one Effect-RPC peer per socket (sim/rpc-peer.ts).
// What a server answers is its own: sim/protocol1/server.ts and sim/protocol2/server.ts.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import type { BearerSession, SimAuth } from "./auth";
import type { RpcPeer } from "./rpc-peer";

export const MAX_REQUEST_BODY_BYTES = 16 * 1024 * 1024;
/** How many of the latest requests a host remembers (requestLog). */
const REQUEST_LOG_LIMIT = 1_000;

/** One request a host was sent (an HTTP request or a socket upgrade), counted at the server. */
export interface LoggedRequest {
  at: number;
  method: string;
  path: string;
  /** The session whose bearer or ticket it carried (revoked ones too), null when it carried none. */
  sessionId: string | null;
}

export interface HostPeer {
  rpc: RpcPeer;
  ws: WebSocket;
  session: BearerSession;
}

/** Writes a refusal of an upgrade on the raw socket; a body, when given, is JSON. */
export type RefuseUpgrade = (status: string, body?: unknown) => void;

export function bearerOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  return header?.startsWith("Bearer ") ? header.slice("Bearer ".length) : undefined;
}

/** What a client asks of a shell or thread stream (both protocols name the fields alike): resume after a sequence, a completion marker. */
export interface StreamRequest {
  threadId: unknown;
  options: { afterSequence: number | undefined; marker: boolean };
}

export function streamRequestOf(payload: unknown): StreamRequest {
  const request = (payload ?? {}) as { threadId?: unknown; afterSequence?: unknown; requestCompletionMarker?: unknown };
  return {
    threadId: request.threadId,
    options: { afterSequence: typeof request.afterSequence === "number" ? request.afterSequence : undefined, marker: request.requestCompletionMarker === true },
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "access-control-allow-origin": "*" });
  res.end(JSON.stringify(body));
}

export function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status, { "access-control-allow-origin": "*" });
  res.end();
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_REQUEST_BODY_BYTES) throw new Error("body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export abstract class SimHost {
  protected abstract readonly auth: SimAuth;
  protected readonly peers = new Set<HostPeer>();
  protected port: number;
  private http: Server | undefined;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_REQUEST_BODY_BYTES });
  private readonly sockets = new Set<Socket>();
  private blackholed = false;
  /** Connections accepted while starting up: never answered (see start). */
  private readonly deafSockets = new WeakSet<Socket>();
  private deafUntil = 0;
  /** The latest requests it was sent, answered or not: what a client asked of it (a retry storm shows here). */
  readonly requestLog: LoggedRequest[] = [];

  constructor(port = 0) {
    this.port = port;
  }

  /** Answers one HTTP request; never called while blackholed or deaf. A throw answers 500. */
  protected abstract handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>;
  /** The session an upgrade of `/ws` opens, or undefined once `refuse` has answered it. */
  protected abstract upgradeSession(req: IncomingMessage, url: URL, refuse: RefuseUpgrade): BearerSession | undefined;
  /** The Effect-RPC peer that serves one accepted socket. */
  protected abstract rpcPeer(ws: WebSocket, session: BearerSession): RpcPeer;
  /** The agents stop with the process… */
  protected abstract halt(): void;
  /** …and go on once it listens again. */
  protected abstract resume(): void;
  /** After a restart: what the server does about the work the old process was doing. */
  protected abstract afterRestart(): void;

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.http !== undefined;
  }

  /** When a server started with a deaf window answers new connections (ms since epoch). */
  get servesFrom(): number {
    return this.deafUntil;
  }

  /**
   * Starts listening. T3 binds its port a few seconds before it serves: connections accepted in
   * the first `deafForMs` are never answered, even once it is ready.
   */
  async start(deafForMs = 0): Promise<this> {
    if (this.http) return this;
    const server = createServer((req, res) => this.route(req, res));
    this.deafUntil = Date.now() + deafForMs;
    server.on("connection", (socket) => {
      if (Date.now() < this.deafUntil) this.deafSockets.add(socket);
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    server.on("upgrade", (req, socket, head) => this.upgrade(req, socket as Socket, head));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    const address = server.address();
    if (address && typeof address === "object") this.port = address.port;
    this.http = server;
    this.resume();
    return this;
  }

  /** Stops listening. `graceful` closes sockets with a close frame; otherwise they are destroyed (kill -9). */
  async stop(graceful = true): Promise<void> {
    const server = this.http;
    if (!server) return;
    this.http = undefined;
    this.halt();
    for (const peer of this.peers) {
      peer.rpc.disposeAll();
      if (graceful) peer.ws.close(1012, "server restart");
      else peer.ws.terminate();
    }
    this.peers.clear();
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Restart on the same port with the same identity. */
  async restart(): Promise<void> {
    await this.stop(true);
    await this.start();
    this.afterRestart();
  }

  /** The process is killed: connections drop without a close frame and the port stops answering. */
  kill(): Promise<void> {
    return this.stop(false);
  }

  /**
   * The host vanishes without a FIN: sockets stay open but nothing is answered (no Pong, no HTTP
   * response). Lifting it drops the stalled connections, as a network partition ending would.
   */
  setBlackhole(on: boolean): void {
    this.blackholed = on;
    for (const peer of this.peers) peer.rpc.silent = on;
    if (!on) {
      for (const peer of this.peers) peer.ws.terminate();
      this.peers.clear();
    }
  }

  /** The thread of every thread stream open now, over all connections: what clients keep subscribed, counted here. */
  openThreadStreams(): string[] {
    const threads: string[] = [];
    for (const peer of this.peers)
      for (const stream of peer.rpc.streams.values())
        if (stream.tag === "orchestration.subscribeThread") threads.push(String((stream.payload as { threadId?: unknown } | null)?.threadId));
    return threads;
  }

  /** Closes the open sockets of a revoked session. */
  protected closeSocketsOf(session: BearerSession): void {
    for (const peer of this.peers) if (peer.session === session) peer.ws.close(4401, "session revoked");
  }

  /**
   * Upstream T3's token exchange (`POST /oauth/token`), one copy for both protocols: a pairing
   * credential for a bearer session with the scopes asked (or all it grants). An undecodable body
   * gets an empty 400; a scope the credential does not grant, T3's `scope_not_granted`.
   */
  protected async exchangeToken(req: IncomingMessage, res: ServerResponse, unauthorized: (res: ServerResponse) => void): Promise<void> {
    const contentType = req.headers["content-type"] ?? "";
    const form = new URLSearchParams(contentType.includes("application/x-www-form-urlencoded") ? await readBody(req) : "");
    const token = form.get("subject_token");
    const valid =
      form.get("grant_type") === "urn:ietf:params:oauth:grant-type:token-exchange" &&
      form.get("subject_token_type") === "urn:t3:params:oauth:token-type:environment-bootstrap" &&
      typeof token === "string";
    if (!valid || !token) return sendEmpty(res, 400);
    const scope = form.get("scope");
    const result = this.auth.exchange(token, scope ? scope.split(" ").filter(Boolean) : undefined, form.get("client_label") ?? "");
    if (!result.ok) {
      if (result.reason === "scope_not_granted")
        return sendJson(res, 400, {
          _tag: "EnvironmentRequestInvalidError",
          code: "invalid_request",
          reason: "scope_not_granted",
          traceId: randomUUID().replace(/-/g, ""),
        });
      return unauthorized(res);
    }
    sendJson(res, 200, {
      access_token: result.session.token,
      issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
      token_type: "Bearer",
      expires_in: Math.floor((result.session.expiresAt - Date.now()) / 1000) - 1,
      scope: result.session.scopes.join(" "),
    });
  }

  /** The session a request's bearer token opens, and whether it offered none. */
  protected bearerSession(req: IncomingMessage): { session: BearerSession | undefined; missing: boolean } {
    const bearer = bearerOf(req);
    return { session: this.auth.verify(bearer), missing: !bearer };
  }

  /** An upgrade's credential: the one-use ticket in `ticketParam` if given, else the bearer header. */
  protected socketSession(req: IncomingMessage, url: URL, ticketParam: string): { session: BearerSession | undefined; missing: boolean } {
    const ticket = url.searchParams.get(ticketParam);
    if (ticket !== null) return { session: this.auth.verifyTicket(ticket), missing: false };
    return this.bearerSession(req);
  }

  private logRequest(req: IncomingMessage): void {
    let url: URL | undefined;
    try {
      url = new URL(req.url ?? "/", this.baseUrl);
    } catch {
      url = undefined;
    }
    const credential = bearerOf(req) ?? url?.searchParams.get("wsTicket") ?? url?.searchParams.get("wsToken") ?? undefined;
    const path = url?.pathname ?? String(req.url);
    this.requestLog.push({ at: Date.now(), method: req.method ?? "GET", path, sessionId: this.auth.sessionIdOf(credential) });
    if (this.requestLog.length > REQUEST_LOG_LIMIT) this.requestLog.splice(0, this.requestLog.length - REQUEST_LOG_LIMIT);
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    this.logRequest(req);
    // Never answered; dropped when the partition lifts or the server stops.
    if (this.blackholed || this.deafSockets.has(req.socket)) return;
    this.handle(req, res, new URL(req.url ?? "/", this.baseUrl)).catch(() => {
      if (!res.headersSent) sendEmpty(res, 500);
      else res.destroy();
    });
  }

  private upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    // Node hands an upgrade's socket over without its error listener: one the host holds (blackholed,
    // deaf) or refuses, reset by its client, would otherwise crash the process (host.test.ts).
    socket.on("error", () => socket.destroy());
    this.logRequest(req);
    if (this.blackholed || this.deafSockets.has(socket)) return;
    const url = new URL(req.url ?? "/", this.baseUrl);
    const refuse: RefuseUpgrade = (status, body) => {
      const text = body === undefined ? "" : JSON.stringify(body);
      const type = body === undefined ? "" : "content-type: application/json\r\n";
      socket.end(`HTTP/1.1 ${status}\r\n${type}content-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
    };
    if (url.pathname !== "/ws") return refuse("404 Not Found");
    const session = this.upgradeSession(req, url, refuse);
    if (!session) return;
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const peer: HostPeer = { ws, session, rpc: this.rpcPeer(ws, session) };
      this.peers.add(peer);
      ws.on("close", () => this.peers.delete(peer));
    });
  }
}
