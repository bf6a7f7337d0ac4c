// A server that plays back what T3's real V2 engine sent (../shared/fixtures/t3-v2dev): each RPC
// request the fleet makes gets the recorded answer to the next recorded request with the same tag,
// so the adapter meets the engine's real frames in the real order. HTTP: the `/ws` ticket and
// bounded thread snapshots assembled from a recorded thread stream.
import { readFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { WebSocketServer } from "ws";
import { fixturesDir } from "../../../../sim/recordings";

export interface RecordedEntry {
  dir: "in" | "out" | "http" | "ws-open";
  /** HTTP entries: what was asked and answered. */
  method?: string;
  url?: string;
  status?: number;
  body?: unknown;
  frame?: { _tag: string; id?: string; requestId?: string; tag?: string; payload?: unknown; values?: unknown[]; exit?: { _tag: string } };
}

/** One recorded request and what the engine sent for it, in order. */
export interface RecordedExchange {
  tag: string;
  payload: unknown;
  answers: NonNullable<RecordedEntry["frame"]>[];
}

export function readV2Recording(name: string): { meta: { what: string }; frames: RecordedEntry[] } {
  return JSON.parse(readFileSync(join(fixturesDir(), "t3-v2dev", name), "utf8")) as { meta: { what: string }; frames: RecordedEntry[] };
}

export function v2RecordingFiles(): string[] {
  return [
    "00-handshake",
    "01-create-project-thread",
    "02-turn-plain",
    "03-approval",
    "04-interrupt",
    "04b-interrupt-running",
    "05-fail",
    "06-steer",
    "06b-steer-running",
    "06c-steer-supported",
    "07-queue",
    "08-start-immediately",
    "09-shell-stream",
    "10-shell-resume",
  ].map((name) => `${name}.json`);
}

/** The recorded requests of a file, each with the server frames answering it (Chunks and its Exit). */
export function recordedExchanges(name: string): RecordedExchange[] {
  const exchanges = new Map<string, RecordedExchange>();
  for (const entry of readV2Recording(name).frames) {
    const frame = entry.frame;
    if (!frame) continue;
    if (entry.dir === "out" && frame._tag === "Request" && frame.id && frame.tag)
      exchanges.set(frame.id, { tag: frame.tag, payload: frame.payload, answers: [] });
    else if (entry.dir === "in" && frame.requestId) exchanges.get(frame.requestId)?.answers.push(frame);
  }
  return [...exchanges.values()];
}

/** Every stream value the engine sent in a file (snapshot, event and shell items). */
export function recordedValues(name: string): unknown[] {
  return recordedExchanges(name).flatMap((exchange) => exchange.answers.flatMap((frame) => (frame._tag === "Chunk" ? (frame.values ?? []) : [])));
}

type Json = Record<string, unknown> & { id?: string };
const PROJECTION_LISTS: Record<string, string> = {
  "run.created": "runs",
  "run.updated": "runs",
  "turn-item.updated": "turnItems",
  "runtime-request.updated": "runtimeRequests",
  "provider-session.attached": "providerSessions",
  "provider-session.updated": "providerSessions",
  "message.updated": "messages",
  "subagent.updated": "subagents",
};

/**
 * A thread's bounded snapshot as the engine would serve it after a recorded thread stream: the
 * stream's snapshot with the recorded events upserted by id, in the engine's own JSON.
 */
export function boundedSnapshotAfter(name: string, threadId: string): { snapshotSequence: number; projection: Json } {
  let snapshot: { snapshotSequence: number; projection: Json } | undefined;
  for (const value of recordedValues(name) as Json[]) {
    if (value.kind === "snapshot" && value.projection && (value.projection as { thread: { id: string } }).thread.id === threadId) {
      snapshot = structuredClone({ snapshotSequence: value.snapshotSequence as number, projection: value.projection as Json });
    } else if (value.kind === "event" && snapshot) {
      const event = value.event as { type: string; threadId: string; payload: Json };
      const list = PROJECTION_LISTS[event.type];
      if (event.threadId !== threadId || !list) continue;
      const entries = (snapshot.projection[list] as Json[] | undefined) ?? [];
      const index = entries.findIndex((entry) => entry.id === event.payload.id);
      if (index === -1) entries.push(event.payload);
      else entries[index] = event.payload;
      snapshot.projection[list] = entries;
      snapshot.snapshotSequence = value.sequence as number;
    }
  }
  if (!snapshot) throw new Error(`${name} has no thread stream for ${threadId}`);
  return snapshot;
}

/** Plays recorded exchanges back to whoever connects; one queue per RPC tag, shared across sockets. */
export class ReplayServer {
  private readonly http: Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly queues = new Map<string, RecordedExchange[]>();
  /** What the fleet sent, per tag, in order. */
  readonly requests: { tag: string; payload: unknown }[] = [];
  readonly httpReads: string[] = [];
  readonly bounded = new Map<string, unknown>();
  baseUrl = "";

  constructor(exchanges: RecordedExchange[]) {
    for (const exchange of exchanges) {
      const queue = this.queues.get(exchange.tag) ?? [];
      queue.push(exchange);
      this.queues.set(exchange.tag, queue);
    }
    this.http = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://replay");
      this.httpReads.push(`${req.method} ${url.pathname}`);
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.method === "POST" && url.pathname === "/api/auth/websocket-ticket")
        return json(200, { ticket: "replay-ticket", expiresAt: new Date(Date.now() + 60_000).toISOString() });
      const bounded = /^\/api\/orchestration\/threads\/([^/]+)\/bounded$/.exec(url.pathname);
      if (req.method === "GET" && bounded) {
        const body = this.bounded.get(decodeURIComponent(bounded[1]!));
        return body ? json(200, body) : json(404, { _tag: "EnvironmentResourceNotFoundError", message: "Thread not found" });
      }
      json(404, {});
    });
    this.http.on("upgrade", (req, socket, head) => this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit("connection", ws, req)));
    this.wss.on("connection", (ws) => {
      ws.on("message", (data) => {
        const frame = JSON.parse(String(data)) as { _tag: string; id?: string; tag?: string; payload?: unknown };
        if (frame._tag === "Ping") return ws.send(JSON.stringify({ _tag: "Pong" }));
        if (frame._tag !== "Request" || !frame.id || !frame.tag) return;
        this.requests.push({ tag: frame.tag, payload: frame.payload });
        const exchange = this.queues.get(frame.tag)?.shift();
        if (!exchange)
          return ws.send(
            JSON.stringify({
              _tag: "Exit",
              requestId: frame.id,
              exit: { _tag: "Failure", cause: [{ _tag: "Die", defect: `Nothing recorded for ${frame.tag}` }] },
            }),
          );
        for (const answer of exchange.answers) {
          // A stream the recording client interrupted stays open here: the fleet closes it.
          if (answer._tag === "Exit" && JSON.stringify(answer.exit).includes('"Interrupt"')) continue;
          ws.send(JSON.stringify({ ...answer, requestId: frame.id }));
        }
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.http.listen(0, "127.0.0.1", resolve));
    this.baseUrl = `http://127.0.0.1:${(this.http.address() as AddressInfo).port}`;
    return this;
  }

  /** Ends every open socket, as a restarting engine does. */
  dropConnections(): void {
    for (const ws of this.wss.clients) ws.terminate();
  }

  async stop(): Promise<void> {
    this.dropConnections();
    this.wss.close();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }
}
