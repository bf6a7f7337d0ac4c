// One simulated protocol-2 T3 server on 127.0.0.1 (docs/t3-protocols.md, "Protocol 2"): upstream
// scoped auth (sim/auth.ts), the 426 gate on `/ws` before auth, the protocol header on HTTP reads
// (400 without it), the V2 shell and thread streams with the real engine's resume and metadata
// snapshots and a slow-consumer cutoff, the V2 commands, `projects.mutate` and `server.getConfig`.
// It can take over a protocol-1 simulator's port, identity and threads: an in-place upgrade.
import { diffRpc } from "../changes";
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { WebSocket } from "ws";
import { buildPairingUrl } from "../../shared/t3/pairing";
import { ClientCommandV2 } from "../../shared/t3/protocol2/commands";
import { ORCHESTRATION_PROTOCOL_HEADER, ORCHESTRATION_PROTOCOL_QUERY } from "../../shared/t3/protocol2/schemas";
import { type BearerSession, SimAuth } from "../auth";
import { type RefuseUpgrade, SimHost, sendEmpty, streamRequestOf, sendJson } from "../host";
import { type RpcHandlers, RpcPeer, type StreamSink } from "../rpc-peer";
import { ProjectCreate, serverConfig } from "./config";
import { LineageCommand } from "./lineage-commands";
import {
  type AgentStep,
  DispatchError,
  SHELL_REPLAY_MAX_EVENTS,
  type StoredEvent,
  THREAD_REPLAY_MAX_BYTES,
  THREAD_REPLAY_MAX_EVENTS,
  type ThreadState,
  V2Engine,
  type V2Settings,
} from "./engine";

/** Upstream coalesces shell updates per thread over 50 ms windows. */
export const SHELL_COALESCE_MS = 50;
/** A consumer that lets this many items (or bytes) pile up unacknowledged is cut off with a defect. */
export const SLOW_CONSUMER_MAX_ITEMS = 1000;
export const SLOW_CONSUMER_MAX_BYTES = 8 * 1024 * 1024;
/** A bounded snapshot keeps this many of the latest turn items (every non-terminal run stays). */
export const BOUNDED_SNAPSHOT_ITEMS = 75;

export interface V2SimServerOptions {
  label?: string;
  environmentId?: string;
  port?: number;
  serverVersion?: string;
  tickMs?: number;
  /** Shared with a protocol-1 simulator on an in-place upgrade: its sessions stay valid. */
  auth?: SimAuth;
  firstSequence?: number;
  /** Server settings, as `<base-dir>/userdata/settings.json` would hold them. */
  settings?: Partial<V2Settings>;
  /** Provider turns carry token figures, as builds since upstream #8144 do (the recorded engine predates them). */
  reportsTokenUsage?: boolean;
  /**
   * Close a session's open sockets when it is revoked (default false). T3's V2 engine did not: a
   * revoked session's socket kept working, and only its periodic token re-check told the fleet
   * (the withdrawn integration/realt3/fleet.v2.real.test.ts, commit 5f8c64f).
   */
  closeSocketsOnRevoke?: boolean;
}

const traceId = () => randomUUID().replace(/-/g, "");

export class V2SimServer extends SimHost {
  readonly generation = "v2" as const;
  readonly engine: V2Engine;
  readonly auth: SimAuth;
  readonly environmentId: string;
  readonly label: string;
  /**
   * Fault injection for the next `orchestration.dispatchCommand` or `projects.mutate` over a socket,
   * as on protocol 1 (sim/protocol1/server.ts): drop the connection before or after applying it, or
   * apply it and never answer (the connection stays up).
   */
  dropNextDispatch: "before-apply" | "after-apply" | "unanswered" | undefined;

