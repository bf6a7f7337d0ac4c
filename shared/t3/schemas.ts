// Wire schemas every T3 server shares, whichever orchestration protocol it speaks (docs/t3-protocols.md):
// the environment descriptor, auth, error bodies, and the read-model pieces both protocols' rows
// carry. Each protocol's own schemas are in shared/t3/protocol1/ and shared/t3/protocol2/. Rules:
// unknown fields are dropped (zod strips), unknown enum strings become "unknown" so a newer server
// never breaks decoding, and anything structurally wrong is rejected with the path of the first bad
// field (see decode.ts).
import { z } from "zod";
import { ServerText } from "./text";

/** An enum that tolerates values added by newer servers: they decode as "unknown". */
export function openEnum<const T extends readonly [string, ...string[]]>(values: T) {
  // The module's own constant is returned, not the decoded copy: thousands of rows share one string.
  const known = new Map<string, T[number]>(values.map((value) => [value, value]));
  return z.string().transform((value): T[number] | "unknown" => known.get(value) ?? "unknown");
}

const Id = z.string().min(1);
const IsoTime = z.string();
const JsonRecord = z.record(z.string(), z.unknown());

/**
 * A figure a server reports (lines changed, tokens): a safe non-negative integer, else null, "not
 * reported". A bad figure costs that figure alone, never the row, item or stream it came in
 * (issue 43: one checkpoint's out-of-range count took its whole machine offline). Absent reads as null.
 */
export const ReportedCount = z.number().int().nonnegative().nullable().catch(null);

// ---------------------------------------------------------------- identity and auth

export const EnvironmentDescriptor = z.object({
  environmentId: Id,
  label: ServerText.label,
  platform: z.object({ os: ServerText.label, arch: ServerText.label, machine: ServerText.label.optional() }).optional(),
  serverVersion: ServerText.label,
  capabilities: JsonRecord.default({}),
  orchestrationProtocolVersion: z.number().int().optional(),
});
export type EnvironmentDescriptor = z.infer<typeof EnvironmentDescriptor>;

export const AuthDescriptor = z.object({
  policy: openEnum(["loopback-browser", "desktop-managed-local", "remote-reachable", "unsafe-no-auth"]),
  bootstrapMethods: z.array(z.string()),
  sessionMethods: z.array(z.string()),
  sessionCookieName: z.string().optional(),
});
export type AuthDescriptor = z.infer<typeof AuthDescriptor>;

/** GET /api/auth/session: `role` on fork servers, `scopes` on upstream servers. */
export const AuthSessionState = z.object({
  authenticated: z.boolean(),
  auth: AuthDescriptor,
  role: openEnum(["owner", "client"]).optional(),
  scopes: z.array(z.string()).optional(),
  sessionMethod: z.string().optional(),
  expiresAt: IsoTime.optional(),
});
export type AuthSessionState = z.infer<typeof AuthSessionState>;

/** Fork POST /api/auth/bootstrap/bearer. */
export const BearerBootstrapResponse = z.object({
  authenticated: z.literal(true),
  role: openEnum(["owner", "client"]).optional(),
  sessionMethod: z.string(),
  expiresAt: IsoTime,
  sessionToken: z.string().min(1),
});
export type BearerBootstrapResponse = z.infer<typeof BearerBootstrapResponse>;

/** Upstream POST /oauth/token (RFC 8693 exchange). */
export const OAuthTokenResponse = z.object({
  access_token: z.string().min(1),
  issued_token_type: z.string().optional(),
  token_type: z.string(),
  expires_in: z.number().nonnegative(),
  scope: z.string().optional(),
});
export type OAuthTokenResponse = z.infer<typeof OAuthTokenResponse>;

/** Upstream POST /api/auth/websocket-ticket. */
export const WebSocketTicketResponse = z.object({ ticket: z.string().min(1), expiresAt: IsoTime });
/** Fork POST /api/auth/ws-token. */
export const WsTokenResponse = z.object({ token: z.string().min(1), expiresAt: IsoTime });

// ---------------------------------------------------------------- error bodies

/** Fork error body: `{"error": "<message>"}`. */
export const ForkErrorBody = z.object({ error: ServerText.reason });
/** Upstream tagged error body. */
export const TaggedErrorBody = z.object({
  _tag: ServerText.label,
  code: ServerText.label.optional(),
  reason: ServerText.label.optional(),
  requiredScope: ServerText.label.optional(),
  message: ServerText.reason.optional(),
  traceId: ServerText.label.optional(),
});
export type TaggedErrorBody = z.infer<typeof TaggedErrorBody>;
export const HttpErrorBody = z.union([TaggedErrorBody, ForkErrorBody]);
export type HttpErrorBody = z.infer<typeof HttpErrorBody>;

/** The typed error inside an Exit Failure `Fail` cause (either protocol's RPC). */
export const RpcTaggedError = z.object({
  _tag: ServerText.label.optional(),
  message: ServerText.reason.optional(),
  requiredScope: ServerText.label.optional(),
});
export type RpcTaggedError = z.infer<typeof RpcTaggedError>;

// ---------------------------------------------------------------- read-model pieces both protocols share

const ModelOption = z.object({ id: z.string(), value: z.union([z.string(), z.boolean(), z.number()]) });

/**
 * `{instanceId, model, options?}`; legacy `{provider, model}` and object-form options
 * (`{"effort":"high"}`) still decode and are normalized to the array form.
 */
export const ModelSelection = z
  .object({
    instanceId: ServerText.label.optional(),
    provider: ServerText.label.optional(),
    model: ServerText.label,
    options: z.union([z.array(ModelOption), z.record(z.string(), z.union([z.string(), z.boolean(), z.number()]))]).optional(),
  })
  .transform((raw) => ({
    instanceId: raw.instanceId ?? raw.provider ?? "unknown",
    model: raw.model,
    options: Array.isArray(raw.options) ? raw.options : Object.entries(raw.options ?? {}).map(([id, value]) => ({ id, value })),
  }));
export type ModelSelection = z.infer<typeof ModelSelection>;

export const ProjectShell = z.object({
  id: Id,
  title: ServerText.title,
  workspaceRoot: ServerText.path,
  repositoryIdentity: z.unknown().optional(),
  defaultModelSelection: ModelSelection.nullable().optional(),
  scripts: z.array(z.unknown()).default([]),
  createdAt: IsoTime,
  updatedAt: IsoTime,
  deletedAt: IsoTime.nullable().optional(),
});
export type ProjectShell = z.infer<typeof ProjectShell>;
