// The one typed contract between the fleet service and any UI (Electron preload or the headless
// WebSocket). Requests are decoded with these schemas at the service edge; events are typed data.
import { z } from "zod";
import { ACTION_BY_ID, ACTION_IDS, type ActionId } from "../fleet/action-registry";
import { CREATE_RUNTIME_MODES, type CreateChoices, type Creation, FOLDER_MAX_CHARS } from "../fleet/creation";
import type { Delivery } from "../fleet/delivery";
import type { HandledEntry } from "../fleet/handled";
import type { NotificationIntent, NotificationSettings } from "../fleet/notifications";
import type { ChangedFile, TranscriptItem } from "../fleet/facts";
import type { AgentView, EnvironmentView } from "../fleet/types";
import type { AgentPatch } from "./row-patch";
import { cleanLabel } from "../t3/text";

/** Input limits the bridge schemas enforce and the UI shows as counters (issue 9: sane lengths). */
export const INPUT_LIMITS = {
  /** A message to an agent, in characters. */
  messageText: 100_000,
  /** A pairing link, host or connection string. */
  pairingInput: 4_000,
  /** A pairing code or bearer token typed beside a host. */
  pairingToken: 4_000,
  /** A machine's label (rename, pairing). */
  label: 200,
  /** One answer to an agent's question. */
  answer: 20_000,
  /** How many answers one question form may carry. */
  answerCount: 50,
  /** How many choices one multi-select answer may carry. */
  answerChoices: 100,
  /** A link from thread content handed to the system browser. */
  linkUrl: 8_000,
  /** Ids the UI echoes back (request, command, environment ids). */
  id: 500,
} as const;

/**
 * Largest bridge frame either side accepts, in UTF-8 bytes: the headless shell closes a socket that
 * sends more (close code 1009) and the page checks before sending. Fits a maximal message even when
 * JSON escapes every character (6 bytes each).
 */
export const MAX_BRIDGE_FRAME_BYTES = 1024 * 1024;

/** WebSocket subprotocol of the headless bridge; the page also offers its session secret as a second one. */
export const BRIDGE_SUBPROTOCOL = "t3fleet.bridge.v1";
/** Prefix of the subprotocol that carries the page's session secret (base64url, so a valid token). */
export const BRIDGE_SESSION_PROTOCOL_PREFIX = "t3fleet.session.";
/** Close code of a bridge socket whose session is unknown (spent link, or the shell restarted). */
export const BRIDGE_CLOSE_UNAUTHORIZED = 4401;
/** Close code of a bridge socket that sent a frame that is not a bridge request. */
export const BRIDGE_CLOSE_MALFORMED = 4400;

const Key = z.string().min(3).max(2_000);
const EnvironmentId = z.string().min(1).max(INPUT_LIMITS.id);
const Id = z.string().min(1).max(INPUT_LIMITS.id);
/**
 * A name the user types (a machine's label): cleaned and capped as a server's label is
 * (shared/t3/text.ts cleanLabel), so no escape, control or bidi character is stored or shown.
 */
const Label = z.string().max(INPUT_LIMITS.label).transform(cleanLabel);
/** A label that must name something: nothing visible left after cleaning is refused. */
const VisibleLabel = Label.pipe(z.string().min(1, "A name needs at least one visible character."));

// ---------------------------------------------------------------- discovery (Find machines)

/** An ssh destination as the user types it (`host`, `user@host`, an ~/.ssh/config alias): never an option. */
export const SshDestination = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .regex(/^(?!-)[A-Za-z0-9._@%:[\]-]+$/, "An ssh host is a name, user@name or an address, without spaces or a leading dash.");

const DiscoveryRequests = {
  /**
   * Looks for T3 servers: this machine, online Tailscale peers, and the ssh hosts named here, on
   * T3's default port and the extra ports given. A repeat of the same scan within a few minutes
   * answers from the last one; `refresh` is ignored until then.
   */
  "discovery.scan": z.object({
    ports: z.array(z.number().int().min(1).max(65_535)).max(8).default([]),
    sshHosts: z.array(SshDestination).max(20).default([]),
    refresh: z.boolean().default(false),
  }),
  /** Pairs a server the last scan found: mints a pairing code with T3's own CLI (locally or over ssh). */
  "discovery.pair": z.object({
    id: z.string().min(1).max(INPUT_LIMITS.id),
    label: Label.optional(),
    /** The user's go-ahead to send the pairing code and token over plain HTTP where the found server's `plainHttp` says why that is a risk. */
    plainHttp: z.boolean().optional(),
  }),
} as const;

