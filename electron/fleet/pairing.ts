// Pairing: reads a pairing link or host, checks everything it can about the server before the
// one-time pairing code is spent (descriptor, T3, protocol, auth methods, identity and label),
// exchanges it, stores the token, and hands the record to the environment lifecycle.
import type { BridgeResults, PairPreview, PairedElsewhere } from "../../shared/bridge/contract";
import { describeError } from "../../shared/bridge/redact";
import { distinctName, nameTaken } from "../../shared/fleet/machine-names";
import { T3Error } from "../../shared/t3/errors";
import { type PairingTarget, parsePairingInput } from "../../shared/t3/pairing";
import type { EnvironmentDescriptor } from "../../shared/t3/schemas";
import { BridgeError } from "./bridge-error";
import type { Environments } from "./environments";
import type { EnvironmentRecord, Registry } from "./registry";
import { type OriginBoundSecrets, isStorableEnvironmentId } from "./secrets";
import { type OriginSession, revokePreviousSession } from "./session-revocation";
import { announcedProtocol, negotiateProtocol } from "./t3/adapters";
import type { AuthGeneration, T3EnvironmentClient } from "./t3/client";
import { originOf } from "./t3/origin-token";

/** Default port of a local T3 server. */
export const LOCAL_T3_URL = "http://127.0.0.1:3773";
const PAIRING_CODE = /^[23456789ABCDEFGHJKLMNPQRSTUVWXYZ]{12}$/i;
/** Longest server label kept; T3 derives it from the host name, so anything longer is hostile or broken. */
export const MAX_SERVER_LABEL = 80;
const MAX_ENVIRONMENT_ID = 200;
/** Control, zero-width and bidirectional-override characters: never part of an honest label or id. */
const CONTROL_CHARACTER_CLASS = "[\\u0000-\\u001f\\u007f-\\u009f\\u200b-\\u200f\\u202a-\\u202e\\u2066-\\u2069]";
const HAS_CONTROL_CHARACTER = new RegExp(CONTROL_CHARACTER_CLASS);
const CONTROL_CHARACTERS = new RegExp(CONTROL_CHARACTER_CLASS, "g");

export interface PairingOptions {
  environments: Environments;
  registry: Registry;
  secrets: OriginBoundSecrets;
  now: () => number;
}

/** `previousSession`: whether the fleet's older session on this server was ended (re-pairing). */
type PairConfirmation = BridgeResults["pair.confirm"];

/** What the checks before spending a pairing code found out about the server. */
interface CheckedServer {
  environment: EnvironmentDescriptor;
  generation: AuthGeneration;
  label: string;
}

export class Pairing {
  constructor(private readonly options: PairingOptions) {}

  async inspect(input: string): Promise<PairPreview> {
    const target = parseTarget(input);
    const client = this.options.environments.clientFor(target.baseUrl);
    const checked = await this.check(client, target, target.pairingToken !== undefined);
    return {
      baseUrl: target.baseUrl,
      environmentId: checked.environment.environmentId,
      label: checked.label,
      serverVersion: checked.environment.serverVersion,
      protocol: announcedProtocol(checked.environment),
      generation: checked.generation,
      hasToken: target.pairingToken !== undefined,
      alreadyPaired: this.options.environments.has(checked.environment.environmentId),
      pairedElsewhere: this.pairedElsewhere(checked.environment.environmentId, target.baseUrl),
      sameName: this.namedAlike(checked.environment.environmentId, checked.label),
      suggestedLabel: distinctName(checked.label, this.otherNames(checked.environment.environmentId)),
    };
  }

  /** The names the other paired machines show under. */
  private otherNames(environmentId: string): string[] {
    return this.options.registry.environments
      .filter((record) => record.environmentId !== environmentId)
      .map((record) => record.customLabel ?? record.serverLabel);
  }

  /** Another paired machine already shown under `label`, if any. */
  private namedAlike(environmentId: string, label: string): PairedElsewhere | null {
    const record = this.options.registry.environments.find(
      (other) => other.environmentId !== environmentId && nameTaken(label, [other.customLabel ?? other.serverLabel]),
    );
    return record ? { label: record.customLabel ?? record.serverLabel, baseUrl: record.baseUrl } : null;
  }

