// A bearer token travels only with the origin that issued it: the secret store hands tokens out as
// OriginTokens for the origin they were stored with (electron/fleet/secrets.ts), pairing makes one
// for the address it paired (client.ts), and T3Http, bound to one origin when it is built, reveals
// the secret only for a request to that origin (http.ts). No module keeps tokens beside them: a
// token lives as long as whoever asked the secret store for it.
import { inspect } from "node:util";

/** The origin (scheme://host:port) of a URL, as T3Http addresses it. */
export function originOf(url: string): string {
  return new URL(url).origin;
}

export class OriginToken {
  /** Private so that no spread, JSON.stringify or util.inspect of a token (or of what holds it) shows it. */
  readonly #secret: string;

  private constructor(
    /** The only origin this token may be sent to. */
    readonly origin: string,
    secret: string,
  ) {
    this.#secret = secret;
  }

  /** A token `origin` issued (a pairing), or the user gave for that address (a typed token). */
  static issuedBy(origin: string, secret: string): OriginToken {
    if (!secret) throw new Error("A bearer token cannot be empty.");
    return new OriginToken(originOf(origin), secret);
  }

  /** The secret, for a request to `origin`; undefined for any other origin. */
  secretFor(origin: string): string | undefined {
    return originOf(origin) === this.origin ? this.#secret : undefined;
  }

  /** Whether both name the same session (the same secret from the same origin). */
  sameAs(other: OriginToken): boolean {
    return this.origin === other.origin && this.#secret === other.#secret;
  }

  toJSON(): string {
    return `[token for ${this.origin}]`;
  }

  [inspect.custom](): string {
    return `OriginToken(${this.origin})`;
  }
}
