// One connection supervisor per environment: the only place in T3 Fleet that retries.
// Phases: connecting → online; on failure offline (unreachable) or backoff (failing), each with its
// next attempt; unauthorized and incompatible wait for the user. On every connect the
// environment descriptor chooses the protocol adapter (docs/architecture.md, "The supervisor").
import { EventEmitter } from "node:events";
import type { AgentFacts, AgentLifecycle, OrchestrationProtocol } from "../../shared/fleet/facts";
import { redactSecrets } from "../../shared/bridge/redact";
import { T3Error } from "../../shared/t3/errors";
import type { EnvironmentDescriptor } from "../../shared/t3/schemas";
import type { ConnectionPhase, SkippedItem } from "../../shared/fleet/types";
import type { AdapterSession, ProtocolAdapter, Subscription } from "./t3/adapter";
import type { SnapshotGate, SnapshotSlotRelease } from "./snapshot-gate";
import { createAdapter, negotiateProtocol } from "./t3/adapters";
import type { AuthGeneration, T3EnvironmentClient } from "./t3/client";
import type { OriginToken } from "./t3/origin-token";

export interface SupervisorTiming {
  /** First retry delay; doubles per attempt (full jitter). */
  baseBackoffMs: number;
  /** Cap of the retry delay. */
  maxBackoffMs: number;
  /** Online this long before the attempt counter resets, so a flapping link keeps backing off. */
  stableAfterMs: number;
  /** Bound for the ping that re-checks a connection after system wake. */
  probeTimeoutMs: number;
  /**
   * How often an online connection asks /api/auth/session whether its token still works: T3 keeps
   * a revoked session's open socket working (issue 7), so this bounds how long a revoked pairing
   * can look online.
   */
  tokenRecheckMs: number;
  /** A host confirmed this recently that became unreachable is probably restarting: probe it quickly. */
  recentlySeenMs: number;
  /** Delay between quick probes of a recently seen host (plus up to 20 % jitter). */
  quickProbeMs: number;
  /**
   * Bound for a quick probe's first request: a restarting T3 accepts connections about 3 s before
   * it serves and never answers those, so a probe gives up on such a deaf connection this fast.
   */
  quickProbeTimeoutMs: number;
}

export const DEFAULT_TIMING: SupervisorTiming = {
  baseBackoffMs: 1_000,
  maxBackoffMs: 30_000,
  stableAfterMs: 30_000,
  probeTimeoutMs: 3_000,
  tokenRecheckMs: 30_000,
  recentlySeenMs: 120_000,
  quickProbeMs: 1_000,
  quickProbeTimeoutMs: 2_000,
};

export interface SupervisorOptions {
  environmentId: string;
  generation: AuthGeneration;
  client: T3EnvironmentClient;
  /** Reads the token from the secret store at each attempt (it may have been re-paired). */
  token: () => Promise<OriginToken | undefined>;
  timing?: Partial<SupervisorTiming>;
  random?: () => number;
  now?: () => number;
  /** Passed to protocol adapters (tests shorten it). */
  streamLagMs?: number;
  /** Shared by every environment: bounds how many fleet snapshots arrive at once (snapshot-gate.ts). */
  snapshotGate?: SnapshotGate;
}

export interface SupervisorEvents {
  phase: [ConnectionPhase];
  /**
   * A new protocol adapter (first connect, or the machine now speaks another protocol): state kept
   * for the previous adapter (followed threads, cursors) no longer applies.
   */
  adapter: [ProtocolAdapter];
  /** The descriptor as read on this connect (T3 may have been updated since the last one). */
  identified: [EnvironmentDescriptor];
  /** A fresh authenticated connection, synchronized: (re)subscribe what rides on it. */
  connected: [AdapterSession];
  /** The environment's complete set of agents (neutral facts). */
  fleetSnapshot: [AgentFacts[]];
  agentUpsert: [AgentFacts];
  agentRemoved: [string, Exclude<AgentLifecycle, "active"> | "archived-or-deleted"];
  /** Something from the server did not decode and was skipped; the connection stays up. */
  skipped: [SkippedItem];
}

const REVOKED = "The server no longer accepts this pairing (expired or revoked). Pair it again.";

/** Kinds that mean the host is unreachable rather than failing. */
const UNREACHABLE = new Set<T3Error["kind"]>(["network", "timeout"]);

export class ConnectionSupervisor extends EventEmitter<SupervisorEvents> {
  private phaseValue: ConnectionPhase;
  private connection: AdapterSession | undefined;

