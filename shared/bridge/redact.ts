// Secrets never leave in text: log lines, error messages and bridge answers pass through this first
// (issue 9: no token or pairing code in logs or errors, including `?token=` and `#token=` links).

const REDACTED = "…";

/** Names of URL parameters and fields that carry a secret (pairing links, launch links, socket credentials, credentials). */
const SECRET_NAMES = [
  "token",
  "code",
  "session",
  "secret",
  "password",
  "access_token",
  "bearer",
  "wsToken",
  "wsTicket",
  "ticket",
  "subject_token",
  "credential",
];

const paramPattern = new RegExp(`([?#&;](?:${SECRET_NAMES.join("|")})=)[^&#\\s"'<>]*`, "gi");
const bearerPattern = /\b(bearer\s+)[A-Za-z0-9._~+/=-]+/gi;
const userinfoPattern = /(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s@"'<>]+@/gi;
const jsonFieldPattern = new RegExp(`("(?:${SECRET_NAMES.join("|")})"\\s*:\\s*")[^"]*"`, "gi");
const sessionProtocolPattern = /(t3fleet\.session\.)[A-Za-z0-9_-]+/g;

/** Replaces every secret-looking value in a text with an ellipsis; the rest stays readable. */
export function redactSecrets(text: string): string {
  return text
    .replace(paramPattern, `$1${REDACTED}`)
    .replace(bearerPattern, `$1${REDACTED}`)
    .replace(userinfoPattern, `$1${REDACTED}@`)
    .replace(jsonFieldPattern, `$1${REDACTED}"`)
    .replace(sessionProtocolPattern, `$1${REDACTED}`);
}

/** An error's message (or the thrown value) as text safe to log or show. */
export function describeError(error: unknown): string {
  return redactSecrets(error instanceof Error ? error.message : String(error));
}