/** One T3 server (or a host that should have been one) a discovery source found. */
export interface FoundServer {
  /** Stable within a scan; `discovery.pair` takes it. */
  id: string;
  source: "local" | "tailscale" | "ssh";
  /** What the source calls the machine: "this machine", the Tailscale DNS name, the ssh host. */
  name: string;
  /** The address T3 Fleet would connect to. */
  baseUrl: string;
  /** From the server's descriptor when it answered as T3. */
  label: string | null;
  serverVersion: string | null;
  protocol: number | null;
  environmentId: string | null;
  alreadyPaired: boolean;
  /** How a pairing code is minted: T3's CLI on this machine, or over the user's ssh; null when it cannot be paired. */
  pairVia: "t3-cli" | "ssh" | null;
  /** Why it cannot be paired (or what was seen instead of T3); null when it can. */
  reason: string | null;
  /**
   * Why pairing would send the pairing code and the token over plain HTTP that others may read (a
   * LAN address, or an ssh proxy that makes the address uncertain); it pairs only once the user says
   * so. Null on loopback and the tailnet.
   */
  plainHttp: string | null;
}

export interface DiscoveryReport {
  scannedAt: number;
  /** Before this, the same scan answers from this report. */
  nextScanAt: number;
  servers: FoundServer[];
  /** One line per source that could not look (no `tailscale` CLI, Tailscale stopped, …). */
  notes: string[];
  /** Concrete `Host` names from ~/.ssh/config, offered to pick from. */
  sshConfigHosts: string[];
}

