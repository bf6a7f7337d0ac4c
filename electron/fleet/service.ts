// The fleet service: pairs environments, runs one supervisor per environment, merges everything
// into the fleet model, delivers messages exactly once, and decides notifications. Plain Node: it
// runs in Electron's main process, in the headless shell and in tests alike (design §1).
import { EventEmitter } from "node:events";
import {
  type AgentDetail,
  type BridgeEvent,
  type BridgeMethod,
  type BridgeParamsOut,
  BridgeRequests,
  type BridgeResults,
  type FleetSettingsView,
  type FleetSnapshot,
  type PairPreview,
  isBridgeMethod,
  safeExternalUrl,
} from "../../shared/bridge/contract";
import { type Delivery, type Intent, messageIntent } from "../../shared/fleet/delivery";
import type { RunningMessageMode, ThreadDetail } from "../../shared/fleet/facts";
import { type FleetChange, FleetModel, splitKey } from "../../shared/fleet/model";
import { NotificationPolicy } from "../../shared/fleet/notifications";
import { needsFollowing } from "../../shared/fleet/status";
import { type AgentView, agentKey } from "../../shared/fleet/types";
import { T3Error } from "../../shared/t3/errors";
import { type PairingTarget, parsePairingInput } from "../../shared/t3/pairing";
import { type EnvironmentRecord, Registry } from "./registry";
import type { SecretStore } from "./secrets";
import { ConnectionSupervisor, type SupervisorTiming } from "./supervisor";
import { T3EnvironmentClient } from "./t3/client";
import type { RpcSocketOptions } from "./t3/rpc-socket";
import { BridgeError } from "./bridge-error";
import { Deliveries } from "./deliveries";
import { ThreadFollowers } from "./threads";

/** Default port of a local T3 server (§1). */
export const LOCAL_T3_URL = "http://127.0.0.1:3773";
const PAIRING_CODE = /^[23456789ABCDEFGHJKLMNPQRSTUVWXYZ]{12}$/i;

export interface FleetServiceOptions {
  dataDir: string;
  secrets: SecretStore;
  /** Extra notices to show (e.g. "tokens kept in memory only"). */
  notices?: string[];
  timing?: Partial<SupervisorTiming>;
  socket?: Pick<RpcSocketOptions, "pingIntervalMs" | "openTimeoutMs" | "onFrame">;
  /** Opens a validated http(s) URL in the system browser (Electron); headless UIs open it themselves. */
  openExternal?: (url: string) => Promise<void>;
  /** A followed thread stream behind its fleet row for this long is subscribed again (protocol adapters). */
  streamLagMs?: number;
  now?: () => number;
}

interface EnvironmentRuntime {
  record: EnvironmentRecord;
  client: T3EnvironmentClient;
  supervisor: ConnectionSupervisor;
  followers: ThreadFollowers;
}

export interface FleetServiceEvents {
  event: [BridgeEvent];
}


export class FleetService extends EventEmitter<FleetServiceEvents> {
  readonly model: FleetModel;
  private readonly policy: NotificationPolicy;
  private readonly runtimes = new Map<string, EnvironmentRuntime>();
  private readonly deliveries: Deliveries;
  private readonly openAgents = new Set<string>();
  private readonly detailTimers = new Map<string, NodeJS.Timeout>();
  private stallTimer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  private readonly notices: string[];

  private constructor(
    private readonly registry: Registry,
    private readonly options: FleetServiceOptions,
    problems: string[],
  ) {
    super();
    this.setMaxListeners(0);
    this.now = options.now ?? Date.now;
    this.notices = [...problems, ...(options.notices ?? [])];
    this.model = new FleetModel({ stalledAfterMs: registry.settings.stalledAfterMs, now: this.now });
    this.policy = new NotificationPolicy(registry.settings.notifications);
    this.model.subscribe((change) => this.onModelChange(change));
    this.deliveries = new Deliveries({
      model: this.model,
      intent: (key, preferred) => this.intent(key, preferred),
      runtime: (environmentId) => this.runtimes.get(environmentId),
      publish: (delivery) => this.emit("event", { type: "delivery", delivery }),
      now: this.now,
    });
  }

