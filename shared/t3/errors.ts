// Every failure talking to a T3 server becomes one T3Error with a kind a UI can act on.
import { HttpErrorBody, RpcTaggedError, type TaggedErrorBody } from "./schemas";
import { type DecodeFailure, describeDecodeFailure, parseJson } from "./decode";
import { defectText, type RpcCause } from "./rpc-frames";
import { cleanText } from "./text";

export type T3ErrorKind =
  /** Token missing, invalid, expired or revoked; pairing token used or expired. Re-pair. */
  | "unauthorized"
  /** Authenticated, but the token lacks a scope (or the pairing link does not grant it). */
  | "insufficient-scope"
  | "not-found"
  /** The server speaks a protocol this client does not (orchestration protocol 2, not T3 at all). */
  | "incompatible"
  /** The server understood and refused the request (invariant failure, invalid command). */
  | "rejected"
  /** The server failed (500) or died while handling the request. */
  | "server"
  /** Connection refused, reset or closed before an answer. Whether a command took effect is unknown. */
  | "network"
  | "timeout"
  /** A response did not match the protocol's schema. */
  | "decode"
  /** The call was interrupted (by us, or by the server). */
  | "interrupted";

export interface T3ErrorDetails {
  status?: number;
  /** Machine reason, e.g. "scope_not_granted", "invalid_credential", "thread_not_found". */
  reason?: string;
  requiredScope?: string;
  /** Server tag of a typed error, e.g. "OrchestrationDispatchCommandError". */
  tag?: string;
  decode?: DecodeFailure;
}

export class T3Error extends Error {
  override readonly name = "T3Error";
  constructor(
    readonly kind: T3ErrorKind,
    message: string,
    readonly details: T3ErrorDetails = {},
  ) {
    super(message);
  }

  /** Any thrown value as a T3Error: unexpected ones count as a server failure. */
  static from(error: unknown): T3Error {
    return error instanceof T3Error ? error : new T3Error("server", error instanceof Error ? error.message : String(error));
  }

  static decode(failure: DecodeFailure): T3Error {
    return new T3Error("decode", describeDecodeFailure(failure), { decode: failure });
  }
}

function kindForStatus(status: number): T3ErrorKind {
  if (status === 401) return "unauthorized";
  if (status === 403) return "insufficient-scope";
  if (status === 404) return "not-found";
  if (status >= 500) return "server";
  return "rejected";
}

function kindForTagged(body: TaggedErrorBody, status: number): T3ErrorKind {
  // A 5xx is the server failing, whatever its body names: never read as a verdict on the credential.
  if (status >= 500) return "server";
  switch (body.code) {
    case "auth_invalid":
      return "unauthorized";
    case "insufficient_scope":
      return "insufficient-scope";
    case "not_found":
      return "not-found";
    case "internal_error":
      return "server";
    case "invalid_request":
      return body.reason === "scope_not_granted" || body.reason === "invalid_scope" ? "insufficient-scope" : "rejected";
    default:
      return kindForStatus(status);
  }
}

const reasonText: Record<string, string> = {
  missing_credential: "No credential was sent.",
  invalid_credential: "The token or pairing code is invalid, expired, used or revoked.",
  scope_not_granted: "The pairing link does not grant the requested access.",
  invalid_scope: "The requested access scope is not valid.",
  insufficient_scope: "The token lacks the required scope.",
  thread_not_found: "That thread does not exist on the server.",
  orchestration_dispatch_failed: "The server could not apply the command.",
  invalid_command: "The server rejected the command as invalid.",
};

/**
 * Classifies a non-2xx HTTP answer. Bodies are never assumed to be JSON: 0.0.33 answers
 * undecodable requests with an empty 400, unknown GETs with text/plain 503.
 */
export function httpFailure(status: number, contentType: string, bodyText: string, context: string): T3Error {
  const isJson = contentType.toLowerCase().includes("json");
  const parsed = isJson && bodyText.length > 0 ? parseJson(bodyText) : undefined;
  const body = parsed?.ok ? HttpErrorBody.safeParse(parsed.value) : undefined;
  if (body?.success) {
    const value = body.data;
    if ("_tag" in value) {
      const reason = value.reason ?? value.code;
      // A server error's body says what failed inside T3, not what is wrong with the request.
      const text = status >= 500 ? `HTTP ${status} (${value._tag})` : ((reason && reasonText[reason]) ?? value.message ?? value._tag);
      return new T3Error(kindForTagged(value, status), `${context}: ${text}`, {
        status,
        tag: value._tag,
        ...(reason !== undefined && { reason }),
        ...(value.requiredScope !== undefined && { requiredScope: value.requiredScope }),
      });
    }
    return new T3Error(kindForStatus(status), `${context}: ${value.error}`, { status, reason: value.error });
  }
  const snippet = cleanText(bodyText.slice(0, 1_024).trim(), { max: 120 });
  return new T3Error(kindForStatus(status), `${context}: HTTP ${status}${snippet ? ` (${snippet})` : " with an empty body"}`, {
    status,
  });
}

/** Turns the causes of an Exit Failure into one error (the first meaningful cause wins). */
export function rpcFailure(causes: readonly RpcCause[], context: string): T3Error {
  for (const cause of causes) {
    if (cause._tag === "Fail") {
      const tagged = RpcTaggedError.safeParse(cause.error);
      const error = tagged.success ? tagged.data : {};
      const message = error.message ?? error._tag ?? "request failed";
      const kind: T3ErrorKind =
        error._tag === "EnvironmentAuthorizationError" || error.requiredScope !== undefined
          ? "insufficient-scope"
          : error._tag === "OrchestrationGetSnapshotError" && /not found/i.test(message)
            ? "not-found"
            : "rejected";
      return new T3Error(kind, `${context}: ${message}`, {
        ...(error._tag !== undefined && { tag: error._tag }),
        ...(error.requiredScope !== undefined && { requiredScope: error.requiredScope }),
      });
    }
    if (cause._tag === "Die") {
      const text = defectText(cause.defect);
      // An unknown method is answered with Die on 0.0.33 and with a Defect frame on 0.0.24.
      const kind: T3ErrorKind = /Unknown request tag/.test(text) ? "incompatible" : "server";
      return new T3Error(kind, `${context}: ${text}`, { tag: "Die" });
    }
    if (cause._tag === "Interrupt") return new T3Error("interrupted", `${context}: interrupted`);
  }
  return new T3Error("server", `${context}: failed without a cause`);
}
