// The fleet service: the composition root. It opens the registry, builds the fleet model and the
// modules that own each concern (environment lifecycle, pairing, agent details, deliveries,
// acknowledgements, settings, the bridge edge), and fans the model's changes out to the UI, the
// notification policy and thread following. Plain Node: it runs in Electron's main process, in the
// headless shell and in tests alike (docs/architecture.md, "Layers").
import { EventEmitter } from "node:events";
import type { AgentDetail, BridgeEvent, FleetSnapshot } from "../../shared/bridge/contract";
import type { Creation } from "../../shared/fleet/creation";
import { type Delivery, type Intent, messageIntent } from "../../shared/fleet/delivery";
import { type FleetChange, FleetModel, splitKey } from "../../shared/fleet/model";
import { NotificationPolicy } from "../../shared/fleet/notifications";
import type { RunningMessageMode, ThreadDetail } from "../../shared/fleet/facts";
import { agentKey } from "../../shared/fleet/types";
import { Acknowledgements } from "./acknowledgements";
import { Snoozes } from "./snoozes";
import { Reviews } from "./reviews";
import { HandledLog } from "./handled-log";
import { AgentDetails } from "./agent-details";
import { type BridgeHandlers, bridgeHandlers, decodeBridgeRequest } from "./bridge-handlers";
import { type BudgetLimits, type BudgetReport, budgetNotice } from "./budget";
import { Creations } from "./creations";
import { Deliveries } from "./deliveries";
import { DeliveryJournal } from "./delivery-journal";
import { AgentDiffs } from "./diffs";
import { Discovery, type DiscoveryOptions } from "./discovery/coordinator";
import { Environments } from "./environments";
import { HeapRelease } from "./heap-release";
import { ThreadFollowing } from "./following";
import { Pairing } from "./pairing";
import { PublishedViews } from "./published-views";
import { Registry } from "./registry";
import { OriginBoundSecrets, type SecretStore } from "./secrets";
import { FleetSettingsControl } from "./settings";
import type { SupervisorTiming } from "./supervisor";
import type { RpcSocketOptions } from "./t3/rpc-socket";
import { WakeWatch, type WakeWatchOptions } from "./wake-watch";

export { LOCAL_T3_URL } from "./pairing";

/** The viewer of requests that name none (tests, scripts): one UI. */
export const DEFAULT_VIEWER = "default";

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
  /** A starting agent counts as stuck after this long (tests shorten it). */
  stuckAfterMs?: number;
  /** How long the row of an agent that left its server stays, shown ended (shared/fleet/model.ts; tests shorten it). */
  leftRowsKeptMs?: number;
  /** How long a send waits for a connecting environment's first synchronized snapshot (deliveries.ts); tests shorten it. */
  connectingWaitMs?: number;
  /** What one machine may hold in the fleet (budget.ts); tests lower it. */
  budget?: BudgetLimits;
  now?: () => number;
  /** False: contact no server until `connectAll()` (the headless shell listens first, so a taken port costs no T3 session). */
  connectOnStart?: boolean;
  /** Where Find machines looks (the t3 and ssh commands, T3's base directory, probe bounds). */
  discovery?: DiscoveryOptions;
  /** The clocks and interval of the sleep and stall watch (wake-watch.ts); tests inject them. */
  wakeWatch?: Partial<WakeWatchOptions>;
}

export interface FleetServiceEvents {
  event: [BridgeEvent];
  /** A viewer opened an agent (its answer is the whole detail): that viewer's feed drops the deltas waiting for it (shared/bridge/paced-feed.ts). */
  opened: [key: string, viewer: string];
}

