// Ending the fleet's previous T3 session when a machine is paired again (what T3's auth API offers:
// GET /api/auth/clients marks the caller's own session `current`; POST /api/auth/clients/revoke
// ends another session). Both need owner rights (0.0.24) or access:read/access:write scopes
// (upstream), and no session may revoke itself, so this works only where the pairing granted
// them; everywhere else the user is told to revoke the old entry in T3's Connections list.
import { z } from "zod";
import type { PreviousSessionView } from "../../shared/bridge/contract";
import { describeError } from "../../shared/bridge/redact";
import { type T3Http, decodeAnswer } from "./t3/http";

const ClientSessions = z.array(z.object({ sessionId: z.string().min(1), current: z.boolean().optional() }));
const Revoked = z.object({ revoked: z.boolean() });

const NOT_ALLOWED =
  "T3 did not let this pairing end the fleet's previous session (that needs owner or access rights the fleet does not ask for). Revoke the older “T3 Fleet” entry in T3's Connections list.";

/** Revokes the session behind `previousToken` using `newToken`; never throws. `note` is what the user should know, or null. */
export async function revokePreviousSession(http: T3Http, previousToken: string | undefined, newToken: string): Promise<PreviousSessionView> {
  if (!previousToken || previousToken === newToken) return { outcome: "none", note: null };
  try {
    const listing = await http.send({ method: "GET", path: "/api/auth/clients", bearer: previousToken });
    if (listing.status === 401) return { outcome: "already-ended", note: null };
    if (listing.status !== 200) return { outcome: "not-allowed", note: NOT_ALLOWED };
    const own = decodeAnswer(listing, ClientSessions, "client sessions").find((session) => session.current);
    if (!own) return { outcome: "not-allowed", note: NOT_ALLOWED };
    const answer = await http.send({ method: "POST", path: "/api/auth/clients/revoke", bearer: newToken, json: { sessionId: own.sessionId } });
    if (answer.status !== 200) return { outcome: "not-allowed", note: NOT_ALLOWED };
    return decodeAnswer(answer, Revoked, "revoke client session").revoked ? { outcome: "revoked", note: null } : { outcome: "already-ended", note: null };
  } catch (error) {
    const reason = describeError(error);
    return { outcome: "not-allowed", note: `The fleet's previous session could not be revoked (${reason}). Revoke the older “T3 Fleet” entry in T3's Connections list.` };
  }
}