export const BridgeRequests = {
  /** Reads a pairing link or host without using its token: who would we pair with? */
  "pair.inspect": z.object({ input: z.string().max(INPUT_LIMITS.pairingInput) }),
  /** Pairs: a pairing link (token inside), or a host plus a pairing code or bearer token. */
  "pair.confirm": z.object({
    input: z.string().max(INPUT_LIMITS.pairingInput),
    token: z.string().max(INPUT_LIMITS.pairingToken).optional(),
    label: Label.optional(),
    /** The user's answer when this environment is already paired at another address: the machine moved there. */
    moved: z.boolean().optional(),
  }),
  /** Whether a T3 server answers on this machine's default port. */
  "pair.probeLocal": z.object({}),
  "environment.remove": z.object({ environmentId: EnvironmentId }),
  "environment.rename": z.object({ environmentId: EnvironmentId, label: VisibleLabel }),
  "environment.mute": z.object({ environmentId: EnvironmentId, muted: z.boolean() }),
  "environment.retry": z.object({ environmentId: EnvironmentId }),
  "agent.open": z.object({ key: Key }),
  "agent.close": z.object({ key: Key }),
  /**
   * `expectedIntent` is what the composer showed (shared/fleet/delivery.ts); steer or queue is also the user's choice where both are offered.
   * `commandId`: the page's id for this message; a resend after a lost answer carries the same one and is the same send (never a second message).
   */
  "agent.send": z.object({
    key: Key,
    text: z.string().min(1).max(INPUT_LIMITS.messageText),
    expectedIntent: z.enum(["steer", "queue", "new-turn"]),
    commandId: z.uuid().optional(),
  }),
  "agent.respondApproval": z.object({ key: Key, requestId: Id, decision: z.enum(["accept", "acceptForSession", "acceptAlways", "decline", "cancel"]) }),
  /** One answer per question id; several for a multi-select question. */
  "agent.respondInput": z.object({
    key: Key,
    requestId: Id,
    answers: z
      .record(
        z.string().max(INPUT_LIMITS.id),
        z.union([z.string().max(INPUT_LIMITS.answer), z.array(z.string().max(INPUT_LIMITS.answer)).max(INPUT_LIMITS.answerChoices)]),
      )
      .refine((answers) => Object.keys(answers).length <= INPUT_LIMITS.answerCount, `At most ${INPUT_LIMITS.answerCount} answers.`),
  }),
  /** `holdQueued`: first cancel the runs T3 queued behind this turn and hold their messages in the fleet (so none starts next). */
  "agent.interrupt": z.object({ key: Key, holdQueued: z.boolean().optional() }),
  "agent.stop": z.object({ key: Key }),
  /** The user has seen this failure or stall: it leaves "need you", the tray and `n` until it changes. */
  "agent.acknowledge": z.object({ key: Key }),
  /** Brings an acknowledged agent back into "need you" (the undo of `agent.acknowledge`; unsettled in T3 too where it can). */
  "agent.unacknowledge": z.object({ key: Key }),
  /** The user reviewed the changes of the agent's latest turn: it leaves "need you" until a later turn changes files. */
  "agent.review": z.object({ key: Key }),
  /** The undo of `agent.review`: the turn marked reviewed goes back to what it was (`turnCount`, null: none). */
  "agent.unreview": z.object({ key: Key, turnCount: z.number().int().nonnegative().nullable() }),
  /**
   * Puts the agent aside until `until` in T3 itself where the server has snooze (else T3 Fleet keeps it);
   * null: until what it needs changes, which only T3 Fleet can keep (T3's snooze is time-based). What
   * T3 Fleet keeps is persisted by the service and carried by the agent's view (`fleetSnooze`).
   */
  "agent.snooze": z.object({ key: Key, until: z.iso.datetime({ offset: true }).nullable() }),
  /** Wakes a snoozed agent: in T3 where T3 holds its snooze (T3 Fleet drops its own). */
  "agent.unsnooze": z.object({ key: Key }),
  /** What the user did to agents since `since` (ms since epoch; the window asks from its local midnight), newest first. */
  "handled.list": z.object({ since: z.number().int().nonnegative() }),
  /** A turn's diff (by its turn count) or the whole thread's, read from T3 when shown; bounded (AgentDiff). */
  "agent.diff": z.object({
    key: Key,
    scope: z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("turn"), turnCount: z.number().int().min(1).max(1_000_000) }),
      z.object({ kind: z.literal("thread") }),
    ]),
  }),
  /** What the "New agent" form offers: every paired machine, and one machine's projects, harnesses and models as its T3 lists them. */
  "agent.createChoices": z.object({ environmentId: EnvironmentId.optional() }),
  /**
   * Starts an agent (shared/fleet/creation.ts). `creationId` is made by the form: asking again with
   * it creates nothing more. An empty `title` is derived from the message.
   */
  "agent.create": z.object({
    creationId: Id,
    environmentId: EnvironmentId,
    /** Empty when `newProject` is given: that project is created first, with the fleet's own id. */
    projectId: z.string().max(INPUT_LIMITS.id),
    newProject: z
      .object({ title: Label, workspaceRoot: z.string().max(FOLDER_MAX_CHARS), createIfMissing: z.boolean() })
      .nullable()
      .default(null),
    instanceId: Id,
    model: Id,
    runtimeMode: z.enum(CREATE_RUNTIME_MODES),
    parentThreadId: Id.nullable(),
    title: Label,
    text: z.string().max(INPUT_LIMITS.messageText),
  }),
  /** "Try again" on a creation T3 does not have: the same commands, so never a second thread. */
  "creation.retry": z.object({ creationId: Id }),
  "delivery.recheck": z.object({ commandId: Id }),
  /** Withdraws a sent message that still waits in the queue behind a running turn. */
  "delivery.cancelQueued": z.object({ commandId: Id }),
  /** Sends a held message now (once: with the commandId it was held with). */
  "delivery.release": z.object({ commandId: Id }),
  /** Drops a held message: it is never sent. */
  "delivery.discard": z.object({ commandId: Id }),
  "settings.update": z.object({
    notifications: z
      .object({
        needsApproval: z.boolean(),
        needsInput: z.boolean(),
        failed: z.boolean(),
        stalled: z.boolean(),
        heldUp: z.boolean(),
        contextFull: z.boolean(),
        hostOffline: z.boolean(),
      })
      .partial()
      .optional(),
    notificationsPaused: z.boolean().optional(),
    stalledAfterMs: z
      .number()
      .int()
      .min(10_000)
      .max(24 * 3_600_000)
      .optional(),
    /** Context fill (percent) at which an agent that will not compact is flagged and notifies. */
    contextWarningPercent: z.number().int().min(1).max(100).optional(),
    /** The inbox also lists agents whose turn ended with changes the user has not looked at. */
    finishedWithChangesInInbox: z.boolean().optional(),
  }),
  /** Opens a link from thread content in the system browser: only parsed http(s) URLs. */
  "link.open": z.object({ url: z.string().max(INPUT_LIMITS.linkUrl) }),
  ...DiscoveryRequests,
} as const;