export class FleetService extends EventEmitter<FleetServiceEvents> {
  readonly model: FleetModel;
  private readonly policy: NotificationPolicy;
  private readonly environments: Environments;
  private readonly pairing: Pairing;
  private readonly details: AgentDetails;
  private readonly deliveries: Deliveries;
  private readonly creations: Creations;
  private readonly following: ThreadFollowing;
  private readonly acknowledgements: Acknowledgements;
  private readonly snoozes: Snoozes;
  private readonly reviews: Reviews;
  private readonly settings: FleetSettingsControl;
  private readonly handlers: BridgeHandlers;
  /** What the handlers use, kept here too so the soak's resource report reaches it (electron/serve/holdings.ts). */
  private readonly handlerDeps: Parameters<typeof bridgeHandlers>[0];
  private readonly published: PublishedViews;
  private stallTimer: NodeJS.Timeout | undefined;
  /** When the armed stall check fires (ms since epoch). */
  private stallDueAt = Number.POSITIVE_INFINITY;
  /** Gives back what a burst of snapshots used once it is over (heap-release.ts). */
  private readonly heapRelease = new HeapRelease();
  /** Notices a sleep or a stalled event loop where no shell says so (wake-watch.ts). */
  private readonly wakeWatch: WakeWatch;
  private readonly now: () => number;
  private readonly notices: string[];

  private constructor(
    registry: Registry,
    private readonly journal: DeliveryJournal,
    options: FleetServiceOptions,
    problems: string[],
  ) {
    super();
    this.setMaxListeners(0);
    this.now = options.now ?? Date.now;
    this.notices = [...problems, ...(options.notices ?? [])];
    const publish = (event: BridgeEvent) => this.emit("event", event);
    this.model = new FleetModel({
      stalledAfterMs: registry.settings.stalledAfterMs,
      ...(options.stuckAfterMs !== undefined && { stuckAfterMs: options.stuckAfterMs }),
      ...(options.leftRowsKeptMs !== undefined && { leftRowsKeptMs: options.leftRowsKeptMs }),
      now: this.now,
      // Quiet is measured on the monotonic clock, which stands still while the computer sleeps; a
      // test that moves `now` alone moves both.
      watchedNow: options.wakeWatch?.monotonicNow ?? (options.now ? options.now : () => performance.now()),
    });
    this.policy = new NotificationPolicy(registry.settings.notifications, registry.settings.contextWarningPercent, this.now);
    const secrets = new OriginBoundSecrets(options.secrets, (environmentId) => registry.get(environmentId)?.baseUrl);
    this.environments = new Environments({
      model: this.model,
      registry,
      secrets,
      ...(options.timing && { timing: options.timing }),
      ...(options.socket && { socket: options.socket }),
      ...(options.streamLagMs !== undefined && { streamLagMs: options.streamLagMs }),
      onThreadChange: (environmentId, threadId, detail) => this.onThreadChange(environmentId, threadId, detail),
      now: this.now,
      ...(options.budget && { budget: options.budget }),
      onOverBudget: (environmentId, report) => this.overBudget(environmentId, report),
      onFleetSnapshot: () => this.heapRelease.snapshotApplied(),
    });
    this.pairing = new Pairing({ environments: this.environments, registry, secrets, now: this.now });
    this.details = new AgentDetails(this.environments, publish, (key, viewer) => this.emit("opened", key, viewer));
    this.following = new ThreadFollowing(this.environments);
    this.acknowledgements = new Acknowledgements(this.model, registry, this.environments);
    this.snoozes = new Snoozes(this.model, this.environments, registry, this.now);
    this.reviews = new Reviews(this.model, registry);
    this.settings = new FleetSettingsControl(registry, this.policy, this.model, publish, () => {
      // A shorter quiet time takes effect at once: the pending check may be later than the new deadline.
      clearTimeout(this.stallTimer);
      this.stallTimer = undefined;
      this.scheduleStallCheck();
    });
    this.deliveries = new Deliveries({
      model: this.model,
      intent: (key, preferred) => this.intent(key, preferred),
      runtime: (environmentId) => this.environments.get(environmentId),
      publish: (delivery) => publish({ type: "delivery", delivery }),
      now: this.now,
      journal,
      ...(options.connectingWaitMs !== undefined && { connectingWaitMs: options.connectingWaitMs }),
    });
    this.creations = new Creations({
      model: this.model,
      runtime: (environmentId) => this.environments.get(environmentId),
      publish: (creation) => publish({ type: "creation", creation }),
      now: this.now,
      journal,
    });
    this.handlerDeps = {
      model: this.model,
      environments: this.environments,
      pairing: this.pairing,
      details: this.details,
      deliveries: this.deliveries,
      creations: this.creations,
      acknowledgements: this.acknowledgements,
      snoozes: this.snoozes,
      reviews: this.reviews,
      handled: new HandledLog(this.model, (entry) => publish({ type: "handled", entry }), this.now),
      settings: this.settings,
      discovery: new Discovery(
        {
          pair: (link, label) => this.pairing.confirm(link, undefined, label),
          isPaired: (environmentId) => this.environments.has(environmentId),
          now: this.now,
        },
        options.discovery,
      ),
      openExternal: options.openExternal,
      diffs: new AgentDiffs({ model: this.model, session: (environmentId) => this.environments.get(environmentId)?.supervisor.activeConnection }),
    };
    this.handlers = bridgeHandlers(this.handlerDeps);
    this.published = new PublishedViews((change) => this.emit("event", { type: "fleet.delta", ...change }));
    // The clocks say the fleet could not watch for a while: every connection is re-verified. The
    // re-check takes each machine out of "online", so what its agents did meanwhile arrives as found
    // state, summarized once when it is back (shared/fleet/notifications.ts); nothing notified
    // before is notified again.
    this.wakeWatch = new WakeWatch(() => this.recheckAll(), options.wakeWatch);
    this.wakeWatch.start();
    this.model.subscribe((change) => this.onModelChange(change));
  }