  constructor(private readonly options: V2SimServerOptions = {}) {
    super(options.port ?? 0);
    this.environmentId = options.environmentId ?? randomUUID();
    this.label = options.label ?? `sim-${this.environmentId.slice(0, 6)}`;
    this.engine = new V2Engine({
      tickMs: options.tickMs ?? 20,
      ...(options.firstSequence !== undefined && { firstSequence: options.firstSequence }),
      ...(options.settings && { settings: options.settings }),
      ...(options.reportsTokenUsage && { reportsTokenUsage: true }),
    });
    this.auth = options.auth ?? new SimAuth(() => Date.now() + this.engine.clockOffsetMs);
    this.auth.onRevoke = (session) => {
      if (options.closeSocketsOnRevoke === true) this.closeSocketsOf(session);
    };
  }

  get serverVersion(): string {
    return this.options.serverVersion ?? "0.0.46-nightly.20261003";
  }

  protected halt(): void {
    this.engine.halt();
  }

  protected resume(): void {
    this.engine.resume();
  }

  /** The runs it was driving end interrupted. */
  protected afterRestart(): void {
    this.engine.reconcileAfterRestart();
  }

  /** Fault injection: the server gives up on every open stream (Exit → Die), as its buffer cutoff does. */
  endStreams(defect = "Stream consumer is too slow: buffer limit exceeded"): number {
    let ended = 0;
    for (const peer of this.peers) {
      for (const stream of [...peer.rpc.streams.values()]) {
        stream.die(defect);
        ended++;
      }
    }
    return ended;
  }

  pairingUrl(options?: Parameters<SimAuth["issuePairingToken"]>[0]): string {
    return buildPairingUrl(this.baseUrl, this.auth.issuePairingToken(options).token);
  }

  scriptNextRun(threadId: string, steps: AgentStep[]): void {
    this.engine.scriptNextRun(threadId, steps);
  }

  descriptor(): Record<string, unknown> {
    return {
      environmentId: this.environmentId,
      label: this.label,
      platform: { os: "linux", arch: "x64" },
      serverVersion: this.serverVersion,
      capabilities: {
        repositoryIdentity: true,
        connectionProbe: true,
        pullRequests: true,
        threadSettlement: true,
        threadSnooze: true,
        threadPinning: true,
        threadPinReorder: true,
        threadTitleRegeneration: true,
        threadVisitedTracking: true,
        agentActivityPublishing: false,
      },
      orchestrationProtocolVersion: 2,
    };
  }

  private authDescriptor(): Record<string, unknown> {
    return {
      policy: "loopback-browser",
      bootstrapMethods: ["one-time-token"],
      sessionMethods: ["browser-session-cookie", "bearer-access-token", "dpop-access-token"],
      sessionCookieName: `t3_session_${this.port}_${this.environmentId.replace(/-/g, "").slice(0, 12)}`,
    };
  }

  // ------------------------------------------------------------------ HTTP

  private incompatible(): Record<string, unknown> {
    return {
      code: "orchestration_protocol_incompatible",
      message: "Update this client to one that supports orchestration protocol 2.",
      orchestrationProtocolVersion: 2,
    };
  }

  private unauthorized(res: ServerResponse, missing: boolean): void {
    sendJson(res, 401, {
      _tag: "EnvironmentAuthInvalidError",
      code: "auth_invalid",
      reason: missing ? "missing_credential" : "invalid_credential",
      traceId: traceId(),
    });
  }

