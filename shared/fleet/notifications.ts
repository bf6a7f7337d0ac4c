// Notification policy, pure: which fleet changes notify. One notification per
// (environment, thread, reason, request id); states present at start-up or found on reconnect are
// summarized once instead of replayed as a burst; mutes and per-event toggles apply.
import { notificationText } from "../t3/text";
import { contextPercent, DEFAULT_CONTEXT_WARNING_PERCENT, nearContextLimit } from "./changes-usage";
import { notificationOwner, SentNotifications } from "./sent-notifications";
import { failedSubagents, subagentName } from "./subagents";
import type { AgentStatus, AgentView, ConnectionPhase, EnvironmentView } from "./types";
import { stalledWords } from "./words";

export interface NotificationSettings {
  needsApproval: boolean;
  needsInput: boolean;
  failed: boolean;
  /** A running agent has had no activity for the stall time (Settings). */
  stalled: boolean;
  /** The provider holds a running agent up (e.g. waiting for capacity). */
  heldUp: boolean;
  /** An agent that will not compact reaches the near-limit context fill (Settings). */
  contextFull: boolean;
  hostOffline: boolean;
}

export const DEFAULT_NOTIFICATION_SETTINGS: NotificationSettings = {
  needsApproval: true,
  needsInput: true,
  failed: true,
  stalled: true,
  heldUp: true,
  contextFull: true,
  hostOffline: true,
};

/**
 * `context-full`: an agent near its context limit (the near-limit setting) that will not compact;
 * `subagent-failed`: one of its native subagents failed (the `failed` toggle).
 */
export type NotificationReason =
  "needs-approval" | "needs-input" | "failed" | "subagent-failed" | "stalled" | "held-up" | "offline" | "unauthorized" | "summary" | "context-full";

export interface NotificationIntent {
  /** The dedupe key: environment, thread, reason, request id. */
  id: string;
  reason: NotificationReason;
  environmentId: string;
  /** The agent a click opens; null for environment-level notices. */
  agentKey: string | null;
  title: string;
  body: string;
}

/** What an agent's notifications follow: its status, with a stalled or held-up run as its own condition. */
type AgentCondition = AgentStatus | "stalled" | "held-up";

const AGENT_REASONS: Partial<Record<AgentCondition, { reason: NotificationReason; toggle: keyof NotificationSettings; verb: string }>> = {
  "needs-approval": { reason: "needs-approval", toggle: "needsApproval", verb: "needs your approval" },
  "needs-input": { reason: "needs-input", toggle: "needsInput", verb: "is waiting for your answer" },
  failed: { reason: "failed", toggle: "failed", verb: "failed" },
  // Said with for how long nothing happened (stalledWords), never "for a while" (issue 40 point 4).
  stalled: { reason: "stalled", toggle: "stalled", verb: "has stalled" },
  "held-up": { reason: "held-up", toggle: "heldUp", verb: "is held up by its provider" },
};

/** The condition notifications follow, as last confirmed (an outage is not a change). */
function agentCondition(agent: Pick<AgentView, "lastKnownStatus" | "stalled" | "heldUp">): AgentCondition {
  if (agent.lastKnownStatus !== "running" || !agent.stalled) return agent.lastKnownStatus;
  return agent.heldUp ? "held-up" : "stalled";
}

/**
 * A machine that drops off again within this time after its last offline notification does not
 * notify again (a flapping host): its row keeps saying "offline · retrying" and when it was last seen.
 */
export const OFFLINE_QUIET_MS = 30 * 60_000;

interface EnvMemory {
  /** When the last offline notification's outage began (ms), for debouncing a flapping host. */
  lastOfflineNoticeAt: number | null;
  label: string;
  muted: boolean;
  online: boolean;
  unauthorized: boolean;
  /** True until the first online after start-up or a reconnect: changes then are a baseline. */
  baseline: boolean;
  /** When the current online period began (ms, the fleet's clock), or null while not online. */
  onlineSince: number | null;
  baselineNeedsYou: Set<string>;
}

