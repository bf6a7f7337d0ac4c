// The soak's own connection to the fleet's bridge, made as the page makes it (the page's session
// secret as a subprotocol, the shell's Origin): it sends the user's requests and keeps the fleet's
// agents, environments, deliveries and notifications as the events tell them.
import WebSocket from "ws";
import { BRIDGE_SESSION_PROTOCOL_PREFIX, BRIDGE_SUBPROTOCOL, type BridgeEvent, type BridgeServerMessage } from "../../shared/bridge/contract";
import { applyRowPatch } from "../../shared/bridge/row-patch";
import type { Delivery } from "../../shared/fleet/delivery";
import type { NotificationIntent } from "../../shared/fleet/notifications";
import type { AgentView, EnvironmentView } from "../../shared/fleet/types";

export class BridgeRequestError extends Error {
  constructor(
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }
}

/** Notifications counted against the condition they announce: a repeat without the condition changing in between is one too many. */
export class NotificationLedger {
  total = 0;
  beyondOne = 0;
  readonly repeats: string[] = [];
  /** Per notification id: whose condition it announced, and that condition's signature then. */
  private readonly notified = new Map<string, { owner: string; signature: string }>();

  record(notification: NotificationIntent, owner: string, signature: string): void {
    this.total++;
    if (this.notified.get(notification.id)?.signature === signature) {
      this.beyondOne++;
      if (this.repeats.length < 10) this.repeats.push(`${notification.id} (${notification.title})`);
    }
    this.notified.set(notification.id, { owner, signature });
  }

  /** An owner's condition that changed since: its next notification is a recurrence, not a repeat. */
  changed(owner: string, signature: string): void {
    for (const [id, last] of this.notified) if (last.owner === owner && last.signature !== signature) this.notified.delete(id);
  }
}

export class FleetState {
  readonly agents = new Map<string, AgentView>();
  readonly environments = new Map<string, EnvironmentView>();
  readonly deliveries = new Map<string, Delivery>();
  readonly notifications = new NotificationLedger();
  /** Every state each receipt was seen in, across restarts (to tell where a lost message went). */
  readonly history = new Map<string, string[]>();
  /** The service's notices, as each snapshot gave them (a journal it could not read says so here). */
  readonly notices = new Set<string>();
  snapshots = 0;
  /** Called after each event is applied: the truth oracle's check waits on these (bench/soak/truth.ts). */
  private readonly watchers = new Set<() => void>();

  onChange(watcher: () => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  apply(event: BridgeEvent): void {
    this.applyEvent(event);
    for (const watcher of [...this.watchers]) watcher();
  }

  private applyEvent(event: BridgeEvent): void {
    switch (event.type) {
      case "fleet.snapshot":
        this.snapshots++;
        this.agents.clear();
        this.environments.clear();
        for (const agent of event.snapshot.agents) this.putAgent(agent);
        for (const environment of event.snapshot.environments) this.putEnvironment(environment);
        // As the page does (renderer/src/state/slices/facts.ts): a snapshot's receipts replace the ones before.
        this.deliveries.clear();
        for (const delivery of event.snapshot.deliveries) this.putDelivery(delivery, `snapshot ${this.snapshots}`);
        for (const notice of event.snapshot.notices) this.notices.add(notice);
        return;
      case "fleet.delta":
        for (const agent of event.agents) this.putAgent(agent);
        for (const patch of event.patches ?? []) {
          const row = this.agents.get(patch.key);
          if (row) this.putAgent(applyRowPatch(row, patch));
        }
        for (const key of event.removed) this.agents.delete(key);
        for (const environment of event.environments) this.putEnvironment(environment);
        for (const id of event.removedEnvironments) this.environments.delete(id);
        return;
      case "delivery":
        this.putDelivery(event.delivery, "event");
        return;
      case "notification": {
        const { notification } = event;
        const owner = notification.agentKey ?? `environment:${notification.environmentId}`;
        this.notifications.record(notification, owner, this.signatureOf(notification));
        return;
      }
      default:
        return;
    }
  }

  private signatureOf(notification: NotificationIntent): string {
    if (notification.agentKey) {
      const agent = this.agents.get(notification.agentKey);
      return agent ? agentSignature(agent) : "unknown";
    }
    const environment = this.environments.get(notification.environmentId);
    return environment ? environmentSignature(environment) : "unknown";
  }

  private putDelivery(delivery: Delivery, how: string): void {
    this.deliveries.set(delivery.commandId, delivery);
    const seen = this.history.get(delivery.commandId) ?? [];
    const entry = `${delivery.state} (${how})`;
    if (seen.at(-1) !== entry) seen.push(entry);
    this.history.set(delivery.commandId, seen.slice(-12));
  }

  private putAgent(agent: AgentView): void {
    this.agents.set(agent.key, agent);
    this.notifications.changed(agent.key, agentSignature(agent));
  }

  private putEnvironment(environment: EnvironmentView): void {
    this.environments.set(environment.environmentId, environment);
    this.notifications.changed(`environment:${environment.environmentId}`, environmentSignature(environment));
  }
}

/** An agent's condition as notifications follow it: its status and what it waits for. */
function agentSignature(agent: AgentView): string {
  return `${agent.status}|${agent.pending.map((request) => request.requestId).join(",")}`;
}

function environmentSignature(environment: EnvironmentView): string {
  return environment.connection.phase;
}

export class SoakBridge {
  private ws: WebSocket | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  readonly state = new FleetState();
  private snapshotWaiters: (() => void)[] = [];

