// A scripted model server on 127.0.0.1 for the real harness CLIs (Codex, Claude Code, OpenCode):
// the OpenAI Responses API, the Anthropic Messages API and OpenAI chat completions, streamed as
// those APIs stream them, answering by script (script.ts) and recording every request, so a test
// can assert what a harness sent its model (a steered message in the running turn, a tool result
// after an approval, a second turn). Loopback only; nothing here reaches any other address.
import { EventEmitter } from "node:events";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type Conversation, type Plan, type Usage, choosePlan } from "./script";
import { type Api, conversationOf, errorBody, modelOf, streamOf, wantsStream, wholeOf } from "./wire";

/** Request bodies larger than this are refused (a harness's whole context fits easily). */
const MAX_BODY_BYTES = 32 << 20;
/** A held stream goes on by itself after this long, so a test that never releases it cannot hang a harness. */
const MAX_HOLD_MS = 120_000;

export interface RecordedRequest {
  /** Order of arrival, from 1. */
  index: number;
  at: number;
  method: string;
  path: string;
  api: Api | null;
  /** The parsed JSON body (null for none or not JSON). */
  body: unknown;
  /** The request body as text, for "did the harness send X" searches. */
  text: string;
  conversation: Conversation | null;
  /** What the script answered: a text reply, a tool call (by tool name), an error status, or 404. */
  answer: string;
  /** The client closed the stream before it ended (an interrupt). */
  aborted: boolean;
  /** When the answer ended (sent whole or closed by the client); null while it streams. */
  endedAt: number | null;
  /** The token usage the answer reported, for comparing with what T3 shows. */
  usage: Usage | null;
  userAgent: string;
}

function apiOf(method: string, path: string): Api | null {
  if (method !== "POST") return null;
  const route = path.split("?")[0]!.replace(/^\/v1/, "");
  if (route === "/responses") return "openai-responses";
  if (route === "/messages") return "anthropic-messages";
  if (route === "/chat/completions") return "openai-chat";
  return null;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`request body over ${MAX_BODY_BYTES} bytes`));
        request.destroy();
      } else parts.push(chunk);
    });
    request.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    request.on("error", reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return text ? (JSON.parse(text) as unknown) : null;
  } catch {
    return null;
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (ms <= 0 || signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });

