// A client for ONE T3 environment, the same on every protocol: identify, pair, authenticate, and
// open sockets and HTTP to its one origin. What a protocol reads and streams over them is in its
// adapter's folder (protocol1/, protocol2/: connection.ts, http-reads.ts). It retries nothing: retry
// policy belongs to the connection supervisor.
import { hostname } from "node:os";
import { T3Error } from "../../../shared/t3/errors";
import { FLEET_SCOPES } from "../../../shared/t3/pairing";
import {
  AuthSessionState,
  BearerBootstrapResponse,
  EnvironmentDescriptor,
  OAuthTokenResponse,
  WebSocketTicketResponse,
  WsTokenResponse,
} from "../../../shared/t3/schemas";
import { T3Http, decodeAnswer } from "./http";
import { OriginToken } from "./origin-token";
import { RpcSocket, type RpcSocketOptions } from "./rpc-socket";

/** Which auth API a server speaks: the 0.0.24 fork's bearer sessions, or upstream's scoped OAuth exchange. */
export type AuthGeneration = "fork" | "upstream";

export interface T3Credentials {
  /** Sent only to the origin that issued it (origin-token.ts). */
  token: OriginToken;
  generation: AuthGeneration;
}

export interface PairResult {
  environment: EnvironmentDescriptor;
  generation: AuthGeneration;
  /** Bound to the origin paired with: the only one this token may ever be sent to. */
  token: OriginToken;
  expiresAt?: string;
  /** Upstream: the scopes granted. Fork: derived from the role (every socket method is allowed). */
  scopes: string[];
  /** True when the token cannot dispatch commands (no orchestration:operate). */
  readOnly: boolean;
}

/** How this client shows in T3's Connections list. */
export function defaultClientLabel(): string {
  return `T3 Fleet on ${hostname()}`;
}

/**
 * 0.0.24's bearer exchange takes no label: T3 records the User-Agent and reads the OS and device
 * type from it, so the fleet's name rides there, with an OS word T3 recognises.
 */
export function fleetUserAgent(label: string): string {
  const os = process.platform === "darwin" ? "Macintosh; Mac OS X" : process.platform === "win32" ? "Windows NT" : "Linux";
  return `T3Fleet/1 (${label.replace(/[()\r\n]/g, " ")}; ${os})`;
}

/** The OS name T3's upstream exchange shows beside the client label (`client_os`). */
function clientOs(): string {
  return process.platform === "darwin" ? "macOS" : process.platform === "win32" ? "Windows" : "Linux";
}

export interface ClientOptions {
  /** Shown in T3's Connections list; defaults to "T3 Fleet on <this host>". */
  clientLabel?: string;
  /** Socket tuning, mainly for tests. */
  socket?: Pick<RpcSocketOptions, "pingIntervalMs" | "openTimeoutMs" | "onFrame">;
  httpTimeoutMs?: number;
}

export function detectGeneration(session: AuthSessionState): AuthGeneration | undefined {
  const methods = session.auth.sessionMethods;
  if (methods.includes("bearer-access-token")) return "upstream";
  if (methods.includes("bearer-session-token")) return "fork";
  return undefined;
}

/** The socket address of `baseUrl`'s origin: same host and port, ws or wss as http or https. */
export function webSocketUrl(baseUrl: string, query: Record<string, string>): string {
  const url = new URL("/ws", baseUrl);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  return url.toString();
}

export class T3EnvironmentClient {
  readonly http: T3Http;

  constructor(
    readonly baseUrl: string,
    private readonly options: ClientOptions = {},
  ) {
    this.http = new T3Http(baseUrl, fleetUserAgent(options.clientLabel ?? defaultClientLabel()));
  }

  private get timeoutMs() {
    return this.options.httpTimeoutMs;
  }

  /** The origin this client was built for: its HTTP requests and its sockets go there and nowhere else. */
  get origin(): string {
    return this.http.origin;
  }

  /**
   * Opens a socket to this client's origin (`/ws` with `query`, which carries a short-lived socket
   * credential, never the token). WebSocket upgrades do not follow redirects (undici's WebSocket
   * fails on a 3xx, as the WHATWG spec says), so the socket cannot land on another origin either.
   */
  openSocket(query: Record<string, string>, options: ClientOptions["socket"] = this.options.socket): Promise<RpcSocket> {
    return RpcSocket.open({ ...options, url: webSocketUrl(this.origin, query) });
  }

  /** The machine was removed or moved: this client sends nothing more (T3Http.retire). */
  retire(): void {
    this.http.retire();
  }

  /** Socket tuning every connection to this environment uses (protocol adapters that open their own sockets too). */
  get socketOptions(): ClientOptions["socket"] {
    return this.options.socket;
  }

  /**
   * GET /.well-known/t3/environment. Whether T3 Fleet speaks the protocol it announces is for the
   * caller to negotiate (electron/fleet/t3/adapters.ts).
   * `timeoutMs` overrides the client's HTTP bound for this one request (the supervisor's quick probes).
   */
  async identify(timeoutMs = this.timeoutMs): Promise<EnvironmentDescriptor> {
    let environment: EnvironmentDescriptor;
    try {
      environment = await this.http.json({ method: "GET", path: "/.well-known/t3/environment", timeoutMs }, EnvironmentDescriptor, "environment descriptor");
    } catch (error) {
      // The descriptor is public on every T3 server: any HTTP refusal means this is not one.
      if (error instanceof T3Error && error.details.status !== undefined && error.kind !== "incompatible") {
        throw new T3Error("incompatible", `This is not a T3 server (${error.message}).`, { status: error.details.status });
      }
      throw error;
    }
    return environment;
  }

