// A client for ONE T3 environment: identify, pair, open the socket, subscribe, dispatch.
// It retries nothing: retry policy belongs to the connection supervisor.
import { hostname } from "node:os";
import { z } from "zod";
import type { ClientCommand } from "../../../shared/t3/commands";
import { decodeWith } from "../../../shared/t3/decode";
import { T3Error } from "../../../shared/t3/errors";
import { FLEET_SCOPES } from "../../../shared/t3/pairing";
import {
  AuthSessionState,
  BearerBootstrapResponse,
  DispatchResult,
  EnvironmentDescriptor,
  OAuthTokenResponse,
  OrchestrationEventSchema,
  ServerConfigSummary,
  type ShellDelta,
  ShellSnapshot,
  type ShellStreamItem,
  ShellStreamItemSchema,
  ThreadDetailSnapshot,
  type ThreadStreamItem,
  ThreadStreamItemSchema,
  WebSocketTicketResponse,
  WsTokenResponse,
} from "../../../shared/t3/schemas";
import { T3Http, decodeAnswer } from "./http";
import { RpcSocket, type RpcSocketOptions } from "./rpc-socket";

/** Which auth API a server speaks: the 0.0.24 fork's bearer sessions, or upstream's scoped OAuth exchange. */
export type AuthGeneration = "fork" | "upstream";

export interface T3Credentials {
  token: string;
  generation: AuthGeneration;
}

export interface PairResult {
  environment: EnvironmentDescriptor;
  generation: AuthGeneration;
  token: string;
  expiresAt?: string;
  /** Upstream: the scopes granted. Fork: derived from the role (every socket method is allowed). */
  scopes: string[];
  /** True when the token cannot dispatch commands (no orchestration:operate). */
  readOnly: boolean;
}

/** How this client shows in T3's Connections list (design §6). */
export function defaultClientLabel(): string {
  return `T3 Fleet on ${hostname()}`;
}

export interface ClientOptions {
  /** Shown in T3's Connections list; defaults to "T3 Fleet on <this host>". */
  clientLabel?: string;
  /** Socket tuning, mainly for tests. */
  socket?: Pick<RpcSocketOptions, "pingIntervalMs" | "openTimeoutMs" | "onFrame">;
  httpTimeoutMs?: number;
}

/** Orchestration protocol 1 is what this client speaks (§5.8). */
export const SUPPORTED_ORCHESTRATION_PROTOCOL = 1;

export function detectGeneration(session: AuthSessionState): AuthGeneration | undefined {
  const methods = session.auth.sessionMethods;
  if (methods.includes("bearer-access-token")) return "upstream";
  if (methods.includes("bearer-session-token")) return "fork";
  return undefined;
}

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
    this.http = new T3Http(baseUrl);
  }

  private get timeoutMs() {
    return this.options.httpTimeoutMs;
  }

  /** GET /.well-known/t3/environment. Orchestration protocol 2 servers are reported as incompatible. */
  async identify(): Promise<EnvironmentDescriptor> {
    let environment: EnvironmentDescriptor;
    try {
      environment = await this.http.json(
        { method: "GET", path: "/.well-known/t3/environment", timeoutMs: this.timeoutMs },
        EnvironmentDescriptor,
        "environment descriptor",
      );
    } catch (error) {
      // The descriptor is public on every T3 server: any HTTP refusal means this is not one.
      if (error instanceof T3Error && error.details.status !== undefined && error.kind !== "incompatible") {
        throw new T3Error("incompatible", `This is not a T3 server (${error.message}).`, { status: error.details.status });
      }
      throw error;
    }
    const protocol = environment.orchestrationProtocolVersion ?? SUPPORTED_ORCHESTRATION_PROTOCOL;
    if (protocol !== SUPPORTED_ORCHESTRATION_PROTOCOL) {
      throw new T3Error(
        "incompatible",
        `${environment.label} speaks orchestration protocol ${protocol}; T3 Fleet speaks protocol ${SUPPORTED_ORCHESTRATION_PROTOCOL}.`,
      );
    }
    return environment;
  }

  /** GET /api/auth/session: public, always 200; tells the auth generation and whether a token is valid. */
  async authSession(bearer?: string): Promise<{ session: AuthSessionState; generation: AuthGeneration }> {
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
    let token: string;
    let expiresAt: string | undefined;
    if ("pairingToken" in credential) {
      const exchanged = await this.exchange(generation, credential.pairingToken);
      token = exchanged.token;
      expiresAt = exchanged.expiresAt;
    } else {
      token = credential.bearerToken.trim();
    }
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
    // Ask for exactly the scopes the fleet needs, on the first try: 0.0.33 burns the token on a mismatch (§15.5).
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

  /** Opens an authenticated socket. Resolves once the upgrade succeeded. */
  async connect(credentials: T3Credentials): Promise<T3Connection> {
    const query = await this.socketQuery(credentials);
    const socket = await RpcSocket.open({
      ...this.options.socket,
      url: webSocketUrl(this.baseUrl, { ...query, orchestrationProtocol: String(SUPPORTED_ORCHESTRATION_PROTOCOL) }),
    });
    return new T3Connection(socket);
  }

  // ------------------------------------------------------------ HTTP forms (upstream servers)

  getShell(credentials: T3Credentials): Promise<ShellSnapshot> {
    return this.http.json({ method: "GET", path: "/api/orchestration/shell", bearer: credentials.token }, ShellSnapshot, "shell snapshot");
  }

  getThread(credentials: T3Credentials, threadId: string): Promise<ThreadDetailSnapshot> {
    return this.http.json(
      { method: "GET", path: `/api/orchestration/threads/${encodeURIComponent(threadId)}`, bearer: credentials.token },
      ThreadDetailSnapshot,
      "thread snapshot",
    );
  }

  dispatchHttp(credentials: T3Credentials, command: ClientCommand): Promise<DispatchResult> {
    return this.http.json(
      { method: "POST", path: "/api/orchestration/dispatch", bearer: credentials.token, json: command },
      DispatchResult,
      command.type,
    );
  }
}