export class ScriptedModelServer {
  readonly requests: RecordedRequest[] = [];
  private readonly events = new EventEmitter();
  private readonly attempts = new Map<string, number>();
  private readonly open = new Set<ServerResponse>();
  private readonly ended = new WeakSet<RecordedRequest>();
  private readonly released = new WeakSet<RecordedRequest>();
  private readonly pendingReleases = new Set<NodeJS.Timeout>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<ScriptedModelServer> {
    const server = createServer();
    const model = new ScriptedModelServer(server);
    server.on("request", (request, response) => void model.handle(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    return model;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The base URL harnesses are configured with (the APIs live under /v1). */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Requests to the model APIs (not count_tokens, model lists or unknown paths) whose body contains `text`. */
  modelRequestsContaining(text: string): RecordedRequest[] {
    return this.requests.filter((request) => request.api !== null && request.text.includes(text));
  }

  /** Resolves with the first recorded request (past or future) that `check` accepts. */
  waitFor(check: (request: RecordedRequest) => boolean, what: string, timeoutMs = 60_000): Promise<RecordedRequest> {
    const found = this.requests.find(check);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.events.off("request", listener);
        reject(
          new Error(
            `the scripted model saw no ${what} within ${timeoutMs} ms (it saw ${this.requests.length} requests: ${this.requests.map((request) => `${request.path} → ${request.answer}`).join(", ")})`,
          ),
        );
      }, timeoutMs);
      const listener = (request: RecordedRequest) => {
        if (!check(request)) return;
        clearTimeout(timer);
        this.events.off("request", listener);
        resolve(request);
      };
      this.events.on("request", listener);
    });
  }

  /**
   * Lets a held stream (a slow reply, script.ts) go on, after `afterMs` (a model that pauses mid-reply), or
   * as soon as it reaches its hold if that is later; a client that closes the stream first ends it.
   */
  release(request: RecordedRequest, afterMs = 0): void {
    const go = () => {
      this.released.add(request);
      this.events.emit("released", request);
    };
    if (afterMs <= 0) return go();
    const timer = setTimeout(go, afterMs);
    timer.unref();
    this.pendingReleases.add(timer);
  }

  /** Resolves once the stream answering `request` has ended: sent whole, or closed by the client. */
  streamEnded(request: RecordedRequest): Promise<"completed" | "aborted"> {
    if (this.ended.has(request)) return Promise.resolve(request.aborted ? "aborted" : "completed");
    return new Promise((resolve) => {
      const listener = (ended: RecordedRequest) => {
        if (ended !== request) return;
        this.events.off("ended", listener);
        resolve(ended.aborted ? "aborted" : "completed");
      };
      this.events.on("ended", listener);
    });
  }

  /** Calls `listener` as each streamed event of an answer is written, with its data (a benchmark times tokens from here). */
  onChunk(listener: (request: RecordedRequest, data: string, at: number) => void): () => void {
    const wrapped = (request: RecordedRequest, data: string, at: number) => listener(request, data, at);
    this.events.on("chunk", wrapped);
    return () => this.events.off("chunk", wrapped);
  }

  async close(): Promise<void> {
    for (const timer of this.pendingReleases) clearTimeout(timer);
    for (const response of this.open) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private heldUntilReleased(request: RecordedRequest, signal: AbortSignal): Promise<void> {
    if (this.released.has(request) || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.events.off("released", onRelease);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const onRelease = (released: RecordedRequest) => released === request && done();
      const timer = setTimeout(done, MAX_HOLD_MS);
      this.events.on("released", onRelease);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  private record(request: RecordedRequest): void {
    this.requests.push(request);
    this.events.emit("request", request);
  }

  private end(request: RecordedRequest): void {
    request.endedAt ??= Date.now();
    this.ended.add(request);
    this.events.emit("ended", request);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = request.method ?? "GET";
    const path = request.url ?? "/";
    let text: string;
    try {
      text = await readBody(request);
    } catch (error) {
      response.writeHead(413, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: String(error) } }));
      return;
    }
    const body = parseJson(text);
    const api = apiOf(method, path);
    const recorded: RecordedRequest = {
      index: this.requests.length + 1,
      at: Date.now(),
      method,
      path,
      api,
      body,
      text,
      conversation: null,
      answer: "",
      aborted: false,
      endedAt: null,
      usage: null,
      userAgent: String(request.headers["user-agent"] ?? ""),
    };
    const route = path.split("?")[0]!.replace(/^\/v1/, "");
    if (api === null) {
      if (method === "POST" && route === "/messages/count_tokens") {
        recorded.answer = "count_tokens";
        this.record(recorded);
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ input_tokens: Math.ceil(text.length / 4) }));
      } else if (method === "GET" && route === "/models") {
        recorded.answer = "models";
        this.record(recorded);
        response
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ object: "list", data: [{ id: "scripted-model", object: "model", created: 0, owned_by: "scripted" }] }));
      } else {
        recorded.answer = "404";
        this.record(recorded);
        response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no route ${method} ${route}` } }));
      }
      return;
    }
    let conversation: Conversation;
    try {
      conversation = conversationOf[api](body);
    } catch (error) {
      recorded.answer = "400";
      this.record(recorded);
      response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `undecodable request: ${String(error)}` } }));
      return;
    }
    recorded.conversation = conversation;
    const key = conversation.userTexts.at(-1) ?? "";
    const attempt = this.attempts.get(key) ?? 0;
    this.attempts.set(key, attempt + 1);
    const plan = choosePlan(conversation, attempt);
    recorded.answer = plan.kind === "error" ? String(plan.status) : plan.kind === "tool" ? `tool ${plan.tool}` : "text";
    if (plan.kind !== "error") recorded.usage = plan.usage;
    this.record(recorded);
    await this.answer(api, plan, modelOf(body), wantsStream(body), response, recorded);
  }

  private async answer(api: Api, plan: Plan, model: string, stream: boolean, response: ServerResponse, recorded: RecordedRequest): Promise<void> {
    if (plan.kind === "error") {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (plan.retryAfterS !== undefined) headers["retry-after"] = String(plan.retryAfterS);
      // The Anthropic SDK retries on its own unless told not to (Claude Code honours it).
      headers["x-should-retry"] = String(plan.shouldRetry);
      response.writeHead(plan.status, headers).end(JSON.stringify(errorBody(api, plan)));
      this.end(recorded);
      return;
    }
    if (!stream) {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(wholeOf(api, plan, model)));
      this.end(recorded);
      return;
    }
    const aborted = new AbortController();
    this.open.add(response);
    response.on("close", () => {
      this.open.delete(response);
      if (!response.writableEnded) recorded.aborted = true;
      aborted.abort();
      this.end(recorded);
    });
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    for (const event of streamOf[api](plan, model)) {
      if (event.hold) await this.heldUntilReleased(recorded, aborted.signal);
      await sleep(event.delayMs ?? 0, aborted.signal);
      if (aborted.signal.aborted) return;
      const data = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
      response.write(`${event.event ? `event: ${event.event}\n` : ""}data: ${data}\n\n`);
      this.events.emit("chunk", recorded, data, Date.now());
    }
    response.end();
  }
}
