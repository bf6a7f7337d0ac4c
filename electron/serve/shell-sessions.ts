// How long the headless shell's access lasts (electron/serve/server.ts): a launch code opens the
// fleet once and only for a few minutes; a session lives in this process only (a restart ends
// every session) and ends after long idleness (no page connected); repeated failed exchanges are
// refused for a while and logged once, not once per attempt.
import { createHash, randomBytes } from "node:crypto";

export interface ShellSessionTiming {
  /** A printed launch link opens nothing after this long. */
  launchCodeTtlMs: number;
  /** A session with no page connected for this long has ended. */
  sessionIdleMs: number;
  /** Failed exchanges counted over this window… */
  failureWindowMs: number;
  /** …and past this many, every exchange is refused until the window has passed. */
  maxFailures: number;
}

export const DEFAULT_SHELL_SESSION_TIMING: ShellSessionTiming = {
  launchCodeTtlMs: 10 * 60_000,
  sessionIdleMs: 12 * 3_600_000,
  failureWindowMs: 60_000,
  maxFailures: 10,
};

/** Bytes of randomness in launch codes and session secrets. */
const SECRET_BYTES = 32;

/** Secrets are kept only as hashes: lookups by hash leak nothing about the secret through timing. */
const digest = (secret: string) => createHash("sha256").update(secret).digest("base64url");
const newSecret = () => randomBytes(SECRET_BYTES).toString("base64url");

export type ExchangeOutcome = { ok: true; session: string } | { ok: false; status: 403 | 429; message: string };

interface SessionState {
  /** Pages connected with this session right now. */
  connected: number;
  /** When the last page disconnected (or the session began). */
  idleSince: number;
}

export class ShellSessions {
  private readonly timing: ShellSessionTiming;
  private readonly launchCodes = new Map<string, number>();
  private readonly sessions = new Map<string, SessionState>();
  private failures: number[] = [];
  private lockedUntil = 0;

  constructor(
    timing: Partial<ShellSessionTiming> = {},
    private readonly now: () => number = Date.now,
    private readonly log: (line: string) => void = () => {},
  ) {
    this.timing = { ...DEFAULT_SHELL_SESSION_TIMING, ...timing };
  }

  get launchCodeMinutes(): number {
    return Math.round(this.timing.launchCodeTtlMs / 60_000);
  }

  /** A new single-use launch code, valid for `launchCodeTtlMs`. */
  newLaunchCode(): string {
    const code = newSecret();
    this.launchCodes.set(digest(code), this.now() + this.timing.launchCodeTtlMs);
    return code;
  }

  /** Trades a launch code for a session secret, once. */
  exchange(code: unknown): ExchangeOutcome {
    const now = this.now();
    if (now < this.lockedUntil)
      return { ok: false, status: 429, message: "Too many failed attempts to open T3 Fleet. Wait a minute, then open the link again." };
    const key = typeof code === "string" ? digest(code) : "";
    const expiresAt = this.launchCodes.get(key);
    this.launchCodes.delete(key);
    if (expiresAt === undefined || now >= expiresAt) {
      this.fail(now);
      return expiresAt === undefined
        ? { ok: false, status: 403, message: "This launch link was already used. Open the link T3 Fleet printed, in the tab it was first opened in." }
        : {
            ok: false,
            status: 403,
            message: `This launch link has expired (a link opens within ${this.launchCodeMinutes} minutes). Restart ./fleet serve for a new one.`,
          };
    }
    const session = newSecret();
    this.sessions.set(digest(session), { connected: 0, idleSince: now });
    return { ok: true, session };
  }

  /**
   * A page connects with `session`: true while the session is live, and then it counts as in use
   * until `disconnected` is called. An idle-expired session is forgotten.
   */
  connect(session: string): boolean {
    const key = digest(session);
    const state = this.sessions.get(key);
    if (!state) return false;
    if (state.connected === 0 && this.now() - state.idleSince >= this.timing.sessionIdleMs) {
      this.sessions.delete(key);
      return false;
    }
    state.connected++;
    return true;
  }

  disconnected(session: string): void {
    const state = this.sessions.get(digest(session));
    if (!state) return;
    state.connected = Math.max(0, state.connected - 1);
    if (state.connected === 0) state.idleSince = this.now();
  }

  private fail(now: number): void {
    this.failures = this.failures.filter((at) => now - at < this.timing.failureWindowMs);
    this.failures.push(now);
    if (this.failures.length < this.timing.maxFailures) return;
    this.lockedUntil = now + this.timing.failureWindowMs;
    this.failures = [];
    // Once per lockout, never per attempt: a flood of guesses must not become a flood of log lines.
    this.log(
      `t3-fleet serve: ${this.timing.maxFailures} failed launch-link attempts within ${Math.round(this.timing.failureWindowMs / 1000)} s; refusing launch links for ${Math.round(this.timing.failureWindowMs / 1000)} s.`,
    );
  }
}