export class NotificationPolicy {
  private readonly sent = new SentNotifications();
  private readonly envs = new Map<string, EnvMemory>();
  private readonly lastKnown = new Map<string, AgentCondition>();
  /**
   * Per agent: how often it has reached its context limit, and whether it is there now. Its own
   * condition beside the status: notified once each time it comes back after falling below.
   */
  private readonly contextFull = new Map<string, { near: boolean; occurrence: number }>();
  /** Per agent: the native subagents seen so far, by id, and whether each had failed then. */
  private readonly subagents = new Map<string, Map<string, boolean>>();

  constructor(
    private settings: NotificationSettings = DEFAULT_NOTIFICATION_SETTINGS,
    private contextWarningPercent = DEFAULT_CONTEXT_WARNING_PERCENT,
    /** The fleet's clock (the model's), for how long a stalled run has been quiet. */
    private readonly now: () => number = Date.now,
  ) {}

  updateSettings(settings: NotificationSettings, contextWarningPercent = this.contextWarningPercent): void {
    this.settings = settings;
    this.contextWarningPercent = contextWarningPercent;
  }

  /** Feed every environment change; returns what to show. */
  environmentChanged(env: EnvironmentView): NotificationIntent[] {
    const memory = this.memory(env);
    memory.label = env.label;
    memory.muted = env.muted;
    const wasOnline = memory.online;
    const online = env.connection.phase === "online";
    memory.online = online;
    if (online && !wasOnline) memory.onlineSince = Date.parse(env.connection.since);
    if (!online) memory.onlineSince = null;
    const wasUnauthorized = memory.unauthorized;
    memory.unauthorized = env.connection.phase === "unauthorized";
    const intents: NotificationIntent[] = [];
    if (online && memory.baseline) {
      memory.baseline = false;
      const count = memory.baselineNeedsYou.size;
      memory.baselineNeedsYou.clear();
      if (count > 0) {
        intents.push({
          id: `${env.environmentId}//summary/${env.connection.since}`,
          reason: "summary",
          environmentId: env.environmentId,
          agentKey: null,
          title: `${env.label}: ${count} agent${count === 1 ? " needs" : "s need"} you`,
          body: "Found when the connection was (re)established.",
        });
      }
    }
    if (wasOnline && !online) memory.baseline = true; // what arrives before the next online is found state, not news
    // "Pair again" is news however the machine got there: from online, or revoked while it was
    // offline or before the fleet started; "offline" only when it was online.
    if ((wasOnline && !online) || (memory.unauthorized && !wasUnauthorized)) {
      const reason = phaseReason(env.connection);
      if (reason && this.settings.hostOffline && !(reason === "offline" && this.flapping(memory, env.connection.since))) {
        intents.push({
          id: `${env.environmentId}//${reason}/${env.connection.since}`,
          reason,
          environmentId: env.environmentId,
          agentKey: null,
          title: reason === "unauthorized" ? `${env.label} needs pairing again` : `${env.label} is offline`,
          body: "error" in env.connection ? env.connection.error : "",
        });
      }
    }
    return this.filter(intents, memory);
  }

  /** Feed every changed agent view (after its environment's change). */
  agentChanged(agent: AgentView): NotificationIntent[] {
    return [...this.statusChanged(agent), ...this.contextChanged(agent), ...this.subagentsChanged(agent)];
  }