  /** The connection held now, if any: the one thread streams ride on while online. */
  get currentConnection(): AdapterSession | undefined {
    return this.connection;
  }
  private adapterValue: ProtocolAdapter | undefined;
  private shell: Subscription | undefined;
  /** The snapshot slot this connection holds until its fleet stream is synchronized. */
  private snapshotSlot: SnapshotSlotRelease | undefined;
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private stableTimer: NodeJS.Timeout | undefined;
  private tokenTimer: NodeJS.Timeout | undefined;
  private lastConfirmedAt: string | null = null;
  /** Set while `recheck` waits for an online connection's ping: a second re-check then changes nothing. */
  private reverifying: AdapterSession | undefined;
  /** Whether the scheduled attempt is a quick probe of a recently seen host (short first request). */
  private quickProbeScheduled = false;
  private running = false;
  /** Increments per attempt so a late answer from an abandoned attempt is ignored. */
  private attemptSerial = 0;
  private readonly timing: SupervisorTiming;
  private readonly random: () => number;
  private readonly now: () => number;

  constructor(private readonly options: SupervisorOptions) {
    super();
    this.timing = { ...DEFAULT_TIMING, ...options.timing };
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.phaseValue = { phase: "connecting", since: this.iso(), lastConfirmedAt: null };
  }

  get phase(): ConnectionPhase {
    return this.phaseValue;
  }

  get environmentId(): string {
    return this.options.environmentId;
  }

  /** The live connection when online (for commands and thread streams). */
  get activeConnection(): AdapterSession | undefined {
    return this.phaseValue.phase === "online" ? this.connection : undefined;
  }

  /** The adapter of the protocol the environment spoke on the latest connect. */
  get adapter(): ProtocolAdapter | undefined {
    return this.adapterValue;
  }

  get protocol(): OrchestrationProtocol | undefined {
    return this.adapterValue?.protocol;
  }

  get hasScheduledAttempt(): boolean {
    return this.retryTimer !== undefined;
  }

  /** Whether anything will contact the server on a timer (a retry or a token re-check). */
  get hasScheduledWork(): boolean {
    return this.retryTimer !== undefined || this.tokenTimer !== undefined;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.connect();
  }

  stop(): void {
    this.running = false;
    this.attemptSerial++;
    clearTimeout(this.retryTimer);
    clearTimeout(this.stableTimer);
    this.retryTimer = undefined;
    this.teardown();
  }

  /** After re-pairing: forget unauthorized/incompatible and connect now. */
  reconnectNow(): void {
    if (!this.running) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.quickProbeScheduled = false;
    this.attempt = 0;
    this.teardown();
    void this.connect();
  }

  /**
   * Re-verify now: after a system wake, a clock jump or a long stall of the event loop
   * (wake-watch.ts, electron/main/wake.ts) nothing seen before is trusted. An online connection
   * shows "connecting" at once, its agents unknown as of its last frame (not the time of the wake),
   * until it answers a ping within `probeTimeoutMs`; a waiting environment is tried at once. A
   * re-check while one waits for its ping changes nothing (the shell's wake event and the clock
   * watch may both report the same wake).
   */
  async recheck(): Promise<void> {
    if (!this.running) return;
    const connection = this.connection;
    if (this.reverifying && this.reverifying === connection) return;
    if (this.phaseValue.phase === "online" && connection) {
      this.reverifying = connection;
      this.lastConfirmedAt = new Date(connection.lastFrameAt).toISOString();
      this.setPhase({ phase: "connecting", since: this.iso(), lastConfirmedAt: this.lastConfirmedAt });
      try {
        await connection.probe(this.timing.probeTimeoutMs);
        if (this.connection === connection) this.setPhase({ phase: "online", since: this.iso() });
      } catch (error) {
        if (this.connection === connection) this.fail(T3Error.from(error));
      } finally {
        if (this.reverifying === connection) this.reverifying = undefined;
      }
      return;
    }
    if (this.phaseValue.phase === "unauthorized") return; // needs a new token, not a retry
    this.reconnectNow();
  }

  /** A stream riding on this connection skipped an item it could not decode. */
  reportSkipped(item: SkippedItem): void {
    this.emit("skipped", item);
  }

  /** A stream riding on this connection failed: the supervisor decides what happens next. */
  reportFailure(error: T3Error): void {
    if (error.kind === "interrupted" || !this.connection) return;
    this.fail(error);
  }

  // ------------------------------------------------------------------ internals