  static async start(options: FleetServiceOptions): Promise<FleetService> {
    const { registry, problems } = await Registry.open(options.dataDir);
    const service = new FleetService(registry, options, problems);
    for (const record of registry.environments) service.startEnvironment(record);
    return service;
  }

  async stop(): Promise<void> {
    clearTimeout(this.stallTimer);
    for (const timer of this.detailTimers.values()) clearTimeout(timer);
    for (const runtime of this.runtimes.values()) {
      runtime.followers.stop();
      runtime.supervisor.stop();
    }
    this.runtimes.clear();
  }

  /** After system wake: re-check every connection before trusting it (design §3). */
  recheckAll(): void {
    for (const runtime of this.runtimes.values()) void runtime.supervisor.recheck();
  }

  snapshot(): FleetSnapshot {
    return {
      environments: this.model.environments(),
      agents: [...this.model.agents()],
      deliveries: this.deliveries.all(),
      settings: this.settingsView(),
      notices: [...this.notices],
    };
  }

  /** The bridge edge: decodes untrusted params, runs the request, maps failures to clear errors. */
  async request(method: string, params: unknown): Promise<unknown> {
    if (!isBridgeMethod(method)) throw new BridgeError("invalid", `Unknown request: ${method}`);
    const decoded = BridgeRequests[method].safeParse(params);
    if (!decoded.success) {
      const issue = decoded.error.issues[0];
      throw new BridgeError("invalid", `Invalid ${method} request${issue ? ` at ${issue.path.join(".") || "(root)"}: ${issue.message}` : ""}`);
    }
    const handler = this.handlers[method] as (params: unknown) => Promise<unknown> | unknown;
    return handler(decoded.data);
  }

  /** One handler per bridge method; params are already decoded. */
  private readonly handlers: { [M in BridgeMethod]: (params: BridgeParamsOut<M>) => Promise<BridgeResults[M]> | BridgeResults[M] } = {
    "pair.inspect": (p) => this.inspect(p.input),
    "pair.confirm": (p) => this.pair(p.input, p.token, p.label),
    "pair.probeLocal": () => this.probeLocal(),
    "environment.remove": (p) => this.removeEnvironment(p.environmentId),
    "environment.rename": (p) => this.updateEnvironment(p.environmentId, { customLabel: p.label }),
    "environment.mute": (p) => this.updateEnvironment(p.environmentId, { muted: p.muted }),
    "environment.retry": (p) => {
      this.runtime(p.environmentId).supervisor.reconnectNow();
      return null;
    },
    "agent.open": (p) => this.openAgent(p.key),
    "agent.close": (p) => {
      this.closeAgent(p.key);
      return null;
    },
    "agent.send": (p) => this.deliveries.send(p.key, p.text, p.expectedIntent),
    "agent.respondApproval": (p) =>
      this.deliveries.command(
        p.key,
        "approval",
        (threadId, commandId) => ({ type: "respond-approval", commandId, threadId, requestId: p.requestId, decision: p.decision }),
        p.requestId,
      ),
    "agent.respondInput": (p) =>
      this.deliveries.command(
        p.key,
        "input",
        (threadId, commandId) => ({ type: "respond-input", commandId, threadId, requestId: p.requestId, answers: p.answers }),
        p.requestId,
      ),
    "agent.interrupt": (p) =>
      this.deliveries.command(p.key, "interrupt", (threadId, commandId) => ({ type: "interrupt", commandId, threadId, runId: this.model.agent(p.key)?.activeRunId ?? null })),
    "agent.stop": (p) => this.deliveries.command(p.key, "stop", (threadId, commandId) => ({ type: "stop", commandId, threadId })),
    "delivery.recheck": (p) => this.deliveries.recheck(p.commandId),
    "settings.update": (p) => this.updateSettings(p),
    "link.open": (p) => this.openLink(p.url),
  };