  /**
   * A native subagent that failed: once per subagent, naming it; a click opens its parent. The
   * parent's thread is read only while the fleet follows it, so a failure is news only when the
   * fleet saw that subagent before it failed, or first sees it failed at a time (the server's)
   * since its machine came online: one found after a restart or a reconnect is not news again.
   */
  private subagentsChanged(agent: AgentView): NotificationIntent[] {
    const memory = this.envs.get(agent.environmentId);
    const seen = this.subagents.get(agent.key) ?? new Map<string, boolean>();
    const before = new Map(seen);
    for (const subagent of agent.subagents) seen.set(subagent.id, subagent.status === "failed");
    if (seen.size > 0) this.subagents.set(agent.key, seen);
    if (!memory) return [];
    const intents: NotificationIntent[] = [];
    for (const subagent of failedSubagents(agent)) {
      if (before.get(subagent.id) === true) continue;
      const id = `${agent.environmentId}/${agent.threadId}/subagent-failed/${subagent.id}`;
      const failedAt = Date.parse(subagent.updatedAt);
      const watched = before.has(subagent.id) || (memory.onlineSince !== null && Number.isFinite(failedAt) && failedAt >= memory.onlineSince);
      if (memory.baseline || !watched || agent.lastKnownStatus === "deleted" || agent.lastKnownStatus === "ended") {
        this.sent.add(agent.key, id);
        continue;
      }
      if (!this.settings.failed) continue;
      intents.push({
        id,
        reason: "subagent-failed",
        environmentId: agent.environmentId,
        agentKey: agent.key,
        title: `${agent.title}: its subagent "${subagentName(subagent)}" failed`,
        body: [memory.label, subagent.reason].filter(Boolean).join(" · "),
      });
    }
    return this.filter(intents, memory);
  }

  private statusChanged(agent: AgentView): NotificationIntent[] {
    const memory = this.envs.get(agent.environmentId);
    const condition = agentCondition(agent);
    const previous = this.lastKnown.get(agent.key);
    this.lastKnown.set(agent.key, condition);
    if (!memory || previous === condition) return [];
    const rule = AGENT_REASONS[condition];
    if (memory.baseline || previous === undefined) {
      if (rule) memory.baselineNeedsYou.add(agent.key);
      else memory.baselineNeedsYou.delete(agent.key);
      if (rule) this.sent.add(agent.key, this.keyFor(agent, rule.reason)); // found, not news: never replayed later
      return [];
    }
    if (!rule || !this.settings[rule.toggle]) return [];
    const intent: NotificationIntent = {
      id: this.keyFor(agent, rule.reason),
      reason: rule.reason,
      environmentId: agent.environmentId,
      agentKey: agent.key,
      // "has stalled: no activity for 5 min" (its reason, where the provider gave one, is in the body).
      title: condition === "stalled" ? `${agent.title} has ${stalledWords({ ...agent, reason: null }, this.now())}` : `${agent.title} ${rule.verb}`,
      body: [memory.label, agent.parentThreadId ? "child agent" : null, agent.reason].filter(Boolean).join(" · "),
    };
    return this.filter([intent], memory);
  }

  /** Near the context limit without compaction: once when it gets there, again only after it fell below and came back. */
  private contextChanged(agent: AgentView): NotificationIntent[] {
    const memory = this.envs.get(agent.environmentId);
    const near = nearContextLimit(agent, this.contextWarningPercent);
    const previous = this.contextFull.get(agent.key);
    const occurrence = (previous?.occurrence ?? 0) + (near && !previous?.near ? 1 : 0);
    this.contextFull.set(agent.key, { near, occurrence });
    if (!memory || !near || previous?.near) return [];
    const id = `${agent.environmentId}/${agent.threadId}/context-full/${occurrence}`;
    // Found at start-up or on reconnect: the agent's own look says it; not news.
    if (memory.baseline || previous === undefined) {
      this.sent.add(agent.key, id);
      return [];
    }
    if (!this.settings.contextFull) return [];
    const intent: NotificationIntent = {
      id,
      reason: "context-full",
      environmentId: agent.environmentId,
      agentKey: agent.key,
      title: `${agent.title} is near its context limit`,
      body: `${memory.label}: its context is ${contextPercent(agent.usage)} % full and its provider will not compact it. Start a new thread, or compact it in T3.`,
    };
    return this.filter([intent], memory);
  }

  /** Another outage soon after the last one notified: the host flaps; the row says it, a notification does not. */
  private flapping(memory: EnvMemory, since: string): boolean {
    const at = Date.parse(since);
    if (!Number.isFinite(at)) return false;
    const last = memory.lastOfflineNoticeAt;
    if (last !== null && at - last < OFFLINE_QUIET_MS) return true;
    memory.lastOfflineNoticeAt = at;
    return false;
  }