  private async connect(): Promise<void> {
    const attemptId = ++this.attemptSerial;
    const identifyTimeoutMs = this.quickProbeScheduled ? this.timing.quickProbeTimeoutMs : undefined;
    this.quickProbeScheduled = false;
    const current = () => attemptId === this.attemptSerial && this.running;
    if (this.phaseValue.phase !== "offline" && this.phaseValue.phase !== "backoff") {
      this.setPhase({ phase: "connecting", since: this.iso(), lastConfirmedAt: this.lastConfirmedAt });
    } else if (Date.parse(this.phaseValue.nextAttemptAt) > this.now()) {
      // Tried earlier than announced (retry now, wake): the attempt is under way now.
      this.setPhase({ ...this.phaseValue, nextAttemptAt: this.iso() });
    }
    try {
      const token = await this.options.token();
      if (!token) throw new T3Error("unauthorized", "No token is stored for this environment. Pair it again.");
      let adapter = this.negotiate(await this.identify(identifyTimeoutMs));
      let connection: AdapterSession;
      try {
        connection = await adapter.connect({ token, generation: this.options.generation });
      } catch (error) {
        // A server upgraded in place refuses the old protocol's socket (426, seen here as a refused
        // upgrade): the descriptor, read again, says which adapter to use. Once, not a retry loop.
        const failure = T3Error.from(error);
        if (failure.kind !== "network" || !current()) throw failure;
        const renegotiated = this.negotiate(await this.identify(identifyTimeoutMs));
        if (!current()) return;
        if (renegotiated === adapter) throw failure;
        adapter = renegotiated;
        connection = await adapter.connect({ token, generation: this.options.generation });
      }
      if (!current()) {
        connection.close();
        return;
      }
      // Every (re)connect asks whether the token still works: T3 may let a revoked session's socket
      // open (and keeps open ones working), so a revoked pairing stops here, once.
      const verdict = await this.checkToken();
      if (!current() || verdict) {
        connection.close();
        if (verdict) throw verdict;
        return;
      }
      this.connection = connection;
      connection.onSkipped?.((item) => this.emit("skipped", item));
      connection.onClose((error) => {
        if (this.connection === connection && error.kind !== "interrupted") this.fail(error);
      });
      const slot = this.options.snapshotGate ? await this.options.snapshotGate.acquire() : undefined;
      if (!current() || this.connection !== connection) {
        slot?.();
        return;
      }
      this.snapshotSlot = slot;
      this.subscribeFleet(connection, current);
    } catch (error) {
      if (!current()) return;
      const failure = T3Error.from(error);
      if (failure.kind === "network" || failure.kind === "unauthorized") {
        // A refused upgrade hides its status; ask the public session endpoint whether the token still works.
        const verdict = await this.checkToken();
        if (!current()) return;
        if (verdict) return this.fail(verdict);
      }
      this.fail(failure);
    }
  }

  /**
   * Reads the descriptor and negotiates its protocol (one this build cannot speak is incompatible);
   * a different server at this address is never merged with this one.
   */
  private async identify(timeoutMs?: number): Promise<EnvironmentDescriptor> {
    const environment = await this.options.client.identify(timeoutMs);
    negotiateProtocol(environment);
    if (environment.environmentId !== this.options.environmentId) {
      throw new T3Error(
        "incompatible",
        `A different T3 server (${environment.label}, ${environment.environmentId}) now answers at ${this.options.client.baseUrl}; it is not merged with this one.`,
      );
    }
    this.emit("identified", environment);
    return environment;
  }

  /**
   * The adapter for the protocol the descriptor announces: the current one while the protocol is
   * unchanged (its cursors resume), a new one when the machine was upgraded in place (the new
   * protocol's cursors start afresh; thread ids, and so the agents, stay the same).
   */
  private negotiate(descriptor: EnvironmentDescriptor): ProtocolAdapter {
    const protocol = negotiateProtocol(descriptor);
    if (this.adapterValue?.protocol === protocol) return this.adapterValue;
    const adapter = createAdapter(protocol, {
      client: this.options.client,
      generation: this.options.generation,
      descriptor,
      ...(this.options.streamLagMs !== undefined && { streamLagMs: this.options.streamLagMs }),
    });
    this.adapterValue = adapter;
    this.emit("adapter", adapter);
    return adapter;
  }

  private async checkToken(): Promise<T3Error | undefined> {
    try {
      const token = await this.options.token();
      if (!token) return new T3Error("unauthorized", "No token is stored for this environment. Pair it again.");
      const { session } = await this.options.client.authSession(token);
      return session.authenticated ? undefined : new T3Error("unauthorized", REVOKED);
    } catch {
      return undefined; // unreachable: the original failure stands
    }
  }