  // ------------------------------------------------------------------ environments and pairing

  private clientFor(baseUrl: string): T3EnvironmentClient {
    return new T3EnvironmentClient(baseUrl, { ...(this.options.socket && { socket: this.options.socket }) });
  }

  private startEnvironment(record: EnvironmentRecord): EnvironmentRuntime {
    const client = this.clientFor(record.baseUrl);
    const supervisor = new ConnectionSupervisor({
      environmentId: record.environmentId,
      generation: record.generation,
      client,
      token: () => this.options.secrets.get(record.environmentId),
      ...(this.options.timing && { timing: this.options.timing }),
      ...(this.options.streamLagMs !== undefined && { streamLagMs: this.options.streamLagMs }),
      now: this.now,
    });
    const followers = new ThreadFollowers(supervisor, (threadId, detail) => this.onThreadChange(record.environmentId, threadId, detail));
    const runtime: EnvironmentRuntime = { record, client, supervisor, followers };
    this.runtimes.set(record.environmentId, runtime);
    this.model.upsertEnvironment(this.meta(record), supervisor.phase);
    supervisor.on("phase", (phase) => this.model.setPhase(record.environmentId, phase));
    supervisor.on("fleetSnapshot", (agents) => this.model.applyFleetSnapshot(record.environmentId, agents));
    supervisor.on("agentUpsert", (agent) => this.model.upsertAgent(record.environmentId, agent));
    supervisor.on("agentRemoved", (threadId, lifecycle) => this.model.removeAgent(record.environmentId, threadId, lifecycle));
    supervisor.start();
    return runtime;
  }

  private meta(record: EnvironmentRecord) {
    return {
      environmentId: record.environmentId,
      label: record.customLabel ?? record.serverLabel,
      baseUrl: record.baseUrl,
      serverVersion: record.serverVersion,
      generation: record.generation,
      readOnly: record.readOnly,
      muted: record.muted,
    };
  }

  private runtime(environmentId: string): EnvironmentRuntime {
    const runtime = this.runtimes.get(environmentId);
    if (!runtime) throw new BridgeError("not-found", "This environment is not paired.");
    return runtime;
  }

  private target(input: string): PairingTarget {
    const parsed = parsePairingInput(input);
    if (!parsed.ok) throw new BridgeError("invalid", parsed.message);
    return parsed.target;
  }

  private async inspect(input: string): Promise<PairPreview> {
    const target = this.target(input);
    const client = this.clientFor(target.baseUrl);
    try {
      const environment = await client.identify();
      const { generation } = await client.authSession();
      return {
        baseUrl: target.baseUrl,
        environmentId: environment.environmentId,
        label: environment.label,
        serverVersion: environment.serverVersion,
        generation,
        hasToken: target.pairingToken !== undefined,
        alreadyPaired: this.runtimes.has(environment.environmentId),
      };
    } catch (error) {
      throw pairingError(error, target.baseUrl);
    }
  }

  private async pair(input: string, token: string | undefined, label: string | undefined) {
    const target = this.target(input);
    const secret = target.pairingToken ?? token?.trim();
    if (!secret) throw new BridgeError("invalid", "This link carries no pairing code. Paste the full pairing link, or a host with its pairing code or token.");
    const client = this.clientFor(target.baseUrl);
    let paired;
    try {
      paired = await client.pair(PAIRING_CODE.test(secret) ? { pairingToken: secret } : { bearerToken: secret });
    } catch (error) {
      throw pairingError(error, target.baseUrl);
    }
    const { environment } = paired;
    await this.options.secrets.set(environment.environmentId, paired.token);
    const existing = this.runtimes.get(environment.environmentId);
    const record: EnvironmentRecord = {
      environmentId: environment.environmentId,
      serverLabel: environment.label,
      customLabel: label?.trim() || target.label || existing?.record.customLabel || null,
      baseUrl: target.baseUrl,
      generation: paired.generation,
      readOnly: paired.readOnly,
      serverVersion: environment.serverVersion,
      muted: existing?.record.muted ?? false,
      pairedAt: this.iso(),
    };
    await this.registry.upsert(record);
    if (existing && existing.record.baseUrl === record.baseUrl && existing.record.generation === record.generation) {
      // Re-pairing the same server updates the same record (design §2).
      existing.record = record;
      this.model.upsertEnvironment(this.meta(record));
      existing.supervisor.reconnectNow();
    } else {
      if (existing) this.stopEnvironment(environment.environmentId, false);
      this.startEnvironment(record);
    }
    return { environmentId: record.environmentId, label: record.customLabel ?? record.serverLabel, readOnly: record.readOnly };
  }

