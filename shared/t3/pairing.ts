// Parses what a user pastes to pair: a T3 pairing URL in any of its three forms, or a bare host.
// The token travels in the URL fragment so it never reaches a server log.
import { cleanLabel } from "./text";

export interface PairingTarget {
  /** Origin of the T3 server, e.g. "http://100.101.102.103:3773" (no trailing slash). */
  baseUrl: string;
  /** One-time pairing token, when the input carried one. */
  pairingToken?: string;
  /** Label suggested by a hosted pairing link. */
  label?: string;
}

export type PairingParse = { ok: true; target: PairingTarget } | { ok: false; message: string };

const HOSTED_PAIRING_HOST = "app.t3.codes";

function hashParam(hash: string, name: string): string | null {
  return new URLSearchParams(hash.startsWith("#") ? hash.slice(1) : hash).get(name);
}

/** Normalizes a host or URL to an http(s) origin; bare hosts default to https like T3's web app. */
export function normalizeBaseUrl(input: string): { ok: true; baseUrl: string } | { ok: false; message: string } {
  const trimmed = input.trim();
  if (trimmed === "") return { ok: false, message: "Enter a host or a pairing link." };
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`;
  if (!URL.canParse(withScheme)) return { ok: false, message: `"${trimmed}" is not a valid host or URL.` };
  const url = new URL(withScheme);
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, message: `Only http and https servers can be paired (got ${url.protocol}).` };
  }
  if (url.username || url.password) return { ok: false, message: "Server URLs must not contain credentials." };
  return { ok: true, baseUrl: url.origin };
}

export function parsePairingInput(input: string): PairingParse {
  const trimmed = input.trim();
  const base = normalizeBaseUrl(trimmed);
  if (!base.ok) return base;
  const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`);
  const token = hashParam(url.hash, "token") ?? url.searchParams.get("token");
  const pairingToken = token?.trim() || undefined;

  if (url.hostname === HOSTED_PAIRING_HOST) {
    const host = url.searchParams.get("host");
    if (!host) return { ok: false, message: "This hosted pairing link has no host parameter." };
    const backend = normalizeBaseUrl(host);
    if (!backend.ok) return backend;
    // The label is written by whoever made the link: server text, cleaned and capped at this edge.
    const label = linkLabel(url.searchParams.get("label"));
    return { ok: true, target: { baseUrl: backend.baseUrl, ...(pairingToken && { pairingToken }), ...(label && { label }) } };
  }
  return { ok: true, target: { baseUrl: base.baseUrl, ...(pairingToken && { pairingToken }) } };
}

/** A hosted link's `label=` as inert one-line text (shared/t3/text.ts), or undefined when nothing is left. */
function linkLabel(raw: string | null): string | undefined {
  if (raw === null) return undefined;
  return cleanLabel(raw) || undefined;
}

/** The pairing URL a T3 server prints: origin + /pair + token in the fragment. */
export function buildPairingUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/pair#token=${encodeURIComponent(token)}`;
}

/** The scopes a fleet client asks for: read and operate orchestration, nothing more (README.md, "Using it with real T3 servers"). */
export const FLEET_SCOPES = ["orchestration:read", "orchestration:operate"] as const;
