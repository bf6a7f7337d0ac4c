// One simulated T3 server on 127.0.0.1: HTTP routes and the /ws endpoint of the chosen auth
// generation, over an Engine and scripted Agents. Faults (restart, kill, blackhole, revoke) included.
import { diffRpc } from "../changes";
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { WebSocket } from "ws";
import { ClientCommand } from "../../shared/t3/protocol1/commands";
import { buildPairingUrl } from "../../shared/t3/pairing";
import { Agents } from "./agents";
import { PROVIDERS } from "../providers";
import type { TurnScript } from "./turn-scripts";
import { type BearerSession, SimAuth } from "../auth";
import { type RefuseUpgrade, SimHost, bearerOf, streamRequestOf, readBody, sendEmpty, sendJson } from "../host";
import { CommandInvariantError, Engine, RESUME_REPLAY_LIMIT, THREAD_STREAM_EVENT_TYPES } from "./engine";
import { type Generation, type ThreadState, type WireEvent, quirksOf } from "./model";
import { type RpcHandlers, RpcPeer, type StreamSink } from "../rpc-peer";

/** Upstream coalesces shell updates per thread over 50 ms windows. */
export const SHELL_COALESCE_MS = 50;

export interface SimServerOptions {
  generation: Generation;
  label?: string;
  environmentId?: string;
  port?: number;
  serverVersion?: string;
  tickMs?: number;
  tokenStreaming?: boolean;
  /**
   * Close a session's open sockets when it is revoked (default false). Real T3 0.0.42 does not: a
   * revoked session's open socket keeps working until it drops, only new HTTP calls and tickets
   * are refused (integration/realt3). Pass true for a server that cuts them off.
   */
  closeSocketsOnRevoke?: boolean;
  /**
   * T3 binds its port a few seconds before it serves: connections accepted in that window are
   * never answered, even once it is ready (real 0.0.42: about 3 s before "Listening on"). Each
   * start and restart opens such a window of this length; 0 (default) serves at once.
   */
  deafAfterListenMs?: number;
  /** Advertise an orchestration protocol other than 1 (a V2 server). */
  orchestrationProtocolVersion?: number;
}

function zodDefect(issues: readonly { message: string; path: readonly PropertyKey[]; code: string }[]): string {
  const issue = issues[0];
  if (!issue) return "Invalid payload";
  const path = `[${issue.path.map((key) => JSON.stringify(key)).join("][")}]`;
  const head = issue.code === "invalid_type" && /received undefined/.test(issue.message) ? "Missing key" : issue.message;
  return `${head}\n  at ${path}`;
}

export class SimServer extends SimHost {
  readonly engine: Engine;
  readonly agents: Agents;
  readonly auth: SimAuth;
  readonly environmentId: string;
  readonly label: string;
  readonly generation: Generation;
  /** Open shell streams, for hostile-server tests that push items as they are. */
  private readonly shellSinks = new Set<StreamSink>();
  /**
   * Fault injection for the next dispatch over a socket: drop the connection before or after
   * applying it, or apply it and never answer (the connection stays up).
   */
  dropNextDispatch: "before-apply" | "after-apply" | "unanswered" | undefined;
  /** Fault injection: live thread-stream events are silently not sent (snapshots and replays still are). */
  muteThreadStreams = false;
  /** Fault injection (`holdShellStreams`): live shell items held back, in order, until released. */
  private heldShellItems: { sink: StreamSink; item: unknown }[] | undefined;
  private readonly options: SimServerOptions;
  /** Every bearer token this server was sent (impostor tests: a token must never reach a server that did not issue it). */
  readonly bearersSeen = new Set<string>();

  constructor(options: SimServerOptions) {
    super(options.port ?? 0);
    this.options = options;
    this.generation = options.generation;
    this.environmentId = options.environmentId ?? randomUUID();
    this.label = options.label ?? `sim-${this.environmentId.slice(0, 6)}`;
    this.engine = new Engine(options.generation, quirksOf(options.generation, this.serverVersion));
    this.agents = new Agents(this.engine, { tickMs: options.tickMs ?? 20, tokenStreaming: options.tokenStreaming ?? false });
    this.auth = new SimAuth(() => Date.now() + this.engine.clockOffsetMs);
    this.auth.onRevoke = (session) => {
      if (options.closeSocketsOnRevoke === true) this.closeSocketsOf(session);
    };
  }