  private async probeLocal() {
    const client = this.clientFor(LOCAL_T3_URL);
    try {
      const environment = await client.identify();
      return { baseUrl: LOCAL_T3_URL, label: environment.label, environmentId: environment.environmentId, alreadyPaired: this.runtimes.has(environment.environmentId) };
    } catch {
      return null;
    }
  }

  private stopEnvironment(environmentId: string, forget: boolean): void {
    const runtime = this.runtimes.get(environmentId);
    if (!runtime) return;
    runtime.followers.stop();
    runtime.supervisor.stop();
    runtime.supervisor.removeAllListeners();
    this.runtimes.delete(environmentId);
    if (forget) this.model.removeEnvironment(environmentId);
  }

  private async removeEnvironment(environmentId: string) {
    this.runtime(environmentId);
    this.stopEnvironment(environmentId, true);
    await this.registry.remove(environmentId);
    await this.options.secrets.delete(environmentId);
    return null;
  }

  private async updateEnvironment(environmentId: string, patch: Partial<EnvironmentRecord>) {
    const runtime = this.runtime(environmentId);
    const record = await this.registry.update(environmentId, patch);
    if (record) {
      runtime.record = record;
      this.model.upsertEnvironment(this.meta(record));
    }
    return null;
  }

  // ------------------------------------------------------------------ model changes, following, notifications

  private onModelChange(change: FleetChange): void {
    this.emit("event", { type: "fleet.delta", ...change });
    const paused = this.registry.settings.notificationsPaused;
    for (const env of change.environments) {
      for (const notification of this.policy.environmentChanged(env)) if (!paused) this.emit("event", { type: "notification", notification });
    }
    for (const agent of change.agents) {
      this.updateFollowing(agent);
      for (const notification of this.policy.agentChanged(agent)) if (!paused) this.emit("event", { type: "notification", notification });
      this.scheduleDetail(agent.key);
    }
    for (const key of change.removed) this.policy.forget(key);
    if (change.agents.length > 0) this.scheduleStallCheck();
  }

  private updateFollowing(agent: AgentView): void {
    const runtime = this.runtimes.get(agent.environmentId);
    if (!runtime || agent.status === "unknown") return;
    if (needsFollowing(agent.lastKnownStatus)) runtime.followers.follow(agent.threadId, "active");
    else runtime.followers.unfollow(agent.threadId, "active");
  }

  private onThreadChange(environmentId: string, threadId: string, detail: ThreadDetail): void {
    this.model.setThreadDetail(environmentId, threadId, detail.facts);
    this.deliveries.threadChanged(environmentId, threadId, detail);
    this.scheduleDetail(agentKey(environmentId, threadId));
  }

  private scheduleStallCheck(): void {
    if (this.stallTimer) return;
    const next = this.model.checkStalls();
    if (next === null) return;
    this.stallTimer = setTimeout(() => {
      this.stallTimer = undefined;
      this.scheduleStallCheck();
    }, Math.max(0, next - this.now()) + 10);
    this.stallTimer.unref?.();
  }

  // ------------------------------------------------------------------ agent detail

  private openAgent(key: string): AgentDetail {
    const [environmentId, threadId] = splitKey(key);
    const runtime = this.runtime(environmentId);
    this.openAgents.add(key);
    runtime.followers.follow(threadId, "open");
    return this.detail(key);
  }