  static async start(options: FleetServiceOptions): Promise<FleetService> {
    const { registry, problems } = await Registry.open(options.dataDir);
    const journal = await DeliveryJournal.open(options.dataDir);
    const service = new FleetService(registry, journal.journal, options, [...problems, ...journal.problems]);
    service.deliveries.restore(journal.restored);
    service.creations.restore(journal.journal.restoredCreations);
    if (options.connectOnStart !== false) service.connectAll();
    return service;
  }

  /** Starts every paired environment's connection (after `start` with `connectOnStart: false`). */
  connectAll(): void {
    this.environments.startAll();
    // Messages from before a restart are checked against their threads once these are in sync.
    this.deliveries.followRestored();
    this.creations.followRestored();
  }

  async stop(): Promise<void> {
    clearTimeout(this.stallTimer);
    this.wakeWatch.stop();
    this.heapRelease.stop();
    this.published.stop();
    this.following.stop();
    this.details.stop();
    this.environments.stopAll();
    await this.deliveries.flush();
    // What settles later (dispatches cut short by the stop) is not written: another process may own the folder by then.
    this.journal.halt();
  }

  /** After system wake (the shell's event, or the clock watch): re-check every connection before trusting it. */
  recheckAll(): void {
    this.environments.recheckAll();
  }

  snapshot(): FleetSnapshot {
    return {
      environments: this.model.environments(),
      agents: [...this.model.agents()],
      deliveries: this.deliveries.all(),
      creations: this.creations.all(),
      settings: this.settings.view(),
      notices: [...this.notices],
    };
  }

  /** The bridge edge: decodes untrusted params, runs the request, maps failures to clear errors. */
  async request(method: string, params: unknown, viewer: string = DEFAULT_VIEWER): Promise<unknown> {
    const request = decodeBridgeRequest(method, params);
    const handler = this.handlers[request.method] as (params: unknown, viewer: string) => Promise<unknown> | unknown;
    return handler(request.params, viewer);
  }

  /** A UI left (a page reloaded, a tab or window closed): what it had open is no longer followed for it. */
  viewerLeft(viewer: string): void {
    this.details.viewerLeft(viewer);
  }