export type BridgeMethod = keyof typeof BridgeRequests;
export type BridgeParams<M extends BridgeMethod> = z.input<(typeof BridgeRequests)[M]>;
export type BridgeParamsOut<M extends BridgeMethod> = z.output<(typeof BridgeRequests)[M]>;

export interface PairPreview {
  baseUrl: string;
  environmentId: string;
  label: string;
  serverVersion: string;
  /** The orchestration protocol the server announces. */
  protocol?: number;
  generation: "fork" | "upstream";
  hasToken: boolean;
  /** Already paired under this environmentId (pairing again updates it). */
  alreadyPaired: boolean;
  /**
   * This environmentId is already paired at another address: the same machine moved, or an
   * impostor that copied its id. Pairing needs the user's answer (`pair.confirm` with `moved`).
   */
  pairedElsewhere: PairedElsewhere | null;
  /**
   * Another paired machine (another environmentId) already shows under this server's name: pairing
   * asks first, and offers `suggestedLabel` ("studio-mac (2)") so the two can be told apart.
   */
  sameName: PairedElsewhere | null;
  suggestedLabel: string;
}

/** The machine a server claims to be, as the user paired it. */
export interface PairedElsewhere {
  label: string;
  baseUrl: string;
}

export interface FleetSettingsView {
  notifications: NotificationSettings;
  notificationsPaused: boolean;
  stalledAfterMs: number;
  /** Context fill (percent) at which an agent that will not compact is flagged and notifies (default 90). */
  contextWarningPercent: number;
  /** The inbox also lists agents whose turn ended with changes the user has not looked at (off by default). */
  finishedWithChangesInInbox: boolean;
}

export interface AgentDetail {
  key: string;
  /** The transcript as neutral items (messages, commands, file changes, errors, other activity), in order. */
  items: TranscriptItem[];
  /** False until the thread stream delivered its snapshot. */
  loaded: boolean;
  error: string | null;
  /** The thread's older items are not held (shared/fleet/transcript-tail.ts): the transcript starts after them, T3 has them. */
  earlier?: boolean;
}

/** The largest diff the fleet reads into a view, in characters; a larger one is described by its file list instead. */
export const DIFF_TEXT_LIMIT = 8_000_000;

/**
 * A diff as the UI shows it: the unified text, or, when it cannot be shown, why, with the files the
 * checkpoint lists. `toTurnCount` is the last turn it covers (the thread's newest for `thread`).
 */
export type AgentDiff = { key: string; scope: "turn" | "thread"; fromTurnCount: number; toTurnCount: number; files: ChangedFile[] } & (
  | { state: "ready"; text: string }
  /** Larger than DIFF_TEXT_LIMIT: not shown; `size` is its length in characters. */
  | { state: "too-large"; size: number }
  /** The checkpoint is missing or failed, or T3 could not give the diff: `reason` says which, in words; `offline`: its machine is not online, so it could not be asked. */
  | { state: "unavailable"; reason: string; offline?: true }
);

/** What changed in an open agent's detail since the last detail or delta sent for it. */
export interface AgentDetailDelta {
  key: string;
  /** New or changed transcript items in order: replace the one with the same id, else append. */
  items: TranscriptItem[];
  /**
   * Text added to message items the UI already has (a streaming reply), instead of the whole
   * message again: append `text`, and take `streaming` and `updatedAt`. Applied after `items`.
   */
  appended?: MessageAppend[];
  loaded: boolean;
  error: string | null;
}

export interface MessageAppend {
  id: string;
  text: string;
  streaming: boolean;
  updatedAt: string;
}

/** The detail after a delta: entries with the same id replaced in place, new ones appended in order. */
export function applyDetailDelta(detail: AgentDetail, delta: AgentDetailDelta): AgentDetail {
  const items = upsertById(detail.items, delta.items);
  return {
    key: detail.key,
    items: delta.appended?.length ? appendTexts(items, delta.appended) : items,
    loaded: delta.loaded,
    error: delta.error,
    ...(detail.earlier && { earlier: true }),
  };
}