  private closeAgent(key: string): void {
    const [environmentId, threadId] = splitKey(key);
    this.openAgents.delete(key);
    this.runtimes.get(environmentId)?.followers.unfollow(threadId, "open");
  }

  intent(key: string, preferred?: RunningMessageMode): Intent {
    const [environmentId] = splitKey(key);
    return messageIntent(this.model.agent(key), this.model.environment(environmentId), preferred);
  }

  detail(key: string): AgentDetail {
    const [environmentId, threadId] = splitKey(key);
    const detail = this.runtimes.get(environmentId)?.followers.get(threadId)?.detail;
    return { key, items: detail?.items ?? [], loaded: detail?.loaded ?? false, error: detail?.error ?? null };
  }

  /** Open views get their detail at most every few ms while tokens stream. */
  private scheduleDetail(key: string): void {
    if (!this.openAgents.has(key) || this.detailTimers.has(key)) return;
    this.detailTimers.set(
      key,
      setTimeout(() => {
        this.detailTimers.delete(key);
        if (this.openAgents.has(key)) this.emit("event", { type: "agent.detail", detail: this.detail(key) });
      }, 16),
    );
  }

  // ------------------------------------------------------------------ settings and links

  private settingsView(): FleetSettingsView {
    const { notifications, notificationsPaused, stalledAfterMs } = this.registry.settings;
    return { notifications, notificationsPaused, stalledAfterMs };
  }

  private async updateSettings(patch: { notifications?: Partial<FleetSettingsView["notifications"]>; notificationsPaused?: boolean; stalledAfterMs?: number }) {
    const current = this.registry.settings;
    const next = await this.registry.updateSettings({
      ...(patch.notifications && { notifications: { ...current.notifications, ...patch.notifications } }),
      ...(patch.notificationsPaused !== undefined && { notificationsPaused: patch.notificationsPaused }),
      ...(patch.stalledAfterMs !== undefined && { stalledAfterMs: patch.stalledAfterMs }),
    });
    this.policy.updateSettings(next.notifications);
    this.model.setStalledAfter(next.stalledAfterMs);
    // A shorter quiet time takes effect at once: the pending check may be later than the new deadline.
    clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
    this.scheduleStallCheck();
    const view = this.settingsView();
    this.emit("event", { type: "settings", settings: view });
    return view;
  }

  private async openLink(raw: string) {
    const url = safeExternalUrl(raw);
    if (!url) throw new BridgeError("invalid", "Only http and https links can be opened.");
    await this.options.openExternal?.(url);
    return null;
  }

  delivery(commandId: string): Delivery | undefined {
    return this.deliveries.get(commandId);
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }
}

/** Pairing failures in words a user can act on (issue: clear messages for each case). */
function pairingError(error: unknown, baseUrl: string): BridgeError {
  if (!(error instanceof T3Error)) return new BridgeError("server", `Pairing with ${baseUrl} failed: ${String(error)}`);
  switch (error.kind) {
    case "unauthorized":
      return new BridgeError("unauthorized", "This pairing code was already used or has expired. Create a new pairing link in T3 and paste it here.");
    case "insufficient-scope":
      return new BridgeError(
        "insufficient-scope",
        "The pairing link does not grant read and operate access to orchestration, so T3 Fleet cannot use it. Create a new pairing link (this one is now used up).",
      );
    case "network":
    case "timeout":
      return new BridgeError("unreachable", `No server answered at ${baseUrl}. Check the address, and that the machine is on and reachable (LAN or Tailscale).`);
    case "incompatible":
      return new BridgeError("incompatible", /protocol/.test(error.message) ? error.message : `The server at ${baseUrl} is not a T3 server T3 Fleet can use: ${error.message}`);
    case "decode":
      return new BridgeError("not-t3", `The server at ${baseUrl} did not answer like a T3 server.`);
    default:
      return new BridgeError(error.kind, error.message);
  }
}