  intent(key: string, preferred?: RunningMessageMode): Intent {
    const [environmentId] = splitKey(key);
    return messageIntent(this.model.agent(key), this.model.environment(environmentId), preferred);
  }

  detail(key: string): AgentDetail {
    return this.details.detail(key);
  }

  creation(creationId: string): Creation | undefined {
    return this.creations.get(creationId);
  }

  delivery(commandId: string): Delivery | undefined {
    return this.deliveries.get(commandId);
  }

  // ------------------------------------------------------------------ model changes fan out

  private onModelChange(change: FleetChange): void {
    this.heapRelease.activity();
    this.published.changed(change);
    const paused = this.settings.notificationsPaused;
    for (const env of change.environments) {
      if (env.connection.phase === "online") this.deliveries.environmentConfirmed(env.environmentId);
      this.creations.environmentChanged(env);
      for (const notification of this.policy.environmentChanged(env)) if (!paused) this.emit("event", { type: "notification", notification });
    }
    for (const agent of change.agents) {
      this.following.agentChanged(agent);
      this.acknowledgements.agentChanged(agent);
      this.creations.agentChanged(agent);
      this.snoozes.agentChanged(agent);
      for (const notification of this.policy.agentChanged(agent)) if (!paused) this.emit("event", { type: "notification", notification });
      this.details.changed(agent.key);
    }
    for (const key of change.removed) {
      this.policy.forget(key);
      this.acknowledgements.removed(key);
      this.snoozes.removed(key);
      this.reviews.removed(key);
      this.following.agentRemoved(key);
      this.deliveries.agentRemoved(...splitKey(key));
    }
    if (change.agents.length > 0) {
      // Something due sooner than the armed check (a run that stalls, a row that goes, while the check
      // waits, say, for a stuck start two minutes away) re-arms it, so it happens on time.
      let soonest = Number.POSITIVE_INFINITY;
      for (const agent of change.agents) soonest = Math.min(soonest, this.model.deadlineOf(agent.key) ?? soonest);
      if (this.stallTimer && soonest < this.stallDueAt) {
        clearTimeout(this.stallTimer);
        this.stallTimer = undefined;
      }
      this.scheduleStallCheck();
    }
  }

  /** A machine sent more than its budget (budget.ts): a notice now, and in every later snapshot. */
  private overBudget(environmentId: string, report: BudgetReport): void {
    const label = this.model.environment(environmentId)?.label ?? environmentId;
    const text = budgetNotice(label, report);
    const prefix = `${label} sent more than`;
    const index = this.notices.findIndex((notice) => notice.startsWith(prefix));
    if (index >= 0) this.notices.splice(index, 1);
    this.notices.push(text);
    const notification = {
      id: `${environmentId}//budget/${this.now()}`,
      reason: "summary" as const,
      environmentId,
      agentKey: null,
      title: `${label} is over T3 Fleet's budget`,
      body: text,
    };
    this.emit("event", { type: "notification", notification });
  }

  private onThreadChange(environmentId: string, threadId: string, detail: ThreadDetail): void {
    // First: a settling thread let go is no longer followed when the change below is published.
    this.following.threadChanged(environmentId, threadId, detail);
    this.model.setThreadDetail(environmentId, threadId, detail.facts);
    this.deliveries.threadChanged(environmentId, threadId, detail);
    this.creations.threadChanged(environmentId, threadId, detail);
    this.details.changed(agentKey(environmentId, threadId));
  }

  /** The stalled clock: wakes when the next running agent could turn stalled. */
  private scheduleStallCheck(): void {
    if (this.stallTimer) return;
    const next = this.model.checkStalls();
    if (next === null) return;
    this.stallDueAt = next;
    this.stallTimer = setTimeout(
      () => {
        this.stallTimer = undefined;
        this.scheduleStallCheck();
      },
      Math.max(0, next - this.now()) + 10,
    );
    this.stallTimer.unref?.();
  }
}