  forget(agentKey: string): void {
    this.lastKnown.delete(agentKey);
    this.contextFull.delete(agentKey);
    this.subagents.delete(agentKey);
    this.sent.forget(agentKey);
  }

  /** Notification ids kept, in all (bounded per agent and machine: ./sent-notifications.ts). */
  get sentKept(): number {
    return this.sent.size;
  }

  private keyFor(agent: AgentView, reason: NotificationReason): string {
    const requestId = agent.pending.find((request) => (reason === "needs-approval" ? request.kind === "approval" : request.kind === "input"))?.requestId ?? "";
    // A failure per turn; a stall or a hold-up once per run (at most once per condition, however often it comes back).
    const turn = reason === "failed" ? (agent.activeRunId ?? agent.updatedAt) : reason === "stalled" || reason === "held-up" ? (agent.activeRunId ?? "") : "";
    return `${agent.environmentId}/${agent.threadId}/${reason}/${requestId || turn}`;
  }

  private filter(intents: NotificationIntent[], memory: EnvMemory): NotificationIntent[] {
    return (
      intents
        .filter((intent) => {
          if (this.sent.has(notificationOwner(intent), intent.id)) return false;
          this.sent.add(notificationOwner(intent), intent.id);
          return !memory.muted;
        })
        // Titles and bodies carry server text (labels, titles, reasons) and go to the OS: plain text only.
        .map((intent) => ({ ...intent, title: notificationText(intent.title, 256), body: notificationText(intent.body, 1_024) }))
    );
  }

  private memory(env: EnvironmentView): EnvMemory {
    let memory = this.envs.get(env.environmentId);
    if (!memory) {
      memory = {
        lastOfflineNoticeAt: null,
        label: env.label,
        muted: env.muted,
        online: false,
        unauthorized: false,
        baseline: true,
        onlineSince: null,
        baselineNeedsYou: new Set(),
      };
      this.envs.set(env.environmentId, memory);
    }
    return memory;
  }
}

function phaseReason(phase: ConnectionPhase): "offline" | "unauthorized" | null {
  if (phase.phase === "unauthorized") return "unauthorized";
  if (phase.phase === "offline" || phase.phase === "backoff") return "offline";
  return null;
}

// ------------------------------------------------------------------ notices in a window
// A window shows at most one notice per condition (an agent's approval, question or failure; a
// machine's connection), updates it in place when the service says more, and withdraws it when
// the condition clears. The browser's Notification API follows the same rules.

/** The condition a notification is about: later notifications about it replace earlier ones. */
export function noticeCondition(intent: NotificationIntent): string {
  if (intent.agentKey) return `agent:${intent.agentKey}:${intent.reason}`;
  const kind = intent.reason === "offline" || intent.reason === "unauthorized" ? "connection" : intent.reason;
  return `environment:${intent.environmentId}:${kind}`;
}

/** Critical notices stay until their condition clears or the user dismisses them; the rest go by themselves. */
export function noticeIsCritical(reason: NotificationReason): boolean {
  return reason === "needs-approval" || reason === "needs-input" || reason === "failed" || reason === "subagent-failed" || reason === "unauthorized";
}

/** How long a non-critical notice stays on screen. */
export const TRANSIENT_NOTICE_MS = 8_000;

/** Whether what a notice says is still true of the fleet. */
export function noticeStillHolds(intent: NotificationIntent, agent: AgentView | undefined, env: EnvironmentView | undefined): boolean {
  if (!env) return false;
  switch (intent.reason) {
    case "needs-approval":
    case "needs-input":
      return agent?.lastKnownStatus === intent.reason;
    case "failed":
      return agent?.lastKnownStatus === "failed" && !agent.acknowledged;
    case "subagent-failed":
      return agent !== undefined && failedSubagents(agent).length > 0 && !agent.acknowledged;
    case "stalled":
    case "held-up":
      return agent !== undefined && agentCondition(agent) === intent.reason && !agent.acknowledged;
    case "offline":
      return env.connection.phase !== "online" && env.connection.phase !== "unauthorized";
    case "unauthorized":
      return env.connection.phase === "unauthorized";
    case "summary":
    case "context-full":
      return true;
  }
}
