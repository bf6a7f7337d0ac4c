// HTTP to one T3 server with undici. Checks status and content type before trusting a body,
// bounds time and size, and turns every failure into a T3Error. Bound to one origin when built:
// it sends nothing anywhere else, and a token only if that origin issued it (origin-token.ts).
// undici's `request` never follows redirects (that takes its redirect interceptor, not used here):
// a 3xx is an answer like any other, so a redirect cannot carry a token, or anything, elsewhere.
import { request } from "undici";
import type { z } from "zod";
import { decodeWith, parseJson } from "../../../shared/t3/decode";
import { T3Error, httpFailure } from "../../../shared/t3/errors";
import { type OriginToken, originOf } from "./origin-token";

/** A T3 API call on loopback or a tailnet answers in milliseconds; this bounds a dead host. */
export const DEFAULT_HTTP_TIMEOUT_MS = 10_000;
/** Full read-model snapshots of old threads can be large; refuse anything absurd. */
export const MAX_HTTP_BODY_BYTES = 64 * 1024 * 1024;

export interface HttpRequest {
  method: "GET" | "POST";
  /** A path on this client's origin; an absolute URL to any other origin is refused. */
  path: string;
  bearer?: OriginToken;
  json?: unknown;
  form?: Record<string, string>;
  /** Extra request headers (protocol 2 marks every orchestration read with its version). */
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export interface HttpAnswer {
  status: number;
  contentType: string;
  text: string;
}

function networkError(error: unknown, what: string): T3Error {
  const code = (error as { code?: string } | null)?.code ?? "";
  const name = (error as { name?: string } | null)?.name ?? "";
  if (name === "TimeoutError" || code.includes("TIMEOUT")) return new T3Error("timeout", `${what}: the server did not answer in time.`);
  const message = error instanceof Error ? error.message : String(error);
  return new T3Error("network", `${what}: ${code ? `${code} ` : ""}${message}`.trim());
}

export class T3Http {
  /** The one origin (scheme://host:port) this client talks to. */
  readonly origin: string;
  private retired = false;

  constructor(
    readonly baseUrl: string,
    /** Sent on every request: how the fleet names itself to T3 (see client.ts). */
    private readonly userAgent?: string,
  ) {
    this.origin = originOf(baseUrl);
  }

  /**
   * The machine this client served was removed or moved: from now on it sends nothing, so a call
   * still under way with a token it was given cannot reach the server after the user let go of it.
   */
  retire(): void {
    this.retired = true;
  }

  /** Sends a request; network failures and oversized bodies reject with a T3Error. */
  async send(req: HttpRequest): Promise<HttpAnswer> {
    const what = `${req.method} ${req.path}`;
    if (this.retired) throw new T3Error("interrupted", `${what}: this machine was removed or moved; nothing more is sent to ${this.origin}.`);
    const url = new URL(req.path, this.baseUrl);
    if (url.origin !== this.origin) throw new T3Error("unauthorized", `${what}: refused to send a request outside ${this.origin}.`);
    // A token rides only in `bearer`, where its origin is checked; never as a raw header.
    if (Object.keys(req.headers ?? {}).some((name) => name.toLowerCase() === "authorization"))
      throw new T3Error("unauthorized", `${what}: refused a raw authorization header.`);
    const headers: Record<string, string> = { accept: "application/json", ...(this.userAgent && { "user-agent": this.userAgent }), ...req.headers };
    if (req.bearer) {
      // Never "for any reason": not to revoke, not to check, not after a server claimed another's identity.
      const secret = req.bearer.secretFor(this.origin);
      if (secret === undefined) throw new T3Error("unauthorized", `${what}: refused to send a token to ${this.origin}, which did not issue it.`);
      headers.authorization = `Bearer ${secret}`;
    }
    let body: string | undefined;
    if (req.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(req.json);
    } else if (req.form) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      body = new URLSearchParams(req.form).toString();
    }
    const timeoutMs = req.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
    try {
      const response = await request(url, {
        method: req.method,
        headers,
        body,
        signal: AbortSignal.timeout(timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const declared = Number(response.headers["content-length"] ?? 0);
      if (declared > MAX_HTTP_BODY_BYTES) {
        response.body.destroy();
        throw new T3Error("decode", `${what}: response of ${declared} bytes is over the limit.`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_HTTP_BODY_BYTES) {
          response.body.destroy();
          throw new T3Error("decode", `${what}: response is over the size limit.`);
        }
        chunks.push(chunk as Buffer);
      }
      const contentType = String(response.headers["content-type"] ?? "");
      return { status: response.statusCode, contentType, text: Buffer.concat(chunks).toString("utf8") };
    } catch (error) {
      if (error instanceof T3Error) throw error;
      throw networkError(error, what);
    }
  }

  /** Sends a request and decodes a 2xx JSON body with `schema`; anything else is a typed error. */
  async json<S extends z.ZodType>(req: HttpRequest, schema: S, what: string): Promise<z.output<S>> {
    const answer = await this.send(req);
    return decodeAnswer(answer, schema, what);
  }
}

/** Shared by the client and the conformance tests: how one HTTP answer is interpreted. */
export function decodeAnswer<S extends z.ZodType>(answer: HttpAnswer, schema: S, what: string): z.output<S> {
  if (answer.status < 200 || answer.status >= 300) throw httpFailure(answer.status, answer.contentType, answer.text, what);
  if (!answer.contentType.toLowerCase().includes("json")) {
    // Fork servers answer unknown GETs with their web app's index.html (200, text/html).
    throw new T3Error("incompatible", `${what}: expected JSON, got ${answer.contentType || "no content type"}. Is this a T3 server?`, {
      status: answer.status,
    });
  }
  const json = parseJson(answer.text);
  if (!json.ok) throw new T3Error("decode", `${what}: the body is not valid JSON (${json.message}).`);
  const decoded = decodeWith(schema, json.value, what);
  if (!decoded.ok) throw T3Error.decode(decoded.error);
  return decoded.value;
}