  /** The machine paired under `environmentId` at another origin, if any. */
  private pairedElsewhere(environmentId: string, baseUrl: string): PairedElsewhere | null {
    const record = this.options.registry.get(environmentId);
    if (!record || originOf(record.baseUrl) === originOf(baseUrl)) return null;
    return { label: record.customLabel ?? record.serverLabel, baseUrl: record.baseUrl };
  }

  /**
   * `moved`: the user's answer when the server claims an environmentId already paired at another
   * address. Without it nothing is spent, sent or saved: the claim may be an impostor's.
   */
  async confirm(input: string, token: string | undefined, label: string | undefined, moved = false): Promise<PairConfirmation> {
    const target = parseTarget(input);
    const secret = target.pairingToken ?? token?.trim();
    if (!secret) throw new BridgeError("invalid", "This link carries no pairing code. Paste the full pairing link, or a host with its pairing code or token.");
    const isPairingCode = PAIRING_CODE.test(secret);
    const client = this.options.environments.clientFor(target.baseUrl);
    // Everything that can be known without the code is checked first: a code is single-use.
    const checked = await this.check(client, target, isPairingCode);
    const elsewhere = this.pairedElsewhere(checked.environment.environmentId, target.baseUrl);
    if (elsewhere && !moved) throw impostorQuestion(elsewhere, target.baseUrl);
    let paired;
    try {
      paired = await client.pair(isPairingCode ? { pairingToken: secret } : { bearerToken: secret });
    } catch (error) {
      throw pairingError(error, target.baseUrl, true);
    }
    const { environmentId } = paired.environment;
    if (environmentId !== checked.environment.environmentId) {
      throw new BridgeError("incompatible", `The server at ${target.baseUrl} changed identity while pairing; nothing was saved. Try again.`);
    }
    // The previous token stays bound to the address that issued it: it is read for that address only.
    const previousRecord = this.options.registry.get(environmentId);
    let previous: OriginSession | undefined;
    try {
      if (previousRecord) {
        const previousToken = await this.options.secrets.get(environmentId, previousRecord.baseUrl);
        const previousClient =
          originOf(previousRecord.baseUrl) === originOf(target.baseUrl) ? client : this.options.environments.clientFor(previousRecord.baseUrl);
        if (previousToken) previous = { http: previousClient.http, token: previousToken };
      }
      await this.options.secrets.set(environmentId, paired.token);
    } catch (error) {
      throw notSavedError(target.baseUrl, "its token could not be stored", error);
    }
    const existing = this.options.environments.get(environmentId);
    const record: EnvironmentRecord = {
      environmentId,
      serverLabel: checked.label,
      customLabel:
        label?.trim() ||
        (target.label && saneLabel(target.label, target.baseUrl)) ||
        existing?.record.customLabel ||
        unlike(checked.label, this.otherNames(environmentId)),
      baseUrl: target.baseUrl,
      generation: paired.generation,
      readOnly: paired.readOnly,
      serverVersion: paired.environment.serverVersion,
      protocol: announcedProtocol(paired.environment),
      muted: existing?.record.muted ?? false,
      pairedAt: new Date(this.options.now()).toISOString(),
    };
    try {
      await this.options.registry.upsert(record);
    } catch (error) {
      // The machine list still names the old address: its token goes back, so it keeps working there.
      if (previous && previousRecord) await this.options.secrets.set(environmentId, previous.token).catch(() => {});
      throw notSavedError(target.baseUrl, "the machine list could not be written", error);
    }
    this.options.environments.adopt(record);
    const previousSession = await revokePreviousSession(previous, { http: client.http, token: paired.token });
    return { environmentId, label: record.customLabel ?? record.serverLabel, readOnly: record.readOnly, previousSession };
  }

  async probeLocal(): Promise<{ baseUrl: string; label: string; environmentId: string; alreadyPaired: boolean } | null> {
    const client = this.options.environments.clientFor(LOCAL_T3_URL);
    try {
      const environment = await client.identify();
      negotiateProtocol(environment);
      return {
        baseUrl: LOCAL_T3_URL,
        label: saneLabel(environment.label, LOCAL_T3_URL),
        environmentId: environment.environmentId,
        alreadyPaired: this.options.environments.has(environment.environmentId),
      };
    } catch {
      return null;
    }
  }

