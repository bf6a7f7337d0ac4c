// Environment lifecycle: one runtime (client, supervisor, thread followers) per paired environment,
// started from the registry, replaced on re-pairing, renamed, muted, retried and removed. Pairing
// itself (talking to a new server) lives in pairing.ts; this module only runs what is paired.
import type { FleetModel } from "../../shared/fleet/model";
import type { ThreadDetail } from "../../shared/fleet/facts";
import type { EnvironmentMeta, SkippedItemsReport } from "../../shared/fleet/types";
import { BridgeError } from "./bridge-error";
import { type BudgetLimits, type BudgetReport, EnvironmentBudget } from "./budget";
import type { EnvironmentRecord, Registry } from "./registry";
import type { OriginBoundSecrets } from "./secrets";
import { SnapshotGate } from "./snapshot-gate";
import { ConnectionSupervisor, type SupervisorTiming } from "./supervisor";
import { announcedProtocol } from "./t3/adapters";
import { T3EnvironmentClient } from "./t3/client";
import type { RpcSocketOptions } from "./t3/rpc-socket";
import { ThreadFollowers } from "./threads";

export interface EnvironmentRuntime {
  record: EnvironmentRecord;
  /** What the server sent that had to be skipped (shown on the environment's view). */
  skippedItems?: SkippedItemsReport;
  client: T3EnvironmentClient;
  supervisor: ConnectionSupervisor;
  followers: ThreadFollowers;
}

export type ThreadChangeListener = (environmentId: string, threadId: string, detail: ThreadDetail) => void;

export interface EnvironmentsOptions {
  model: FleetModel;
  registry: Registry;
  secrets: OriginBoundSecrets;
  timing?: Partial<SupervisorTiming>;
  socket?: Pick<RpcSocketOptions, "pingIntervalMs" | "openTimeoutMs" | "onFrame">;
  streamLagMs?: number;
  onThreadChange: ThreadChangeListener;
  now: () => number;
  /** What one environment may hold (budget.ts); the defaults when absent. */
  budget?: BudgetLimits;
  /** A server went over its budget: say so once. */
  onOverBudget?: (environmentId: string, report: BudgetReport) => void;
  /** An environment's complete set of agents was applied to the model (heap-release.ts). */
  onFleetSnapshot?: (environmentId: string) => void;
}

/**
 * T3 keeps no way for a session to end itself (a session may revoke only others, and only with
 * owner rights or access:write, which the fleet never asks for): removal can only forget the token.
 */
export const REMOVAL_NOTE =
  "T3 does not let a connection revoke its own session, so the fleet only forgot its token. To cut it off on the server, revoke “T3 Fleet” in T3's Connections list (or run `t3 auth session revoke`).";

export class Environments {
  private readonly runtimes = new Map<string, EnvironmentRuntime>();
  /** One for all environments: a cold start takes their snapshots a few at a time. */
  private readonly snapshotGate = new SnapshotGate();

  constructor(private readonly options: EnvironmentsOptions) {}

  clientFor(baseUrl: string): T3EnvironmentClient {
    return new T3EnvironmentClient(baseUrl, { ...(this.options.socket && { socket: this.options.socket }) });
  }

  has(environmentId: string): boolean {
    return this.runtimes.has(environmentId);
  }

  get(environmentId: string): EnvironmentRuntime | undefined {
    return this.runtimes.get(environmentId);
  }

  /** The runtime of a paired environment, or a "not paired" error for the bridge. */
  require(environmentId: string): EnvironmentRuntime {
    const runtime = this.runtimes.get(environmentId);
    if (!runtime) throw new BridgeError("not-found", "This environment is not paired.");
    return runtime;
  }

  all(): IterableIterator<EnvironmentRuntime> {
    return this.runtimes.values();
  }

  startAll(): void {
    for (const record of this.options.registry.environments) this.start(record);
  }

  stopAll(): void {
    for (const runtime of this.runtimes.values()) {
      runtime.followers.stop();
      runtime.supervisor.stop();
      runtime.client.retire();
    }
    this.runtimes.clear();
  }

  /** After system wake: re-check every connection before trusting it. */
  recheckAll(): void {
    for (const runtime of this.runtimes.values()) void runtime.supervisor.recheck();
  }

  retry(environmentId: string): void {
    this.require(environmentId).supervisor.reconnectNow();
  }

  /** A new pairing was stored for `record`: reconnect the same server, or replace what ran before. */
  adopt(record: EnvironmentRecord): void {
    const existing = this.runtimes.get(record.environmentId);
    if (existing && existing.record.baseUrl === record.baseUrl && existing.record.generation === record.generation) {
      // Re-pairing the same server updates the same record.
      existing.record = record;
      this.options.model.upsertEnvironment(metaOf(record, existing.skippedItems));
      existing.supervisor.reconnectNow();
      return;
    }
    if (existing) this.stop(record.environmentId, false);
    this.start(record);
  }