function appendTexts(items: TranscriptItem[], appends: MessageAppend[]): TranscriptItem[] {
  const updated = appends.flatMap((append) => {
    const current = items.findLast((item) => item.id === append.id);
    return current?.type === "message" ? [{ ...current, text: current.text + append.text, streaming: append.streaming, updatedAt: append.updatedAt }] : [];
  });
  return upsertById(items, updated);
}

/** How far from the end a changed entry is looked for before indexing the whole list. */
const NEAR_END = 8;

function upsertById<T extends { id: string }>(current: T[], changed: T[]): T[] {
  if (changed.length === 0) return current;
  const next = [...current];
  // Streams change their newest entries: find those near the end without indexing a long history.
  const positions = changed.map((entry) => {
    for (let position = current.length - 1; position >= Math.max(0, current.length - NEAR_END); position--)
      if (current[position]!.id === entry.id) return position;
    return undefined;
  });
  const fresh = new Set(changed.map((entry) => entry.id));
  if (
    positions.every((position, index) => position !== undefined || !current.some((existing) => existing.id === changed[index]!.id)) &&
    fresh.size === changed.length
  ) {
    changed.forEach((entry, index) => {
      const position = positions[index];
      if (position === undefined) next.push(entry);
      else next[position] = entry;
    });
    return next;
  }
  const index = new Map(current.map((entry, position) => [entry.id, position]));
  for (const entry of changed) {
    const position = index.get(entry.id);
    if (position === undefined) {
      index.set(entry.id, next.length);
      next.push(entry);
    } else {
      next[position] = entry;
    }
  }
  return next;
}

/** Whether pairing again ended the fleet's older session on that server (T3 allows it only with owner or access rights). */
export interface PreviousSessionView {
  outcome: "none" | "revoked" | "already-ended" | "not-allowed";
  note: string | null;
}

export interface BridgeResults {
  "pair.inspect": PairPreview;
  "pair.confirm": { environmentId: string; label: string; readOnly: boolean; previousSession: PreviousSessionView };
  "pair.probeLocal": { baseUrl: string; label: string; environmentId: string; alreadyPaired: boolean } | null;
  /** `note` says what removing could not do on the server (T3 lets no session revoke itself). */
  "environment.remove": { note: string };
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
  "agent.acknowledge": { key: string; onServer: "settled" | "local"; note: string | null };
  /** "unsettled": T3 took it back too; "local": the fleet's acknowledgement is gone, `note` says why T3 did not follow when it was asked. */
  "agent.unacknowledge": { key: string; onServer: "unsettled" | "local"; note: string | null };
  /** `turnCount`: the turn now marked reviewed; `previous`: the one before (what the undo restores). */
  "agent.review": { key: string; turnCount: number; previous: number | null };
  "agent.unreview": { key: string };
  /** "snoozed": T3 took the snooze (every client sees it); "local": T3 Fleet keeps it (the agent's `fleetSnooze`), `note` says why when T3 was asked and did not take it. */
  "agent.snooze": { key: string; onServer: "snoozed" | "local"; until: string | null; note: string | null };
  /** "unsnoozed": T3 woke the thread it held snoozed; "local": T3 held no snooze (or could not be asked, `note` says why). */
  "agent.unsnooze": { key: string; onServer: "unsnoozed" | "local"; note: string | null };
  /** `letGo`: entries done since then that the log no longer keeps (it keeps HANDLED_KEPT). */
  "handled.list": { entries: HandledEntry[]; letGo: number };
  "agent.diff": AgentDiff;
  "agent.createChoices": CreateChoices;
  "agent.create": Creation;
  "creation.retry": Creation;
  "delivery.recheck": Delivery;
  "delivery.cancelQueued": Delivery;
  "delivery.release": Delivery;
  "delivery.discard": Delivery;
  "settings.update": FleetSettingsView;
  "link.open": null;
  "discovery.scan": DiscoveryReport;
  "discovery.pair": BridgeResults["pair.confirm"];
}