  private subscribeFleet(connection: AdapterSession, current: () => boolean): void {
    const subscription: Subscription = connection.subscribeFleet({
      snapshot: (agents) => {
        if (current()) this.emit("fleetSnapshot", agents);
      },
      upsert: (agent) => {
        if (current()) this.emit("agentUpsert", agent);
      },
      remove: (threadId, lifecycle) => {
        if (current()) this.emit("agentRemoved", threadId, lifecycle);
      },
      synchronized: () => {
        if (!current()) return;
        this.releaseSnapshotSlot();
        this.online(connection);
      },
      skipped: (item) => {
        if (current()) this.emit("skipped", item);
      },
      end: (error) => {
        if (!current() || this.connection !== connection || this.shell !== subscription) return;
        this.releaseSnapshotSlot();
        // The fleet stream is the environment's heartbeat of truth: if it ends, reconnect.
        this.fail(error ?? new T3Error("server", "The server ended the fleet stream."));
      },
    });
    this.shell = subscription;
  }

  private online(connection: AdapterSession): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.setPhase({ phase: "online", since: this.iso() });
    clearTimeout(this.stableTimer);
    this.stableTimer = setTimeout(() => (this.attempt = 0), this.timing.stableAfterMs);
    this.stableTimer.unref?.();
    this.scheduleTokenCheck(connection);
    this.emit("connected", connection);
  }

  /** While online, re-checks the token every tokenRecheckMs; a refusal ends the connection as unauthorized. */
  private scheduleTokenCheck(connection: AdapterSession): void {
    clearTimeout(this.tokenTimer);
    this.tokenTimer = setTimeout(() => {
      this.tokenTimer = undefined;
      void this.checkToken().then((verdict) => {
        if (this.connection !== connection || this.phaseValue.phase !== "online") return;
        if (verdict) this.fail(verdict);
        else this.scheduleTokenCheck(connection);
      });
    }, this.timing.tokenRecheckMs);
    this.tokenTimer.unref?.();
  }

  private fail(error: T3Error): void {
    if (!this.running) return;
    const connection = this.connection;
    if (connection) this.lastConfirmedAt = new Date(connection.lastFrameAt).toISOString();
    this.attemptSerial++;
    clearTimeout(this.stableTimer);
    this.teardown();
    // The phase reaches every UI: a server's error text never carries a credential with it.
    const message = redactSecrets(error.message);
    if (error.kind === "unauthorized" || (error.kind === "insufficient-scope" && error.details.requiredScope === "orchestration:read")) {
      this.setPhase({ phase: "unauthorized", since: this.iso(), lastConfirmedAt: this.lastConfirmedAt, error: message });
      return;
    }
    if (error.kind === "incompatible") {
      this.setPhase({ phase: "incompatible", since: this.iso(), lastConfirmedAt: this.lastConfirmedAt, error: message });
      return;
    }
    const unreachable = UNREACHABLE.has(error.kind);
    this.quickProbeScheduled = unreachable && this.recentlySeen();
    const delay = this.quickProbeScheduled ? this.quickProbeDelay() : this.backoffDelay();
    this.attempt++;
    const at = this.now();
    const base = {
      since: new Date(at).toISOString(),
      lastConfirmedAt: this.lastConfirmedAt,
      nextAttemptAt: new Date(at + delay).toISOString(),
      attempt: this.attempt,
      error: message,
    };
    this.setPhase(unreachable ? { phase: "offline", ...base } : { phase: "backoff", ...base });
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, delay);
  }

  /** A host last confirmed within recentlySeenMs is likely restarting, not gone. */
  private recentlySeen(): boolean {
    return this.lastConfirmedAt !== null && this.now() - Date.parse(this.lastConfirmedAt) < this.timing.recentlySeenMs;
  }

  /** Quick probes spread by a little jitter so many hosts that dropped together do not retry in step. */
  private quickProbeDelay(): number {
    return Math.floor(this.timing.quickProbeMs * (1 + 0.2 * this.random()));
  }

  /** Exponential backoff with full jitter, capped. */
  private backoffDelay(): number {
    const ceiling = Math.min(this.timing.maxBackoffMs, this.timing.baseBackoffMs * 2 ** this.attempt);
    return Math.floor(this.random() * ceiling);
  }

  private releaseSnapshotSlot(): void {
    this.snapshotSlot?.();
    this.snapshotSlot = undefined;
  }

  private teardown(): void {
    this.releaseSnapshotSlot();
    clearTimeout(this.tokenTimer);
    this.tokenTimer = undefined;
    const connection = this.connection;
    this.connection = undefined;
    this.shell?.close();
    this.shell = undefined;
    connection?.close();
  }

  private setPhase(phase: ConnectionPhase): void {
    this.phaseValue = phase;
    this.emit("phase", phase);
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }
}
