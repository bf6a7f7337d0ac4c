// Ending the fleet's previous T3 session when a machine is paired again (what T3's auth API offers:
// GET /api/auth/clients marks the caller's own session `current`; POST /api/auth/clients/revoke
// ends another session). Both need owner rights (0.0.24) or access:read/access:write scopes
// (upstream), and no session may revoke itself, so this works only where the pairing granted
// them; everywhere else the user is told to revoke the old entry in T3's Connections list.
import { z } from "zod";
import type { PreviousSessionView } from "../../shared/bridge/contract";
import { describeError } from "../../shared/bridge/redact";
import { type T3Http, decodeAnswer } from "./t3/http";
import type { OriginToken } from "./t3/origin-token";

const ClientSessions = z.array(z.object({ sessionId: z.string().min(1), current: z.boolean().optional() }));
const Revoked = z.object({ revoked: z.boolean() });

const NOT_ALLOWED =
  "T3 did not let this pairing end the fleet's previous session (that needs owner or access rights the fleet does not ask for). Revoke the older “T3 Fleet” entry in T3's Connections list.";

/** A token with the client of the one origin it may be sent to. */
export interface OriginSession {
  http: T3Http;
  token: OriginToken;
}

/**
 * Revokes the session behind `previous.token` using the new session; never throws. The previous
 * token goes only to the address that issued it (`previous.http`), which names its own session;
 * the revocation goes with the new token to the new session's address. When the machine moved, a
 * different server there does not know that session id, and nothing is revoked.
 * `note` is what the user should know, or null.
 */
export async function revokePreviousSession(previous: OriginSession | undefined, current: OriginSession): Promise<PreviousSessionView> {
  if (!previous || previous.token.sameAs(current.token)) return { outcome: "none", note: null };
  try {
    const listing = await previous.http.send({ method: "GET", path: "/api/auth/clients", bearer: previous.token });
    if (listing.status === 401) return { outcome: "already-ended", note: null };
    if (listing.status !== 200) return { outcome: "not-allowed", note: NOT_ALLOWED };
    const own = decodeAnswer(listing, ClientSessions, "client sessions").find((session) => session.current);
    if (!own) return { outcome: "not-allowed", note: NOT_ALLOWED };
    const answer = await current.http.send({ method: "POST", path: "/api/auth/clients/revoke", bearer: current.token, json: { sessionId: own.sessionId } });
    if (answer.status !== 200) return { outcome: "not-allowed", note: NOT_ALLOWED };
    return decodeAnswer(answer, Revoked, "revoke client session").revoked ? { outcome: "revoked", note: null } : { outcome: "already-ended", note: null };
  } catch (error) {
    const reason = describeError(error);
    return {
      outcome: "not-allowed",
      note: `The fleet's previous session could not be revoked (${reason}). Revoke the older “T3 Fleet” entry in T3's Connections list.`,
    };
  }
}