  protected async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname;
    const method = req.method ?? "GET";
    if (method === "GET" && path === "/.well-known/t3/environment") return sendJson(res, 200, this.descriptor());
    if (method === "GET" && path === "/api/auth/session") {
      const { session } = this.bearerSession(req);
      if (!session) return sendJson(res, 200, { authenticated: false, auth: this.authDescriptor() });
      return sendJson(res, 200, {
        authenticated: true,
        auth: this.authDescriptor(),
        scopes: session.scopes,
        sessionMethod: "bearer-access-token",
        expiresAt: new Date(session.expiresAt).toISOString(),
      });
    }
    if (method === "POST" && path === "/oauth/token") return this.exchangeToken(req, res, (response) => this.unauthorized(response, false));
    if (method === "POST" && path === "/api/auth/websocket-ticket") {
      const { session, missing } = this.bearerSession(req);
      if (!session) return this.unauthorized(res, missing);
      const ticket = this.auth.issueTicket(session);
      return sendJson(res, 200, { ticket: ticket.ticket, expiresAt: new Date(ticket.expiresAt).toISOString() });
    }
    if (method === "GET" && path.startsWith("/api/orchestration/")) return this.orchestrationRead(req, res, path);
    if (method === "GET" && path === "/api/projects") return this.projectsRead(req, res);
    // A plain GET of the socket path (no upgrade) meets the same protocol gate, before auth.
    if (method === "GET" && path === "/ws") {
      if (url.searchParams.get(ORCHESTRATION_PROTOCOL_QUERY) !== "2") return sendJson(res, 426, this.incompatible());
      const { session, missing } = this.bearerSession(req);
      if (!session) return this.unauthorized(res, missing);
      res.writeHead(426, { "content-type": "text/plain" });
      res.end("Upgrade Required");
      return;
    }
    res.writeHead(method === "GET" ? 503 : 404, { "content-type": "text/plain" });
    res.end(method === "GET" ? "Service Unavailable" : "");
  }

  /**
   * Shell and thread reads: auth first, then the protocol header. An authenticated read without the
   * header (or with another version) gets 400 with an empty body, as the real server answers.
   */
  private orchestrationRead(req: IncomingMessage, res: ServerResponse, path: string): void {
    const { session, missing } = this.bearerSession(req);
    if (!session) return this.unauthorized(res, missing);
    if (req.headers[ORCHESTRATION_PROTOCOL_HEADER] !== "2") return sendEmpty(res, 400);
    if (!session.scopes.includes("orchestration:read")) {
      return sendJson(res, 403, { _tag: "EnvironmentScopeRequiredError", code: "insufficient_scope", requiredScope: "orchestration:read", traceId: traceId() });
    }
    if (path === "/api/orchestration/shell") return sendJson(res, 200, this.engine.shellSnapshot());
    const match = /^\/api\/orchestration\/threads\/([^/]+)(\/bounded)?$/.exec(path);
    const state = match ? this.engine.threads.get(decodeURIComponent(match[1]!)) : undefined;
    if (!match || !state) {
      return sendJson(res, 404, { _tag: "EnvironmentResourceNotFoundError", code: "not_found", reason: "thread_not_found", traceId: traceId() });
    }
    if (match[2]) {
      const latestLocalTurnOrdinal = state.items.length ? state.items.length - 1 : null;
      return sendJson(res, 200, {
        snapshotSequence: this.engine.sequence,
        projection: this.engine.projection(state, { maxItems: BOUNDED_SNAPSHOT_ITEMS }),
        historyCursor: state.items.length > BOUNDED_SNAPSHOT_ITEMS ? `cursor-${state.items.length - BOUNDED_SNAPSHOT_ITEMS}` : null,
        hasMoreHistory: state.items.length > BOUNDED_SNAPSHOT_ITEMS,
        latestLocalTurnOrdinal,
      });
    }
    sendJson(res, 200, { snapshotSequence: this.engine.sequence, projection: this.engine.projection(state) });
  }

  private projectsRead(req: IncomingMessage, res: ServerResponse): void {
    const { session, missing } = this.bearerSession(req);
    if (!session) return this.unauthorized(res, missing);
    const projects = [...this.engine.projects.values()];
    const updatedAt =
      projects
        .map((project) => project.updatedAt)
        .sort()
        .at(-1) ?? this.engine.now();
    sendJson(res, 200, { projects: projects.map((project) => this.engine.projectRecord(project)), updatedAt });
  }

  // ------------------------------------------------------------------ WebSocket

  protected upgradeSession(req: IncomingMessage, url: URL, refuse: RefuseUpgrade): BearerSession | undefined {
    // The protocol gate comes before auth: a protocol-1 client's ticket stays unused.
    if (url.searchParams.get(ORCHESTRATION_PROTOCOL_QUERY) !== "2") return void refuse("426 Upgrade Required", this.incompatible());
    const { session, missing } = this.socketSession(req, url, "wsTicket");
    if (!session)
      return void refuse("401 Unauthorized", {
        _tag: "EnvironmentAuthInvalidError",
        code: "auth_invalid",
        reason: missing ? "missing_credential" : "invalid_credential",
      });
    return session;
  }

  protected rpcPeer(ws: WebSocket, session: BearerSession): RpcPeer {
    return new RpcPeer(ws, "upstream", this.rpcHandlers(session, ws));
  }

  private rpcHandlers(session: BearerSession, ws: WebSocket): RpcHandlers {
    /** Applies a command under the fault asked for next (`dropNextDispatch`); undefined: answer as usual. */
    const faulted = (apply: () => unknown): { ok: true; value: unknown } | { noReply: true } | undefined => {
      const drop = this.dropNextDispatch;
      this.dropNextDispatch = undefined;
      if (drop === undefined) return undefined;
      if (drop === "before-apply") {
        ws.terminate();
        return { ok: true, value: null };
      }
      apply();
      if (drop === "after-apply") ws.terminate(); // applied, but the answer never leaves
      return drop === "unanswered" ? { noReply: true } : { ok: true, value: null };
    };
    const scopeError = (scope: string) =>
      session.scopes.includes(scope)
        ? undefined
        : { _tag: "EnvironmentAuthorizationError", message: `The authenticated token is missing required scope: ${scope}.`, requiredScope: scope };
    return {
      unary: (tag, payload) => {
        if (tag === "orchestration.dispatchCommand") {
          const denied = scopeError("orchestration:operate");
          if (denied) return { ok: false, cause: [{ _tag: "Fail", error: denied }] };
          // T3's UI and agents also send the lineage commands, which the fleet never does (lineage-commands.ts).
          const lineage = LineageCommand.safeParse(payload);
          const command = lineage.success ? lineage : ClientCommandV2.safeParse(payload);
          if (!command.success) {
            const issue = command.error.issues[0];
            return { ok: false, cause: [{ _tag: "Die", defect: `${issue?.message ?? "Invalid payload"}\n  at ${JSON.stringify(issue?.path ?? [])}` }] };
          }
          try {
            const dropped = faulted(() =>
              lineage.success ? this.engine.dispatchLineage(lineage.data) : this.engine.dispatch(command.data as ClientCommandV2),
            );
            if (dropped) return dropped;
            const sequence = lineage.success ? this.engine.dispatchLineage(lineage.data) : this.engine.dispatch(command.data as ClientCommandV2);
            return { ok: true, value: { sequence } };
          } catch (error) {
            if (!(error instanceof DispatchError)) throw error;
            return {
              ok: false,
              cause: [
                {
                  _tag: "Fail",
                  error: {
                    _tag: "OrchestrationV2DispatchCommandError",
                    commandId: error.commandId,
                    commandType: error.commandType,
                    message: error.message,
                    ...(error.detail && { detail: error.detail }),
                  },
                },
              ],
            };
          }
        }
        const denied = scopeError("orchestration:read");
        if (tag === "server.getConfig") {
          if (denied) return { ok: false, cause: [{ _tag: "Fail", error: denied }] };
          return { ok: true, value: serverConfig(this.descriptor(), this.authDescriptor(), this.engine.settings) };
        }
        if (tag === "server.updateSettings") {
          const patch = (payload as { patch?: { enableLegacyTokenStreaming?: unknown } } | null)?.patch;
          if (typeof patch?.enableLegacyTokenStreaming === "boolean") this.engine.settings.enableLegacyTokenStreaming = patch.enableLegacyTokenStreaming;
          return { ok: true, value: serverConfig(this.descriptor(), this.authDescriptor(), this.engine.settings).settings };
        }
        if (tag === "projects.mutate") {
          const operate = scopeError("orchestration:operate");
          if (operate) return { ok: false, cause: [{ _tag: "Fail", error: operate }] };
          const command = ProjectCreate.safeParse(payload);
          if (!command.success) return { ok: false, cause: [{ _tag: "Die", defect: `${command.error.issues[0]?.message ?? "Invalid payload"}` }] };
          const data = command.data;
          return faulted(() => this.engine.createProject(data)) ?? { ok: true, value: this.engine.createProject(data) };
        }
        if (tag === "orchestration.getThreadProjection") {
          if (denied) return { ok: false, cause: [{ _tag: "Fail", error: denied }] };
          const threadId = String((payload as { threadId?: unknown } | null)?.threadId ?? "");
          const state = this.engine.threads.get(threadId);
          if (!state)
            return {
              ok: false,
              cause: [
                {
                  _tag: "Fail",
                  error: { _tag: "OrchestrationV2GetThreadProjectionError", threadId: threadId || "?", message: `Thread '${threadId}' was not found.` },
                },
              ],
            };
          return { ok: true, value: this.engine.projection(state) };
        }
        const diff = diffRpc(tag, payload, (threadId) => {
          const state = this.engine.threads.get(threadId);
          return state && { diffs: state.diffs ?? new Map(), turnCount: state.checkpoints.at(-1)?.appRunOrdinal ?? 0 };
        });
        if (diff) return denied ? { ok: false, cause: [{ _tag: "Fail", error: denied }] } : diff;
        if (tag === "orchestration.getArchivedShellSnapshot") {
          if (denied) return { ok: false, cause: [{ _tag: "Fail", error: denied }] };
          return { ok: true, value: this.engine.archivedShellSnapshot() };
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
        const guarded = this.slowConsumerGuard(sink);
        if (tag === "orchestration.subscribeShell") return this.shellStream(guarded, options);
        const state = typeof threadId === "string" ? this.engine.threads.get(threadId) : undefined;
        if (!state) {
          sink.fail({
            _tag: "OrchestrationV2GetThreadProjectionError",
            threadId: typeof threadId === "string" && threadId ? threadId : "?",
            message: "Thread was not found.",
          });
          return () => {};
        }
        return this.threadStream(state, guarded, options);
      },
    };
  }

  /** Cuts a consumer off (Exit → Die) once its unacknowledged backlog passes the buffer limits. */
  private slowConsumerGuard(sink: StreamSink): (...values: unknown[]) => void {
    let bytes = 0;
    return (...values) => {
      if (sink.closed) return;
      if (sink.queuedCount === 0) bytes = 0;
      for (const value of values) bytes += JSON.stringify(value).length;
      sink.push(...values);
      if (sink.queuedCount === 0) bytes = 0;
      if (sink.queuedCount > SLOW_CONSUMER_MAX_ITEMS || bytes > SLOW_CONSUMER_MAX_BYTES) sink.die("Stream consumer is too slow: buffer limit exceeded");
    };
  }

  /** A thread's shell item; none for a thread the shell never lists (a delegated task's child). */
  private shellItem(state: ThreadState, sequence: number): unknown {
    if (!this.engine.inShell(state)) return undefined;
    if (!this.engine.isShellVisible(state)) return { kind: "thread.removed", sequence, location: state.location, threadId: state.thread.id };
    return { kind: "thread.updated", sequence, location: state.location, thread: this.engine.shellRow(state) };
  }

  /**
   * The shell stream as the real engine runs it. A fresh subscription gets the full snapshot, then
   * a metadata refresh. A resume within SHELL_REPLAY_MAX_EVENTS starts with the metadata-only
   * snapshot (`threads: []`), then the changed rows, then `synchronized`; a resume outside that
   * window gets a full snapshot. Project and thread creation send metadata refreshes mid-stream.
   */
  private shellStream(push: (...values: unknown[]) => void, options: { afterSequence: number | undefined; marker: boolean }): () => void {
    const after = options.afterSequence;
    const replay =
      after !== undefined &&
      after >= this.engine.replayableFrom - 1 &&
      after <= this.engine.sequence &&
      this.engine.sequence - after <= SHELL_REPLAY_MAX_EVENTS;
    let refresh: NodeJS.Immediate | undefined;
    const enrich = () => {
      refresh ??= setImmediate(() => {
        refresh = undefined;
        push(this.engine.metadataSnapshotItem());
      });
    };
    if (replay) {
      push(this.engine.metadataSnapshotItem());
      const latest = new Map<string, number>();
      for (const stored of this.engine.eventsAfter(after)) {
        latest.delete(stored.event.threadId);
        latest.set(stored.event.threadId, stored.sequence);
      }
      for (const [threadId, sequence] of latest) {
        const state = this.engine.threads.get(threadId);
        const item = state && this.shellItem(state, sequence);
        if (item) push(item);
      }
    } else {
      push({ kind: "snapshot", snapshot: this.engine.shellSnapshot() });
      enrich();
    }
    if (options.marker) push({ kind: "synchronized" });
    const pending = new Map<string, number>();
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      timer = undefined;
      const entries = [...pending.entries()].sort((a, b) => a[1] - b[1]);
      pending.clear();
      for (const [threadId, sequence] of entries) {
        const state = this.engine.threads.get(threadId);
        const item = state && this.shellItem(state, sequence);
        if (item) push(item);
      }
    };
    const onEvent = (stored: StoredEvent) => {
      pending.delete(stored.event.threadId);
      pending.set(stored.event.threadId, stored.sequence);
      timer ??= setTimeout(flush, SHELL_COALESCE_MS);
    };
    const onProject = (change: { sequence: number; project: unknown }) => push({ kind: "project.updated", sequence: change.sequence, project: change.project });
    this.engine.on("event", onEvent);
    this.engine.on("project", onProject);
    this.engine.on("enrichment", enrich);
    return () => {
      this.engine.off("event", onEvent);
      this.engine.off("project", onProject);
      this.engine.off("enrichment", enrich);
      clearTimeout(timer);
      if (refresh) clearImmediate(refresh);
    };
  }

  /** A resume replays a small gap without a create event; anything else gets a snapshot. */
  private threadStream(state: ThreadState, push: (...values: unknown[]) => void, options: { afterSequence: number | undefined; marker: boolean }): () => void {
    const threadId = state.thread.id;
    const after = options.afterSequence;
    let replay: StoredEvent[] | undefined;
    if (after !== undefined && after >= this.engine.replayableFrom - 1 && after <= this.engine.sequence) {
      const gap = this.engine.eventsAfter(after).filter((stored) => stored.event.threadId === threadId);
      const bytes = gap.reduce((sum, stored) => sum + stored.bytes, 0);
      if (gap.length <= THREAD_REPLAY_MAX_EVENTS && bytes <= THREAD_REPLAY_MAX_BYTES && !gap.some((stored) => stored.event.type === "thread.created"))
        replay = gap;
    }
    if (replay) for (const stored of replay) push({ kind: "event", sequence: stored.sequence, event: stored.event });
    else push({ kind: "snapshot", snapshotSequence: this.engine.sequence, projection: this.engine.projection(state) });
    if (options.marker) push({ kind: "synchronized" });
    // Events of one engine step leave together, as one transaction's events do on the real server:
    // a runtime request and its turn item arrive in one chunk.
    let batch: unknown[] | undefined;
    let closed = false;
    const onEvent = (stored: StoredEvent) => {
      if (stored.event.threadId !== threadId) return;
      if (!batch) {
        batch = [];
        queueMicrotask(() => {
          const values = batch!;
          batch = undefined;
          if (!closed) push(...values);
        });
      }
      batch.push({ kind: "event", sequence: stored.sequence, event: stored.event });
    };
    this.engine.on("event", onEvent);
    return () => {
      closed = true;
      this.engine.off("event", onEvent);
    };
  }
}