  /** GET /api/auth/session: public, always 200; tells the auth generation and whether a token is valid. */
  async authSession(bearer?: OriginToken): Promise<{ session: AuthSessionState; generation: AuthGeneration }> {
    const session = await this.http.json(
      { method: "GET", path: "/api/auth/session", ...(bearer && { bearer }), timeoutMs: this.timeoutMs },
      AuthSessionState,
      "auth session",
    );
    const generation = detectGeneration(session);
    if (!generation) {
      throw new T3Error("incompatible", `The server offers no bearer session method (${session.auth.sessionMethods.join(", ")}).`);
    }
    return { session, generation };
  }

  /** Pairs with a one-time pairing token, or adopts a bearer token issued by `t3 auth session issue`. */
  async pair(credential: { pairingToken: string } | { bearerToken: string }): Promise<PairResult> {
    const environment = await this.identify();
    const { generation } = await this.authSession();
    let secret: string;
    let expiresAt: string | undefined;
    if ("pairingToken" in credential) {
      const exchanged = await this.exchange(generation, credential.pairingToken);
      secret = exchanged.token;
      expiresAt = exchanged.expiresAt;
    } else {
      secret = credential.bearerToken.trim();
    }
    if (!secret) throw new T3Error("unauthorized", "The token is empty.");
    // From here on the token may travel only to the server that issued (or was given) it.
    const token = OriginToken.issuedBy(this.origin, secret);
    const { session } = await this.authSession(token);
    if (!session.authenticated) throw new T3Error("unauthorized", "The server did not accept the token.");
    const scopes = session.scopes ?? (session.role ? [...FLEET_SCOPES] : []);
    return {
      environment,
      generation,
      token,
      expiresAt: session.expiresAt ?? expiresAt,
      scopes,
      readOnly: !scopes.includes("orchestration:operate"),
    };
  }

  private async exchange(generation: AuthGeneration, pairingToken: string): Promise<{ token: string; expiresAt?: string }> {
    if (generation === "fork") {
      const answer = await this.http.json(
        { method: "POST", path: "/api/auth/bootstrap/bearer", json: { credential: pairingToken }, timeoutMs: this.timeoutMs },
        BearerBootstrapResponse,
        "pairing",
      );
      return { token: answer.sessionToken, expiresAt: answer.expiresAt };
    }
    // Ask for exactly the scopes the fleet needs, on the first try: 0.0.33 burns the token on a mismatch.
    const answer = await this.http.json(
      {
        method: "POST",
        path: "/oauth/token",
        form: {
          grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
          subject_token: pairingToken,
          subject_token_type: "urn:t3:params:oauth:token-type:environment-bootstrap",
          requested_token_type: "urn:ietf:params:oauth:token-type:access_token",
          scope: FLEET_SCOPES.join(" "),
          client_label: this.options.clientLabel ?? defaultClientLabel(),
          client_device_type: "desktop",
          client_os: clientOs(),
        },
        timeoutMs: this.timeoutMs,
      },
      OAuthTokenResponse,
      "pairing",
    );
    return { token: answer.access_token, expiresAt: new Date(Date.now() + answer.expires_in * 1000).toISOString() };
  }

  /** A short-lived socket credential: upstream ticket, falling back to the fork's ws-token on 404. */
  private async socketQuery(credentials: T3Credentials): Promise<Record<string, string>> {
    const ticketFirst = credentials.generation === "upstream";
    const attempts = ticketFirst ? (["ticket", "wsToken"] as const) : (["wsToken", "ticket"] as const);
    let lastError: T3Error | undefined;
    for (const attempt of attempts) {
      const path = attempt === "ticket" ? "/api/auth/websocket-ticket" : "/api/auth/ws-token";
      const answer = await this.http.send({ method: "POST", path, bearer: credentials.token, timeoutMs: this.timeoutMs });
      if (answer.status === 404) {
        lastError = new T3Error("incompatible", "The server offers neither a WebSocket ticket nor a ws-token.");
        continue;
      }
      if (attempt === "ticket") return { wsTicket: decodeAnswer(answer, WebSocketTicketResponse, "WebSocket ticket").ticket };
      return { wsToken: decodeAnswer(answer, WsTokenResponse, "WebSocket token").token };
    }
    throw lastError ?? new T3Error("incompatible", "No WebSocket credential endpoint.");
  }

  /**
   * Opens an authenticated socket speaking orchestration `protocol` (the `?orchestrationProtocol=`
   * parameter; protocol-1 servers ignore it). Resolves once the upgrade succeeded.
   */
  async openAuthenticatedSocket(credentials: T3Credentials, protocol: number): Promise<RpcSocket> {
    const query = await this.socketQuery(credentials);
    return this.openSocket({ ...query, orchestrationProtocol: String(protocol) });
  }
}