// ------------------------------------------------------------ subscriptions

export interface Subscription {
  /** Interrupts the stream; the listener's `end` follows once. */
  close(): void;
}

interface SubscriptionListener<Snapshot, Delta> {
  /** A full snapshot: replace what you had. */
  snapshot(snapshot: Snapshot): void;
  /** One change newer than everything applied before it on this subscription. */
  delta(delta: Delta): void;
  /** Caught up: a snapshot arrived, or the server's resume replay finished (§7.5). Once per subscription. */
  synchronized(lastSequence: number): void;
  end(error?: T3Error): void;
}

export type ShellListener = SubscriptionListener<ShellSnapshot, ShellDelta>;
export type ThreadEventItem = Extract<ThreadStreamItem, { kind: "event" }>["event"];
export type ThreadListener = SubscriptionListener<ThreadDetailSnapshot, ThreadEventItem>;

export interface ResumeOptions {
  /** Last global sequence already applied; the server replays only what is newer (upstream). */
  afterSequence?: number;
  /**
   * Fork (0.0.24) servers attach a stream's live tail only after the snapshot's Ack, so events in
   * between are lost (§7.5, §14). With this set, a thread stream fetches them with
   * orchestration.replayEvents and merges them by sequence before reporting synchronized.
   */
  repairLiveTail?: boolean;
}

/** Bound for the replay call that repairs a fork stream's live-tail gap. */
const REPLAY_TIMEOUT_MS = 10_000;

/**
 * Applies the stream rules of §7.4-7.5 to one subscription: decode every item, apply only items
 * newer than the last applied sequence, and report synchronization once.
 */
class OrderedStream<Item, Snapshot, Delta> {
  private lastSequence: number;
  private synced = false;
  private ended = false;

  constructor(
    private readonly listener: SubscriptionListener<Snapshot, Delta>,
    private readonly itemSchema: z.ZodType<Item>,
    private readonly what: string,
    private readonly classify: (item: Item) =>
      | { kind: "snapshot"; snapshot: Snapshot; sequence: number }
      | { kind: "delta"; delta: Delta; sequence: number }
      | { kind: "synchronized" }
      | { kind: "ignore" },
    afterSequence: number | undefined,
  ) {
    this.lastSequence = afterSequence ?? -1;
  }

  /** Applies a chunk; returns an error when an item does not decode (the stream must then end). */
  values(values: readonly unknown[]): T3Error | undefined {
    for (const raw of values) {
      if (this.ended) return undefined;
      const decoded = decodeWith(this.itemSchema, raw, this.what);
      // One undecodable item means this stream's state can no longer be trusted: end it loudly.
      if (!decoded.ok) return T3Error.decode(decoded.error);
      const item = this.classify(decoded.value);
      if (item.kind === "snapshot") {
        this.lastSequence = item.sequence;
        this.listener.snapshot(item.snapshot);
        this.markSynchronized();
      } else if (item.kind === "delta") {
        if (item.sequence <= this.lastSequence) continue; // overlap between replay and live tail
        this.lastSequence = item.sequence;
        this.listener.delta(item.delta);
      } else if (item.kind === "synchronized") {
        this.markSynchronized();
      }
    }
    return undefined;
  }

  end(error?: T3Error): void {
    if (this.ended) return;
    this.ended = true;
    this.listener.end(error);
  }

  private markSynchronized(): void {
    if (this.synced) return;
    this.synced = true;
    this.listener.synchronized(this.lastSequence);
  }
}

/** An open, authenticated socket to one environment. */
export class T3Connection {
  constructor(readonly socket: RpcSocket) {}

  onClose(listener: (error: T3Error) => void): () => void {
    return this.socket.onClose(listener);
  }

  close(): void {
    this.socket.close();
  }

  getConfig(timeoutMs?: number): Promise<ServerConfigSummary> {
    return this.socket.call("server.getConfig", {}, timeoutMs).then((value) => {
      const decoded = decodeWith(ServerConfigSummary, value, "server config");
      if (!decoded.ok) throw T3Error.decode(decoded.error);
      return decoded.value;
    });
  }