  /**
   * The descriptor decodes and is T3's, its orchestration protocol is one the fleet speaks
   * (`negotiateProtocol`), the auth endpoint offers bearer sessions (`authSession`), a pairing code can be
   * exchanged there, and the identity and label are sane.
   */
  private async check(client: T3EnvironmentClient, target: PairingTarget, withPairingCode: boolean): Promise<CheckedServer> {
    let environment: EnvironmentDescriptor;
    let generation: AuthGeneration;
    let bootstrapMethods: string[];
    try {
      environment = await client.identify();
      negotiateProtocol(environment);
      const answer = await client.authSession();
      generation = answer.generation;
      bootstrapMethods = answer.session.auth.bootstrapMethods;
    } catch (error) {
      throw pairingError(error, target.baseUrl);
    }
    const id = environment.environmentId;
    if (id.length > MAX_ENVIRONMENT_ID || HAS_CONTROL_CHARACTER.test(id) || !isStorableEnvironmentId(id)) {
      throw new BridgeError("not-t3", `The server at ${target.baseUrl} sent an environment id no T3 server would use; not pairing with it.`);
    }
    if (withPairingCode && !bootstrapMethods.includes("one-time-token")) {
      throw new BridgeError(
        "incompatible",
        `The server at ${target.baseUrl} does not accept pairing codes (it offers ${bootstrapMethods.join(", ") || "none"}). Use a token from \`t3 auth session issue\` instead.`,
      );
    }
    return { environment, generation, label: saneLabel(environment.label, target.baseUrl) };
  }
}

/** A name for a machine whose server name another machine already shows under; null when it is free. */
function unlike(label: string, taken: string[]): string | null {
  return nameTaken(label, taken) ? distinctName(label, taken) : null;
}

function parseTarget(input: string): PairingTarget {
  const parsed = parsePairingInput(input);
  if (!parsed.ok) throw new BridgeError("invalid", parsed.message);
  return parsed.target;
}

/** A server label fit to show: no control or direction characters, one line, bounded; the host when empty. */
export function saneLabel(raw: string, baseUrl: string): string {
  const cleaned = raw.replace(CONTROL_CHARACTERS, " ").replace(/\s+/g, " ").trim();
  if (!cleaned) return new URL(baseUrl).host;
  const characters = [...cleaned];
  return characters.length > MAX_SERVER_LABEL ? `${characters.slice(0, MAX_SERVER_LABEL - 1).join("")}…` : cleaned;
}

/** The question only the user can answer: a second address for a machine already paired. */
export function impostorQuestion(elsewhere: PairedElsewhere, baseUrl: string): BridgeError {
  return new BridgeError(
    "identity-conflict",
    `The server at ${originOf(baseUrl)} claims to be ${elsewhere.label}, which you paired at ${elsewhere.baseUrl}: same machine moved, or an impostor? Nothing was sent to it and ${elsewhere.label} stays at ${elsewhere.baseUrl}. Pair it only if you moved that machine there.`,
  );
}

/**
 * The code is spent and T3 holds the new session, but the fleet could not keep it: say so, so the
 * user can end that session in T3's Connections list rather than leave it there unused.
 */
function notSavedError(baseUrl: string, what: string, error: unknown): BridgeError {
  return new BridgeError(
    "not-saved",
    `T3 at ${baseUrl} accepted the pairing, but T3 Fleet could not save it: ${what} (${describeError(error)}). Revoke the “T3 Fleet” session in T3's Connections list, then pair again.`,
  );
}

/** Pairing failures in words a user can act on; `codeSent`: the server may have spent the code before it failed. */
export function pairingError(error: unknown, baseUrl: string, codeSent = false): BridgeError {
  if (error instanceof BridgeError) return error;
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
      return new BridgeError(
        "unreachable",
        `No server answered at ${baseUrl}. Check the address, and that the machine is on and reachable (LAN or Tailscale).`,
      );
    case "incompatible":
      return new BridgeError(
        "incompatible",
        /protocol/.test(error.message) ? error.message : `The server at ${baseUrl} is not a T3 server T3 Fleet can use: ${error.message}`,
      );
    case "decode":
      return new BridgeError("not-t3", `The server at ${baseUrl} did not answer like a T3 server.`);
    case "server":
      // After the code was sent, whether T3 spent it before failing cannot be known from here.
      return new BridgeError(
        "server",
        `T3 at ${baseUrl} failed while pairing (${error.message.replace(/^pairing: /, "")}). ${
          codeSent
            ? "The pairing code may or may not be used up: try again, and if T3 then says it was used, create a new pairing link."
            : "The pairing code was not sent and can still be used: try again."
        }`,
      );
    default:
      return new BridgeError(error.kind, error.message);
  }
}