  async update(environmentId: string, patch: Partial<EnvironmentRecord>): Promise<null> {
    const runtime = this.require(environmentId);
    const record = await this.options.registry.update(environmentId, patch);
    if (record) {
      runtime.record = record;
      this.options.model.upsertEnvironment(metaOf(record, runtime.skippedItems));
    }
    return null;
  }

  async remove(environmentId: string): Promise<{ note: string }> {
    this.require(environmentId);
    // Saved first: a removal the disk refused leaves the machine paired and watched.
    await this.options.registry.remove(environmentId);
    this.stop(environmentId, true);
    await this.options.secrets.delete(environmentId);
    return { note: REMOVAL_NOTE };
  }

  private start(record: EnvironmentRecord): EnvironmentRuntime {
    const { model } = this.options;
    const client = this.clientFor(record.baseUrl);
    const supervisor = new ConnectionSupervisor({
      environmentId: record.environmentId,
      generation: record.generation,
      client,
      // Only the token the record's own address issued: never one bound to another origin.
      token: () => this.options.secrets.get(record.environmentId, record.baseUrl),
      ...(this.options.timing && { timing: this.options.timing }),
      ...(this.options.streamLagMs !== undefined && { streamLagMs: this.options.streamLagMs }),
      snapshotGate: this.snapshotGate,
      now: this.options.now,
    });
    const budget = new EnvironmentBudget(this.options.budget, (report) => this.options.onOverBudget?.(record.environmentId, report));
    const followers = new ThreadFollowers(supervisor, (threadId, detail) => {
      // A followed thread's changes count in the environment's budget (budget.ts admitChanges).
      const changes = budget.admitChanges(threadId, detail.facts.changes);
      const admitted = changes === detail.facts.changes ? detail : { ...detail, facts: { ...detail.facts, changes } };
      this.options.onThreadChange(record.environmentId, threadId, admitted);
    });
    const runtime: EnvironmentRuntime = { record, client, supervisor, followers };
    this.runtimes.set(record.environmentId, runtime);
    model.upsertEnvironment(metaOf(record), supervisor.phase);
    supervisor.on("phase", (phase) => model.setPhase(record.environmentId, phase));
    supervisor.on("fleetSnapshot", (agents) => {
      model.applyFleetSnapshot(record.environmentId, budget.snapshot(agents));
      this.options.onFleetSnapshot?.(record.environmentId);
    });
    supervisor.on("agentUpsert", (agent) => {
      if (budget.upsert(agent)) model.upsertAgent(record.environmentId, agent);
    });
    supervisor.on("agentRemoved", (threadId, lifecycle) => {
      budget.removed(threadId);
      model.removeAgent(record.environmentId, threadId, lifecycle);
    });
    supervisor.on("identified", (descriptor) => {
      const protocol = announcedProtocol(descriptor);
      if (descriptor.serverVersion === runtime.record.serverVersion && protocol === runtime.record.protocol) return;
      // T3 was updated on that machine (perhaps in place to protocol 2): show what it runs now. The
      // descriptor is read on every connect, so a failed write only leaves the stored copy stale.
      runtime.record = { ...runtime.record, serverVersion: descriptor.serverVersion, protocol };
      model.upsertEnvironment(metaOf(runtime.record, runtime.skippedItems));
      this.options.registry.update(record.environmentId, { serverVersion: descriptor.serverVersion, protocol }).catch(() => undefined);
    });
    supervisor.on("skipped", (item) => {
      runtime.skippedItems = { count: (runtime.skippedItems?.count ?? 0) + 1, last: { ...item, at: new Date(this.options.now()).toISOString() } };
      model.upsertEnvironment(metaOf(runtime.record, runtime.skippedItems));
    });
    supervisor.start();
    return runtime;
  }

  private stop(environmentId: string, forget: boolean): void {
    const runtime = this.runtimes.get(environmentId);
    if (!runtime) return;
    runtime.followers.stop();
    runtime.supervisor.stop();
    runtime.supervisor.removeAllListeners();
    // Whatever still holds this client (a delivery under way, a detail read) can send nothing more.
    runtime.client.retire();
    this.runtimes.delete(environmentId);
    if (forget) this.options.model.removeEnvironment(environmentId);
  }
}

/** What the fleet model knows of an environment apart from its connection. */
export function metaOf(record: EnvironmentRecord, skippedItems?: SkippedItemsReport): EnvironmentMeta {
  return {
    ...(skippedItems && { skippedItems }),
    environmentId: record.environmentId,
    label: record.customLabel ?? record.serverLabel,
    baseUrl: record.baseUrl,
    serverVersion: record.serverVersion,
    protocol: record.protocol ?? null,
    generation: record.generation,
    readOnly: record.readOnly,
    muted: record.muted,
  };
}