export interface FleetSnapshot {
  environments: EnvironmentView[];
  agents: AgentView[];
  deliveries: Delivery[];
  /** Agents being started from the fleet, and the receipts of recent ones. */
  creations?: Creation[];
  settings: FleetSettingsView;
  /** Problems the service wants the user to know (corrupt registry, no keychain). */
  notices: string[];
}

export type BridgeEvent =
  | { type: "fleet.snapshot"; snapshot: FleetSnapshot }
  /**
   * Rows that changed: `agents` whole (a row the page does not have yet), `patches` only the fields
   * that changed on a row it has (shared/bridge/row-patch.ts; the page's feed sends these).
   */
  | { type: "fleet.delta"; agents: AgentView[]; patches?: AgentPatch[]; removed: string[]; environments: EnvironmentView[]; removedEnvironments: string[] }
  /** The whole detail of an open agent (on open, and when a delta cannot express the change). */
  | { type: "agent.detail"; detail: AgentDetail }
  /** Only what changed in an open agent's detail; apply on top of the last detail. */
  | { type: "agent.detailDelta"; delta: AgentDetailDelta }
  | { type: "delivery"; delivery: Delivery }
  /** A creation moved (created → started → replied, or where it stopped). */
  | { type: "creation"; creation: Creation }
  | { type: "notification"; notification: NotificationIntent }
  | { type: "settings"; settings: FleetSettingsView }
  /** The user did something to an agent (the fleet carried it out): for the window's "handled today" list. */
  | { type: "handled"; entry: HandledEntry }
  /** The shell asks the UI to open an agent (a notification or tray item was clicked). */
  | { type: "ui.openAgent"; key: string }
  /** The shell asks the window to run a registry command (a tray menu item), through the window's one dispatcher. */
  | { type: "ui.command"; id: ActionId };

/** `ui.command` as the window reads it: only an action the registry puts on a surface (keys, palette, tray) is run; a view's own actions take arguments the shell never has. */
export const ShellCommand = z.object({
  type: z.literal("ui.command"),
  id: z.enum(ACTION_IDS).refine((id) => (ACTION_BY_ID.get(id)?.surfaces.length ?? 0) > 0, "a view's own action, not run from the shell"),
});

/**
 * Events paced by the page (shared/bridge/paced-feed.ts): the service sends the next batch once the
 * page acknowledged this one (BridgeAck with its `seq`) from the animation frame that applied it.
 */
export interface BridgeBatch {
  type: "events";
  seq: number;
  events: BridgeEvent[];
}

/** The page took batch `seq` (over the WebSocket, and over IPC on ACK_CHANNEL): the next may come. */
export const BridgeAck = z.object({ type: z.literal("ack"), seq: z.number().int().nonnegative() });
export type BridgeAck = z.infer<typeof BridgeAck>;

/** Wire messages of the headless bridge (one JSON object per WebSocket text frame). */
export const BridgeClientMessage = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("request"),
    id: z.number().int().nonnegative(),
    method: z.string(),
    /** Absent when the page passed `undefined`; the method's own schema then answers "invalid". */
    params: z.unknown().optional(),
  }),
  BridgeAck,
]);
export type BridgeClientMessage = z.infer<typeof BridgeClientMessage>;

/** `event`: outside the pacing (the pieces of a snapshot); `events`: a paced batch. */
export type BridgeServerMessage =
  | { type: "response"; id: number; ok: true; result: unknown }
  | { type: "response"; id: number; ok: false; error: { kind: string; message: string } }
  | { type: "event"; event: BridgeEvent }
  | BridgeBatch;

export function isBridgeMethod(method: string): method is BridgeMethod {
  return Object.hasOwn(BridgeRequests, method);
}

/**
 * What the Electron window tells its shell over the same checked IPC channel, answered by the shell
 * itself (never the fleet service): the agent whose panel it shows, for the native notification
 * policy (shared/fleet/notice-in-view.ts). Null: it shows none.
 */
export const SHELL_SHOWING_METHOD = "shell.showing";
export const ShellShowing = z.object({ key: Key.nullable() });

/** Parses a link from untrusted content; only http(s) URLs may be opened (README.md, "Security"). */
export function safeExternalUrl(raw: string): string | null {
  if (!URL.canParse(raw)) return null;
  const url = new URL(raw);
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  if (url.username || url.password) return null;
  return url.href;
}