  /** orchestration.dispatchCommand; the same commandId is safe to resend (§6.1). */
  dispatch(command: ClientCommand, timeoutMs?: number): Promise<DispatchResult> {
    return this.socket.call("orchestration.dispatchCommand", command, timeoutMs).then((value) => {
      const decoded = decodeWith(DispatchResult, value, `${command.type} result`);
      if (!decoded.ok) throw T3Error.decode(decoded.error);
      return decoded.value;
    });
  }

  subscribeShell(listener: ShellListener, options: ResumeOptions = {}): Subscription {
    return this.subscribe(
      "orchestration.subscribeShell",
      { ...(options.afterSequence !== undefined && { afterSequence: options.afterSequence }), requestCompletionMarker: true },
      new OrderedStream<ShellStreamItem, ShellSnapshot, ShellDelta>(
        listener,
        ShellStreamItemSchema as z.ZodType<ShellStreamItem>,
        "shell stream item",
        (item) => {
          switch (item.kind) {
            case "snapshot":
              return { kind: "snapshot", snapshot: item.snapshot, sequence: item.snapshot.snapshotSequence };
            case "synchronized":
              return { kind: "synchronized" };
            case "unknown":
              return { kind: "ignore" };
            default:
              return { kind: "delta", delta: item, sequence: item.sequence };
          }
        },
        options.afterSequence,
      ),
    );
  }

  /** Events after `afterSequence` for every thread (fork only, §5.4), decoded. */
  async replayEvents(afterSequence: number): Promise<ThreadEventItem[]> {
    const value = await this.socket.call("orchestration.replayEvents", { fromSequenceExclusive: afterSequence }, REPLAY_TIMEOUT_MS);
    const decoded = decodeWith(z.array(OrchestrationEventSchema), value, "replayed events");
    if (!decoded.ok) throw T3Error.decode(decoded.error);
    return decoded.value;
  }

  subscribeThread(threadId: string, listener: ThreadListener, options: ResumeOptions = {}): Subscription {
    if (options.repairLiveTail) listener = this.repairThreadTail(threadId, listener);
    return this.subscribe(
      "orchestration.subscribeThread",
      {
        threadId,
        ...(options.afterSequence !== undefined && { afterSequence: options.afterSequence }),
        requestCompletionMarker: true,
      },
      new OrderedStream<ThreadStreamItem, ThreadDetailSnapshot, ThreadEventItem>(
        listener,
        ThreadStreamItemSchema as z.ZodType<ThreadStreamItem>,
        "thread stream item",
        (item) => {
          switch (item.kind) {
            case "snapshot":
              return { kind: "snapshot", snapshot: item.snapshot, sequence: item.snapshot.snapshotSequence };
            case "event":
              return { kind: "delta", delta: item.event, sequence: item.event.sequence };
            case "synchronized":
              return { kind: "synchronized" };
            default:
              return { kind: "ignore" };
          }
        },
        options.afterSequence,
      ),
    );
  }

  /** Holds live events while the gap between snapshot and live tail is fetched, then merges by sequence. */
  private repairThreadTail(threadId: string, listener: ThreadListener): ThreadListener {
    let buffer: ThreadEventItem[] | undefined;
    let synchronizedAt: number | undefined;
    let ended = false;
    return {
      snapshot: (snapshot) => {
        listener.snapshot(snapshot);
        const held: ThreadEventItem[] = [];
        buffer = held;
        this.replayEvents(snapshot.snapshotSequence).then(
          (events) => {
            if (ended || buffer !== held) return;
            const merged = new Map<number, ThreadEventItem>();
            for (const event of events) if (event.aggregateId === threadId && event.known) merged.set(event.sequence, event);
            for (const event of held) merged.set(event.sequence, event);
            buffer = undefined;
            for (const sequence of [...merged.keys()].sort((a, b) => a - b)) listener.delta(merged.get(sequence)!);
            listener.synchronized(Math.max(synchronizedAt ?? -1, ...merged.keys()));
          },
          (error: unknown) => {
            if (ended) return;
            ended = true;
            listener.end(error instanceof T3Error ? error : new T3Error("server", String(error)));
          },
        );
      },
      delta: (event) => (buffer ? buffer.push(event) : listener.delta(event)),
      synchronized: (lastSequence) => {
        if (buffer) synchronizedAt = lastSequence;
        else listener.synchronized(lastSequence);
      },
      end: (error) => {
        if (ended) return;
        ended = true;
        listener.end(error);
      },
    };
  }

  private subscribe<I, S, D>(tag: string, payload: unknown, stream: OrderedStream<I, S, D>): Subscription {
    const handle = this.socket.stream(tag, payload, {
      onValues: (values) => {
        const error = stream.values(values);
        if (error) {
          handle.interrupt();
          stream.end(error);
        }
      },
      onEnd: (error) => stream.end(error),
    });
    return {
      close: () => {
        handle.interrupt();
        stream.end();
      },
    };
  }
}