  /**
   * Holds every live shell item back (a shell that lags its thread streams, as T3's coalescing
   * shell does by up to a few hundred ms) until the returned function releases them, in order.
   */
  holdShellStreams(): () => void {
    const held: { sink: StreamSink; item: unknown }[] = [];
    this.heldShellItems = held;
    return () => {
      if (this.heldShellItems === held) this.heldShellItems = undefined;
      for (const { sink, item } of held) if (this.shellSinks.has(sink)) sink.push(item);
    };
  }

  private pushLiveShellItem(sink: StreamSink, item: unknown): void {
    if (this.heldShellItems) this.heldShellItems.push({ sink, item });
    else sink.push(item);
  }

  /** Hostile-server tests: pushes these shell-stream items as they are (undecodable, out of order) to every open shell stream. */
  injectShellItems(...items: unknown[]): void {
    for (const sink of this.shellSinks) sink.push(...items);
  }

  /** Hostile-server tests: writes one raw text frame to every connected socket. */
  sendRawFrame(text: string): void {
    for (const peer of this.peers) peer.ws.send(text);
  }

  get serverVersion(): string {
    return this.options.serverVersion ?? (this.generation === "fork" ? "0.0.24" : "0.0.33");
  }

  /** Starts listening; `deafForMs` overrides deafAfterListenMs for this start (a restart that is slow to serve). */
  override start(deafForMs = this.options.deafAfterListenMs ?? 0): Promise<this> {
    return super.start(deafForMs);
  }

  protected halt(): void {
    this.agents.haltAll();
  }

  protected resume(): void {
    this.agents.resume();
  }

  /** Upstream ends orphaned turns. */
  protected afterRestart(): void {
    this.agents.reconcileAfterRestart();
  }

  pairingUrl(options?: Parameters<SimAuth["issuePairingToken"]>[0]): string {
    return buildPairingUrl(this.baseUrl, this.auth.issuePairingToken(options).token);
  }

  scriptNextTurn(threadId: string, script: TurnScript): void {
    this.agents.scriptNextTurn(threadId, script);
  }

  descriptor(): Record<string, unknown> {
    const capabilities: Record<string, boolean> =
      this.generation === "upstream"
        ? {
            repositoryIdentity: true,
            connectionProbe: true,
            pullRequests: true,
            threadSettlement: true,
            threadSnooze: true,
            threadPinning: true,
            threadPinReorder: true,
            threadTitleRegeneration: true,
            agentActivityPublishing: false,
          }
        : { repositoryIdentity: true };
    return {
      environmentId: this.environmentId,
      label: this.label,
      platform: { os: "linux", arch: "x64" },
      serverVersion: this.serverVersion,
      capabilities,
      ...(this.options.orchestrationProtocolVersion !== undefined && { orchestrationProtocolVersion: this.options.orchestrationProtocolVersion }),
    };
  }

  private authDescriptor(): Record<string, unknown> {
    return this.generation === "upstream"
      ? {
          policy: "loopback-browser",
          bootstrapMethods: ["one-time-token"],
          sessionMethods: ["browser-session-cookie", "bearer-access-token", "dpop-access-token"],
          sessionCookieName: `t3_session_${this.port}_${this.environmentId.replace(/-/g, "").slice(0, 12)}`,
        }
      : {
          policy: "loopback-browser",
          bootstrapMethods: ["one-time-token"],
          sessionMethods: ["browser-session-cookie", "bearer-session-token"],
          sessionCookieName: "t3_session",
        };
  }

  // ------------------------------------------------------------------ HTTP

  private error(res: ServerResponse, status: number, tagged: Record<string, unknown>, forkMessage: string): void {
    if (this.generation === "fork") sendJson(res, status, { error: forkMessage });
    else sendJson(res, status, { ...tagged, traceId: randomUUID().replace(/-/g, "") });
  }

  private unauthorized(res: ServerResponse, missing: boolean): void {
    this.error(
      res,
      401,
      { _tag: "EnvironmentAuthInvalidError", code: "auth_invalid", reason: missing ? "missing_credential" : "invalid_credential" },
      missing ? "Authentication required." : "Unauthorized request.",
    );
  }

