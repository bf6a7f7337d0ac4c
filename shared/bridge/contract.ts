// The one typed contract between the fleet service and any UI (Electron preload or the headless
// WebSocket). Requests are decoded with these schemas at the service edge; events are typed data.
import { z } from "zod";
import type { Delivery } from "../fleet/delivery";
import type { NotificationIntent, NotificationSettings } from "../fleet/notifications";
import type { TranscriptItem } from "../fleet/facts";
import type { AgentView, EnvironmentView } from "../fleet/types";

const Key = z.string().min(3).max(2_000);
const EnvironmentId = z.string().min(1).max(500);

export const BridgeRequests = {
  /** Reads a pairing link or host without using its token: who would we pair with? */
  "pair.inspect": z.object({ input: z.string().max(4_000) }),
  /** Pairs: a pairing link (token inside), or a host plus a pairing code or bearer token. */
  "pair.confirm": z.object({ input: z.string().max(4_000), token: z.string().max(4_000).optional(), label: z.string().max(200).optional() }),
  /** Whether a T3 server answers on this machine's default port. */
  "pair.probeLocal": z.object({}),
  "environment.remove": z.object({ environmentId: EnvironmentId }),
  "environment.rename": z.object({ environmentId: EnvironmentId, label: z.string().trim().min(1).max(200) }),
  "environment.mute": z.object({ environmentId: EnvironmentId, muted: z.boolean() }),
  "environment.retry": z.object({ environmentId: EnvironmentId }),
  "agent.open": z.object({ key: Key }),
  "agent.close": z.object({ key: Key }),
  /** `expectedIntent` is what the composer showed (shared/fleet/delivery.ts); steer or queue is also the user's choice where both are offered. */
  "agent.send": z.object({ key: Key, text: z.string().min(1).max(120_000), expectedIntent: z.enum(["steer", "queue", "new-turn"]) }),
  "agent.respondApproval": z.object({ key: Key, requestId: z.string().min(1), decision: z.enum(["accept", "acceptForSession", "acceptAlways", "decline", "cancel"]) }),
  /** One answer per question id; several for a multi-select question. */
  "agent.respondInput": z.object({
    key: Key,
    requestId: z.string().min(1),
    answers: z.record(z.string(), z.union([z.string().max(20_000), z.array(z.string().max(20_000)).max(100)])),
  }),
  "agent.interrupt": z.object({ key: Key }),
  "agent.stop": z.object({ key: Key }),
  "delivery.recheck": z.object({ commandId: z.string().min(1) }),
  "settings.update": z.object({
    notifications: z.object({ needsApproval: z.boolean(), needsInput: z.boolean(), failed: z.boolean(), hostOffline: z.boolean() }).partial().optional(),
    notificationsPaused: z.boolean().optional(),
    stalledAfterMs: z.number().int().min(10_000).max(24 * 3_600_000).optional(),
  }),
  /** Opens a link from thread content in the system browser: only parsed http(s) URLs. */
  "link.open": z.object({ url: z.string().max(8_000) }),
} as const;

export type BridgeMethod = keyof typeof BridgeRequests;
export type BridgeParams<M extends BridgeMethod> = z.input<(typeof BridgeRequests)[M]>;
export type BridgeParamsOut<M extends BridgeMethod> = z.output<(typeof BridgeRequests)[M]>;

export interface PairPreview {
  baseUrl: string;
  environmentId: string;
  label: string;
  serverVersion: string;
  generation: "fork" | "upstream";
  hasToken: boolean;
  /** Already paired under this environmentId (pairing again updates it). */
  alreadyPaired: boolean;
}

export interface FleetSettingsView {
  notifications: NotificationSettings;
  notificationsPaused: boolean;
  stalledAfterMs: number;
}

export interface AgentDetail {
  key: string;
  /** The transcript as neutral items (messages, commands, file changes, errors, other activity), in order. */
  items: TranscriptItem[];
  /** False until the thread stream delivered its snapshot. */
  loaded: boolean;
  error: string | null;
}

export interface BridgeResults {
  "pair.inspect": PairPreview;
  "pair.confirm": { environmentId: string; label: string; readOnly: boolean };
  "pair.probeLocal": { baseUrl: string; label: string; environmentId: string; alreadyPaired: boolean } | null;
  "environment.remove": null;
  "environment.rename": null;
  "environment.mute": null;
  "environment.retry": null;
  "agent.open": AgentDetail;
  "agent.close": null;
  "agent.send": Delivery;
  "agent.respondApproval": Delivery;
  "agent.respondInput": Delivery;
  "agent.interrupt": Delivery;
  "agent.stop": Delivery;
  "delivery.recheck": Delivery;
  "settings.update": FleetSettingsView;
  "link.open": null;
}

export interface FleetSnapshot {
  environments: EnvironmentView[];
  agents: AgentView[];
  deliveries: Delivery[];
  settings: FleetSettingsView;
  /** Problems the service wants the user to know (corrupt registry, no keychain). */
  notices: string[];
}

export type BridgeEvent =
  | { type: "fleet.snapshot"; snapshot: FleetSnapshot }
  | { type: "fleet.delta"; agents: AgentView[]; removed: string[]; environments: EnvironmentView[]; removedEnvironments: string[] }
  | { type: "agent.detail"; detail: AgentDetail }
  | { type: "delivery"; delivery: Delivery }
  | { type: "notification"; notification: NotificationIntent }
  | { type: "settings"; settings: FleetSettingsView }
  /** The shell asks the UI to open an agent (a notification or tray item was clicked). */
  | { type: "ui.openAgent"; key: string }
  /** The shell asks the UI to show the pairing dialog (tray menu). */
  | { type: "ui.openPairing" };

/** Wire messages of the headless bridge (one JSON object per WebSocket text frame). */
export const BridgeClientMessage = z.object({
  type: z.literal("request"),
  id: z.number().int().nonnegative(),
  method: z.string(),
  params: z.unknown(),
});
export type BridgeClientMessage = z.infer<typeof BridgeClientMessage>;

export type BridgeServerMessage =
  | { type: "response"; id: number; ok: true; result: unknown }
  | { type: "response"; id: number; ok: false; error: { kind: string; message: string } }
  | { type: "event"; event: BridgeEvent };

export function isBridgeMethod(method: string): method is BridgeMethod {
  return Object.hasOwn(BridgeRequests, method);
}

/** Parses a link from untrusted content; only http(s) URLs may be opened (design §6). */
export function safeExternalUrl(raw: string): string | null {
  if (!URL.canParse(raw)) return null;
  const url = new URL(raw);
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  if (url.username || url.password) return null;
  return url.href;
}
