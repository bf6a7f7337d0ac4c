// The last line of defence against token theft: a bearer token may only travel to the origin that
// issued it. Tokens are bound here when they are issued (pairing) or read from the secret store
// (electron/fleet/secrets.ts, which keeps each token with its origin); T3Http refuses to attach a
// bound token to a request for any other origin, whatever code path asked for it.
// Never forgotten, even when the token is removed: an unbound token counts as one the user typed
// for the address it is sent to, so forgetting would free it to travel anywhere. One entry per pairing.
const boundOrigins = new Map<string, string>();

/** The origin (scheme://host:port) of a URL, as T3Http addresses it. */
export function originOf(url: string): string {
  return new URL(url).origin;
}

/** Records that `token` was issued by `origin`; a token re-bound elsewhere keeps its first origin. */
export function bindTokenToOrigin(token: string, origin: string): void {
  if (!boundOrigins.has(token)) boundOrigins.set(token, originOf(origin));
}

/** Whether `token` may be sent to `origin`: tokens the user typed for that address are unbound. */
export function tokenMayGoTo(token: string, origin: string): boolean {
  const bound = boundOrigins.get(token);
  return bound === undefined || bound === originOf(origin);
}
