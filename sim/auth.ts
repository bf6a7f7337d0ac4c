// Auth state of a simulated T3 server: pairing tokens (12 chars, 5 min, one use), bearer sessions,
// WebSocket tickets, revocation (docs/t3-protocols.md, "Protocol 1").
import { randomBytes, randomUUID } from "node:crypto";

export const PAIRING_TOKEN_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ";
export const PAIRING_TOKEN_LENGTH = 12;
export const PAIRING_TOKEN_TTL_MS = 5 * 60_000;
export const SESSION_TTL_MS = 30 * 24 * 3_600_000;
export const SOCKET_TICKET_TTL_MS = 5 * 60_000;

/** What an ordinary pairing link grants on upstream servers. */
export const PAIRING_LINK_SCOPES = ["orchestration:read", "orchestration:operate", "terminal:operate", "review:write", "relay:read"];

export interface PairingToken {
  token: string;
  expiresAt: number;
  scopes: string[];
  role: "owner" | "client";
}

export interface BearerSession {
  sessionId: string;
  token: string;
  scopes: string[];
  role: "owner" | "client";
  label: string;
  expiresAt: number;
  revoked: boolean;
}

export type ExchangeResult = { ok: true; session: BearerSession } | { ok: false; reason: "invalid_credential" | "scope_not_granted" };

function randomToken(): string {
  const bytes = randomBytes(PAIRING_TOKEN_LENGTH);
  let out = "";
  for (const byte of bytes) out += PAIRING_TOKEN_ALPHABET[byte % PAIRING_TOKEN_ALPHABET.length];
  return out;
}

export class SimAuth {
  private readonly pairing = new Map<string, PairingToken>();
  private readonly sessions = new Map<string, BearerSession>();
  private readonly tickets = new Map<string, { session: BearerSession; expiresAt: number }>();
  /** Called when a session is revoked, so its open sockets can be closed. */
  onRevoke: (session: BearerSession) => void = () => {};

  constructor(private readonly now: () => number) {}

  issuePairingToken(options: { scopes?: string[]; role?: "owner" | "client"; ttlMs?: number } = {}): PairingToken {
    const entry: PairingToken = {
      token: randomToken(),
      expiresAt: this.now() + (options.ttlMs ?? PAIRING_TOKEN_TTL_MS),
      scopes: options.scopes ?? PAIRING_LINK_SCOPES,
      role: options.role ?? "client",
    };
    this.pairing.set(entry.token, entry);
    return entry;
  }

  /**
   * Exchanges a pairing token. The token is consumed before scopes are checked, as on 0.0.33:
   * a scope mismatch burns it.
   */
  exchange(token: string, requestedScopes: string[] | undefined, label: string): ExchangeResult {
    const entry = this.pairing.get(token);
    if (!entry || entry.expiresAt <= this.now()) return { ok: false, reason: "invalid_credential" };
    this.pairing.delete(token);
    const scopes = requestedScopes ?? entry.scopes;
    if (!scopes.every((scope) => entry.scopes.includes(scope))) return { ok: false, reason: "scope_not_granted" };
    return { ok: true, session: this.issueSession({ scopes, role: entry.role, label }) };
  }

  issueSession(options: { scopes: string[]; role: "owner" | "client"; label: string }): BearerSession {
    const session: BearerSession = {
      sessionId: randomUUID(),
      token: `${randomUUID()}.${randomBytes(24).toString("base64url")}`,
      scopes: options.scopes,
      role: options.role,
      label: options.label,
      expiresAt: this.now() + SESSION_TTL_MS,
      revoked: false,
    };
    this.sessions.set(session.token, session);
    return session;
  }

  /** Every bearer token issued so far (tests that hunt for a leaked secret). */
  issuedTokens(): string[] {
    return [...this.sessions.keys()];
  }

  /** The live session for a bearer token, or undefined when unknown, expired or revoked. */
  verify(token: string | undefined): BearerSession | undefined {
    if (!token) return undefined;
    const session = this.sessions.get(token);
    if (!session || session.revoked || session.expiresAt <= this.now()) return undefined;
    return session;
  }

  issueTicket(session: BearerSession): { ticket: string; expiresAt: number } {
    const ticket = randomBytes(24).toString("base64url");
    const expiresAt = this.now() + SOCKET_TICKET_TTL_MS;
    this.tickets.set(ticket, { session, expiresAt });
    return { ticket, expiresAt };
  }

  verifyTicket(ticket: string | null): BearerSession | undefined {
    if (!ticket) return undefined;
    const entry = this.tickets.get(ticket);
    if (!entry || entry.expiresAt <= this.now()) return undefined;
    return this.verify(entry.session.token);
  }

  /** The id of the session a bearer token or socket ticket belongs to, revoked or expired ones too (who asked, for request logs). */
  sessionIdOf(credential: string | undefined): string | null {
    if (!credential) return null;
    return (this.sessions.get(credential) ?? this.tickets.get(credential)?.session)?.sessionId ?? null;
  }

  /** Revokes one session (by token) or every session; returns how many were revoked. */
  revoke(token?: string): number {
    let count = 0;
    for (const session of this.sessions.values()) {
      if (session.revoked || (token !== undefined && session.token !== token)) continue;
      session.revoked = true;
      count++;
      this.onRevoke(session);
    }
    return count;
  }

  get activeSessions(): BearerSession[] {
    return [...this.sessions.values()].filter((session) => !session.revoked);
  }
}