  protected async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const offered = bearerOf(req);
    if (offered) this.bearersSeen.add(offered);
    const path = url.pathname;
    const method = req.method ?? "GET";
    if (method === "OPTIONS") {
      res.writeHead(204, {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "GET, POST, OPTIONS",
        "access-control-allow-headers": "authorization, b3, traceparent, content-type, dpop",
        "access-control-max-age": "600",
      });
      res.end();
      return;
    }
    if (method === "GET" && path === "/.well-known/t3/environment") return sendJson(res, 200, this.descriptor());
    if (method === "GET" && path === "/api/auth/session") return this.authSession(req, res);
    if (method === "POST" && path === "/oauth/token" && this.generation === "upstream")
      return this.exchangeToken(req, res, (response) => this.unauthorized(response, false));
    if (method === "POST" && path === "/api/auth/bootstrap/bearer" && this.generation === "fork") return this.bootstrapBearer(req, res);
    if (method === "POST" && path === "/api/auth/websocket-ticket" && this.generation === "upstream") return this.socketTicket(req, res);
    if (method === "POST" && path === "/api/auth/ws-token" && this.generation === "fork") return this.socketTicket(req, res);
    if (path.startsWith("/api/orchestration/")) {
      const handled = await this.orchestrationRoute(req, res, method, path);
      if (handled) return;
    }
    // Fallbacks differ: the fork serves its web app for any GET; 0.0.33 without a bundle answers 503.
    if (method === "GET") {
      if (this.generation === "fork") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end("<!doctype html><html><head><title>T3 Code</title></head><body><div id=root></div></body></html>");
      } else {
        res.writeHead(503, { "content-type": "text/plain" });
        res.end("Service Unavailable");
      }
      return;
    }
    sendEmpty(res, 404);
  }

  private authSession(req: IncomingMessage, res: ServerResponse): void {
    const { session } = this.bearerSession(req);
    if (!session) return sendJson(res, 200, { authenticated: false, auth: this.authDescriptor() });
    const expiresAt = new Date(session.expiresAt).toISOString();
    if (this.generation === "upstream") {
      return sendJson(res, 200, {
        authenticated: true,
        auth: this.authDescriptor(),
        scopes: session.scopes,
        sessionMethod: "bearer-access-token",
        expiresAt,
      });
    }
    sendJson(res, 200, { authenticated: true, auth: this.authDescriptor(), role: session.role, sessionMethod: "bearer-session-token", expiresAt });
  }

  private async bootstrapBearer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let credential: unknown;
    try {
      credential = (JSON.parse(await readBody(req)) as { credential?: unknown }).credential;
    } catch {
      credential = undefined;
    }
    if (typeof credential !== "string") return sendJson(res, 400, { error: "Invalid bootstrap payload." });
    const result = this.auth.exchange(credential, undefined, req.headers["user-agent"] ?? "bearer client"); // 0.0.24 records the User-Agent, not a label
    if (!result.ok) return sendJson(res, 401, { error: "Invalid bootstrap credential." });
    sendJson(res, 200, {
      authenticated: true,
      role: result.session.role,
      sessionMethod: "bearer-session-token",
      expiresAt: new Date(result.session.expiresAt).toISOString(),
      sessionToken: result.session.token,
    });
  }

  private socketTicket(req: IncomingMessage, res: ServerResponse): void {
    const { session, missing } = this.bearerSession(req);
    if (!session) return this.unauthorized(res, missing);
    const ticket = this.auth.issueTicket(session);
    const expiresAt = new Date(ticket.expiresAt).toISOString();
    if (this.generation === "upstream") sendJson(res, 200, { ticket: ticket.ticket, expiresAt });
    else sendJson(res, 200, { token: ticket.ticket, expiresAt });
  }

  /** Returns false when the path is not an orchestration route of this generation (fallback handling). */
  private async orchestrationRoute(req: IncomingMessage, res: ServerResponse, method: string, path: string): Promise<boolean> {
    const upstreamOnly = path === "/api/orchestration/shell" || path.startsWith("/api/orchestration/threads/");
    const known = path === "/api/orchestration/snapshot" || path === "/api/orchestration/dispatch" || upstreamOnly;
    if (!known || (upstreamOnly && this.generation === "fork")) return false;
    const wantsPost = path === "/api/orchestration/dispatch";
    if ((method === "POST") !== wantsPost) return false;
    const { session, missing } = this.bearerSession(req);
    if (!session) {
      // Fork: the AuthError escapes these routes' handlers and becomes an empty 500.
      if (this.generation === "fork") sendEmpty(res, 500);
      else this.unauthorized(res, missing);
      return true;
    }
    if (this.generation === "fork" && session.role !== "owner") {
      sendJson(res, 400, { error: "Only owner sessions can manage projects." });
      return true;
    }
    const required = wantsPost ? "orchestration:operate" : "orchestration:read";
    if (this.generation === "upstream" && !session.scopes.includes(required)) {
      sendJson(res, 403, {
        _tag: "EnvironmentScopeRequiredError",
        code: "insufficient_scope",
        requiredScope: required,
        traceId: randomUUID().replace(/-/g, ""),
      });
      return true;
    }
    if (path === "/api/orchestration/snapshot") sendJson(res, 200, this.engine.readModelSnapshot());
    else if (path === "/api/orchestration/shell") sendJson(res, 200, this.engine.shellSnapshot());
    else if (path.startsWith("/api/orchestration/threads/")) {
      const threadId = decodeURIComponent(path.slice("/api/orchestration/threads/".length));
      const thread = this.engine.threads.get(threadId);
      if (!thread || !this.readable(thread)) {
        sendJson(res, 404, {
          _tag: "EnvironmentResourceNotFoundError",
          code: "not_found",
          reason: "thread_not_found",
          traceId: randomUUID().replace(/-/g, ""),
        });
      } else {
        sendJson(res, 200, { snapshotSequence: this.engine.sequence, thread: this.engine.threadDetail(thread) });
      }
    } else await this.httpDispatch(req, res);
    return true;
  }

  private async httpDispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      body = undefined;
    }
    const command = ClientCommand.safeParse(body);
    if (!command.success) {
      if (this.generation === "fork") sendJson(res, 400, { error: "Invalid orchestration command payload." });
      else sendEmpty(res, 400);
      return;
    }
    try {
      sendJson(res, 200, { sequence: this.engine.dispatch(command.data) });
    } catch {
      // Over HTTP the detail stays in the server log (fork: a generic 400).
      if (this.generation === "fork") sendJson(res, 400, { error: "Failed to dispatch orchestration command." });
      else {
        sendJson(res, 500, {
          _tag: "EnvironmentInternalError",
          code: "internal_error",
          reason: "orchestration_dispatch_failed",
          traceId: randomUUID().replace(/-/g, ""),
        });
      }
    }
  }

  // ------------------------------------------------------------------ WebSocket

  protected upgradeSession(req: IncomingMessage, url: URL, refuse: RefuseUpgrade): BearerSession | undefined {
    const { session, missing } = this.socketSession(req, url, this.generation === "upstream" ? "wsTicket" : "wsToken");
    if (session) return session;
    refuse(
      "401 Unauthorized",
      this.generation === "fork"
        ? { error: missing ? "Authentication required." : "Unauthorized request." }
        : { _tag: "EnvironmentAuthInvalidError", code: "auth_invalid", reason: missing ? "missing_credential" : "invalid_credential" },
    );
    return undefined;
  }

  protected rpcPeer(ws: WebSocket, session: BearerSession): RpcPeer {
    return new RpcPeer(ws, this.generation, this.rpcHandlers(session, ws));
  }

  private rpcHandlers(session: BearerSession, ws: WebSocket): RpcHandlers {
    const scopeError = (scope: string) =>
      this.generation === "upstream" && !session.scopes.includes(scope)
        ? {
            _tag: "EnvironmentAuthorizationError",
            message: `The authenticated token is missing required scope: ${scope}.`,
            requiredScope: scope,
          }
        : undefined;
    return {
      unary: (tag, payload) => {
        if (tag === "orchestration.dispatchCommand") {
          const denied = scopeError("orchestration:operate");
          if (denied) return { ok: false, cause: [{ _tag: "Fail", error: denied }] };
          const command = ClientCommand.safeParse(payload);
          if (!command.success) return { ok: false, cause: [{ _tag: "Die", defect: zodDefect(command.error.issues) }] };
          const drop = this.dropNextDispatch;
          this.dropNextDispatch = undefined;
          if (drop === "before-apply") {
            ws.terminate();
            return { ok: true, value: null };
          }
          try {
            const sequence = this.engine.dispatch(command.data);
            if (drop === "after-apply") ws.terminate(); // applied, but the answer never leaves
            if (drop === "unanswered") return { noReply: true };
            return { ok: true, value: { sequence } };
          } catch (error) {
            const message = error instanceof Error ? error.message : String(error);
            const cause = error instanceof CommandInvariantError ? { name: "OrchestrationCommandInvariantError", message } : undefined;
            return {
              ok: false,
              cause: [{ _tag: "Fail", error: { _tag: "OrchestrationDispatchCommandError", message, ...(cause && { cause }) } }],
            };
          }
        }
        if (tag === "server.getConfig") {
          const denied = scopeError("orchestration:read");
          if (denied) return { ok: false, cause: [{ _tag: "Fail", error: denied }] };
          return { ok: true, value: this.serverConfig() };
        }
        const diff = diffRpc(tag, payload, (threadId) => {
          const thread = this.engine.threads.get(threadId);
          return thread && { diffs: thread.diffs ?? new Map(), turnCount: thread.checkpoints?.at(-1)?.checkpointTurnCount ?? 0 };
        });
        if (diff) return diff;
        if (tag === "orchestration.replayEvents" && this.generation === "fork") {
          const from = Number((payload as { fromSequenceExclusive?: unknown })?.fromSequenceExclusive ?? 0);
          return { ok: true, value: this.engine.eventsAfter(from) };
        }
        return undefined;
      },
      stream: (tag, payload, sink) => {
        if (tag !== "orchestration.subscribeShell" && tag !== "orchestration.subscribeThread") return undefined;
        const denied = scopeError("orchestration:read");
        if (denied) {
          sink.fail(denied);
          return () => {};
        }
        const { threadId, options } = streamRequestOf(payload);
        if (tag === "orchestration.subscribeShell") return this.shellStream(sink, options);
        if (typeof threadId !== "string") {
          sink.fail({ _tag: "OrchestrationGetSnapshotError", message: "Missing threadId" });
          return () => {};
        }
        return this.threadStream(threadId, sink, options);
      },
    };
  }

  private serverConfig(): Record<string, unknown> {
    const config: Record<string, unknown> = {
      environment: this.descriptor(),
      auth: this.authDescriptor(),
      cwd: "/home/user/work",
      keybindingsConfigPath: "/home/user/.t3/userdata/keybindings.json",
      keybindings: [],
      issues: [],
      // Each harness with the model its scripted agent answers as; Grok's CLI is missing, as T3 reports a missing one.
      providers: Object.entries(PROVIDERS).map(([id, provider]) => ({
        instanceId: id,
        driver: id,
        displayName: provider.label,
        enabled: true,
        installed: id !== "grok",
        status: id === "grok" ? "error" : "ready",
        ...(id === "grok" && { message: "Grok CLI (`grok`) is not installed or not on PATH." }),
        models: [{ slug: provider.model, name: provider.model, isCustom: false, capabilities: {} }],
      })),
      availableEditors: [],
      observability: { logsDirectoryPath: "/home/user/.t3/userdata/logs", localTracingEnabled: false },
      settings: { enableLegacyTokenStreaming: this.agents.options.tokenStreaming },
    };
    if (this.generation === "upstream") {
      Object.assign(config, { shellResumeCompletionMarker: true, threadResumeCompletionMarker: true, threadSnapshotPagination: true });
    }
    return config;
  }

  /** Whether an upstream resume from `afterSequence` can be served from the event log. */
  private canReplay(afterSequence: number | undefined): afterSequence is number {
    return (
      this.generation === "upstream" &&
      afterSequence !== undefined &&
      afterSequence >= this.engine.replayableFrom - 1 &&
      afterSequence <= this.engine.sequence &&
      this.engine.sequence - afterSequence <= RESUME_REPLAY_LIMIT
    );
  }

  /**
   * Fork servers attach the live tail only after the snapshot was acknowledged, so events in between
   * are lost. Upstream attaches at once.
   */
  private liveGate(sink: StreamSink): () => boolean {
    if (this.generation === "upstream") return () => true;
    return () => sink.acknowledged;
  }

  private shellItemFor(event: WireEvent, sequence = event.sequence): unknown | undefined {
    if (event.aggregateKind === "project") {
      const project = this.engine.projects.get(event.aggregateId);
      return project ? { kind: "project-upserted", sequence, project: this.engine.projectRow(project) } : undefined;
    }
    const thread = this.engine.threads.get(event.aggregateId);
    if (!thread) return undefined;
    if (!this.engine.isShellVisible(thread)) return { kind: "thread-removed", sequence, threadId: thread.id };
    return { kind: "thread-upserted", sequence, thread: this.engine.shellRow(thread) };
  }

  private shellStream(sink: StreamSink, options: { afterSequence: number | undefined; marker: boolean }): () => void {
    this.shellSinks.add(sink);
    const live = this.liveGate(sink);
    if (this.canReplay(options.afterSequence)) {
      // The replay is coalesced too: one item per aggregate, at its latest sequence.
      const latest = new Map<string, WireEvent>();
      for (const event of this.engine.eventsAfter(options.afterSequence)) {
        latest.delete(event.aggregateId);
        latest.set(event.aggregateId, event);
      }
      for (const event of latest.values()) {
        const item = this.shellItemFor(event);
        if (item) sink.push(item);
      }
    } else {
      sink.push({ kind: "snapshot", snapshot: this.engine.shellSnapshot() });
    }
    if (options.marker && this.generation === "upstream") sink.push({ kind: "synchronized" });

    const pending = new Map<string, WireEvent>();
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      timer = undefined;
      const events = [...pending.values()].sort((a, b) => a.sequence - b.sequence);
      pending.clear();
      for (const event of events) {
        const item = this.shellItemFor(event);
        if (item) this.pushLiveShellItem(sink, item);
      }
    };
    const onEvent = (event: WireEvent) => {
      if (!live()) return;
      if (this.generation === "fork") {
        const item = this.shellItemFor(event);
        if (item) this.pushLiveShellItem(sink, item);
        return;
      }
      pending.delete(event.aggregateId);
      pending.set(event.aggregateId, event);
      timer ??= setTimeout(flush, SHELL_COALESCE_MS);
    };
    this.engine.on("event", onEvent);
    return () => {
      this.shellSinks.delete(sink);
      this.engine.off("event", onEvent);
      clearTimeout(timer);
    };
  }

  /** Whether the thread route and stream serve this thread (deleted never; archived not on 0.0.42). */
  private readable(thread: ThreadState): boolean {
    return !thread.deletedAt && !(thread.archivedAt && this.engine.quirks.archivedThreadsUnreadable);
  }

  private threadStream(threadId: string, sink: StreamSink, options: { afterSequence: number | undefined; marker: boolean }): () => void {
    const thread = this.engine.threads.get(threadId);
    if (!thread || !this.readable(thread)) {
      sink.fail({ _tag: "OrchestrationGetSnapshotError", message: `Thread ${threadId} was not found` });
      return () => {};
    }
    const live = this.liveGate(sink);
    const forwarded = (event: WireEvent) => event.aggregateId === threadId && THREAD_STREAM_EVENT_TYPES.has(event.type);
    if (this.canReplay(options.afterSequence)) {
      for (const event of this.engine.eventsAfter(options.afterSequence)) {
        if (forwarded(event)) sink.push({ kind: "event", event });
      }
    } else {
      sink.push({ kind: "snapshot", snapshot: { snapshotSequence: this.engine.sequence, thread: this.engine.threadDetail(thread) } });
    }
    if (options.marker && this.generation === "upstream") sink.push({ kind: "synchronized" });
    const onEvent = (event: WireEvent) => {
      if (live() && forwarded(event) && !this.muteThreadStreams) sink.push({ kind: "event", event });
    };
    this.engine.on("event", onEvent);
    return () => this.engine.off("event", onEvent);
  }
}