  /** Connects with the page's session; resolves once the first snapshot has arrived. */
  async connect(origin: string, session: string): Promise<void> {
    this.close();
    const url = `${origin.replace(/^http/, "ws")}/bridge`;
    const ws = new WebSocket(url, [BRIDGE_SUBPROTOCOL, `${BRIDGE_SESSION_PROTOCOL_PREFIX}${session}`], { origin, maxPayload: 256 * 1024 * 1024 });
    this.ws = ws;
    const snapshotsBefore = this.state.snapshots;
    ws.on("message", (data) => this.onMessage(String(data)));
    ws.on("close", () => this.failPending(ws, "The bridge closed before the answer came."));
    ws.on("error", () => undefined);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no snapshot from the bridge in 60 s")), 60_000);
      ws.once("close", (code) => {
        clearTimeout(timer);
        reject(new Error(`bridge closed (${code}) before its snapshot`));
      });
      const check = () => {
        if (this.state.snapshots > snapshotsBefore) {
          clearTimeout(timer);
          resolve();
        } else this.snapshotWaiters.push(check);
      };
      check();
    });
  }

  get open(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  request(method: string, params: unknown): Promise<unknown> {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return Promise.reject(new BridgeRequestError("disconnected", "The bridge is not connected."));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ type: "request", id, method, params }));
    });
  }

  close(): void {
    const ws = this.ws;
    this.ws = undefined;
    if (ws) {
      this.failPending(ws, "The bridge was closed.");
      ws.terminate();
    }
  }

  private failPending(ws: WebSocket, message: string): void {
    if (this.ws !== ws && this.ws !== undefined) return;
    for (const [id, waiter] of this.pending) {
      this.pending.delete(id);
      waiter.reject(new BridgeRequestError("disconnected", message));
    }
  }

  private onMessage(text: string): void {
    const message = JSON.parse(text) as BridgeServerMessage;
    if (message.type === "event") {
      this.state.apply(message.event);
      if (message.event.type === "fleet.snapshot") {
        const waiters = this.snapshotWaiters;
        this.snapshotWaiters = [];
        for (const waiter of waiters) waiter();
      }
      return;
    }
    if (message.type === "events") {
      // A paced batch (shared/bridge/paced-feed.ts): applied, then acknowledged as the page does once it painted it.
      for (const event of message.events) this.state.apply(event);
      if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: "ack", seq: message.seq }));
      return;
    }
    const waiter = this.pending.get(message.id);
    if (!waiter) return;
    this.pending.delete(message.id);
    if (message.ok) waiter.resolve(message.result);
    else waiter.reject(new BridgeRequestError(message.error.kind, message.error.message));
  }
}
