// Real-server conformance: every recorded body and frame from ../shared/fixtures goes through the
// decoders and the client's own handling. Nothing may fail to decode or be dropped silently.
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { WebSocketServer, type WebSocket } from "ws";
import type { ZodType, output } from "zod";
import type { ClientCommand } from "../../../shared/t3/protocol1/commands";
import { decodeWith } from "../../../shared/t3/decode";
import { T3Error, type T3ErrorKind } from "../../../shared/t3/errors";
import { RpcClientFrameSchema, RpcExit, RpcServerFrame } from "../../../shared/t3/rpc-frames";
import { AuthSessionState, BearerBootstrapResponse, EnvironmentDescriptor, OAuthTokenResponse, WebSocketTicketResponse } from "../../../shared/t3/schemas";
import {
  DispatchResult,
  ReadModelSnapshot,
  ServerConfigSummary,
  ShellSnapshot,
  ShellStreamItemSchema,
  ThreadDetailSnapshot,
  ThreadShell,
  ThreadStreamItemSchema,
} from "../../../shared/t3/protocol1/schemas";
import { type HttpRecording, type RecordedFrame, type RecordedVersion, readFrames, readRecording, recordingFiles } from "../../../sim/recordings";
import { detectGeneration } from "./client";
import { decodeAnswer } from "./http";
import { RpcSocket } from "./rpc-socket";
import { ShellRecorder, ThreadRecorder } from "./streams.testkit";
import { T3Connection } from "./protocol1/connection";

function mustDecode<S extends ZodType>(schema: S, value: unknown, what: string): output<S> {
  const decoded = decodeWith(schema, value, what);
  if (!decoded.ok) throw new Error(`${what}: ${decoded.error.path} ${decoded.error.message}`);
  return decoded.value;
}

/** Files that are analyses of an experiment, not protocol output (see the 0.0.33 README). */
const ANALYSIS_FILES = new Set(["late-ack-result.json", "late-ack-result-streaming.json"]);

const HTTP_SCHEMAS: [RegExp, ZodType][] = [
  [/^\/\.well-known\/t3\/environment$/, EnvironmentDescriptor],
  [/^\/api\/auth\/session$/, AuthSessionState],
  [/^\/oauth\/token$/, OAuthTokenResponse],
  [/^\/api\/auth\/websocket-ticket$/, WebSocketTicketResponse],
  [/^\/api\/orchestration\/shell$/, ShellSnapshot],
  [/^\/api\/orchestration\/threads\/.+$/, ThreadDetailSnapshot],
  [/^\/api\/orchestration\/snapshot$/, ReadModelSnapshot],
  [/^\/api\/orchestration\/dispatch$/, DispatchResult],
  [/^\/ws$/, DispatchResult],
];

/** What the client must make of each recorded HTTP failure. */
const EXPECTED_FAILURES: Record<string, T3ErrorKind> = {
  "error-400-invalid-command.json": "rejected",
  "error-400-scope-not-granted.json": "insufficient-scope",
  "error-400-undecodable-command.json": "rejected",
  "error-401-invalid-bearer.json": "unauthorized",
  "error-401-missing-bearer.json": "unauthorized",
  "error-401-pairing-token-burned-by-scope-mismatch.json": "unauthorized",
  "error-401-websocket-ticket-missing-bearer.json": "unauthorized",
  "error-401-websocket-upgrade-no-credentials.json": "unauthorized",
  "error-403-insufficient-scope.json": "insufficient-scope",
  "error-404-thread-not-found.json": "not-found",
  "error-dispatch-invariant-http.json": "server",
  "error-oauth-token-bad-grant.json": "rejected",
  "error-oauth-token-reused-pairing-token.json": "unauthorized",
};

describe("recorded bodies decode (0.0.24, fork generation)", () => {
  const version: RecordedVersion = "t3-0.0.24";
  const handled = new Set<string>();
  const read = (name: string) => {
    handled.add(name);
    return readRecording(version, name);
  };

  it("identity, auth session and pairing", () => {
    expect(mustDecode(EnvironmentDescriptor, read("environment.json"), "descriptor").serverVersion).toBe("0.0.24");
    for (const name of ["auth-session-authenticated.json", "auth-session-unauthenticated.json"]) {
      expect(detectGeneration(mustDecode(AuthSessionState, read(name), name))).toBe("fork");
    }
    expect(mustDecode(BearerBootstrapResponse, read("pair-response.json"), "pair").role).toBe("client");
  });

  it("shell snapshot, shell rows and thread snapshots", () => {
    for (const name of recordingFiles(version)) {
      if (name.startsWith("shell-row-")) mustDecode(ThreadShell, read(name), name);
      if (name.startsWith("shell-initial") || name.startsWith("thread-")) {
        const item = name.startsWith("shell") ? mustDecode(ShellStreamItemSchema, read(name), name) : mustDecode(ThreadStreamItemSchema, read(name), name);
        expect(item.kind).toBe("snapshot");
      }
    }
  });

  it("dispatch exits: dedupe, typed failure, Die", () => {
    const recorded = read("dispatch-dedupe.json") as Record<string, unknown>;
    const exits = Object.fromEntries(Object.entries(recorded).map(([key, value]) => [key, mustDecode(RpcExit, value, key)]));
    expect(exits.first).toEqual(exits.again);
    expect(exits.existingThreadNewCommand?._tag).toBe("Failure");
    expect(exits.malformed?._tag).toBe("Failure");
  });

  afterAll(() => {
    handled.add("frames.jsonl"); // replayed below
    expect(recordingFiles(version).filter((name) => !handled.has(name))).toEqual([]);
  });
});

describe("recorded bodies decode (0.0.33, upstream generation)", () => {
  const version: RecordedVersion = "t3-0.0.33";
  const files = recordingFiles(version).filter((name) => name.endsWith(".json") && !ANALYSIS_FILES.has(name));

  it.each(files)("%s", (name) => {
    const recording = readRecording(version, name) as HttpRecording;
    const { request, status, contentType } = recording._fixture;
    if (request.ws) {
      // WebSocket results recorded as whole frames.
      const frame = mustDecode(RpcServerFrame, recording.body, name);
      expect(frame._tag).toBe("Exit");
      if (frame._tag === "Exit" && frame.exit._tag === "Success") {
        if (request.ws === "server.getConfig") mustDecode(ServerConfigSummary, frame.exit.value, name);
        else mustDecode(DispatchResult, frame.exit.value, name);
      }
      return;
    }
    const schema = HTTP_SCHEMAS.find(([pattern]) => pattern.test(request.path ?? ""))?.[1];
    expect(schema, `no schema for ${request.path}`).toBeDefined();
    const text = typeof recording.body === "string" ? recording.body : JSON.stringify(recording.body);
    const answer = { status: status ?? 0, contentType, text };
    if (status !== null && status >= 200 && status < 300) {
      decodeAnswer(answer, schema!, name);
      return;
    }
    let caught: unknown;
    try {
      decodeAnswer(answer, schema!, name);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(T3Error);
    expect((caught as T3Error).kind).toBe(EXPECTED_FAILURES[name]);
  });

  it("every non-frame recording is either a body above or a named analysis", () => {
    const frameLogs = recordingFiles(version).filter((name) => name.endsWith(".ndjson"));
    expect(recordingFiles(version).length).toBe(files.length + frameLogs.length + ANALYSIS_FILES.size);
  });
});

// ------------------------------------------------------------------ frame replay through the client

interface RecordedCall {
  id: string;
  tag: string;
  payload: unknown;
  responses: Record<string, unknown>[];
}

/** Groups a connection's recorded frames into requests and the frames answering each. */
function recordedCalls(frames: RecordedFrame[]): RecordedCall[] {
  const calls: RecordedCall[] = [];
  const byId = new Map<string, RecordedCall>();
  for (const { dir, frame } of frames) {
    if (dir === "send" && frame._tag === "Request") {
      const call = { id: String(frame.id), tag: String(frame.tag), payload: frame.payload, responses: [] };
      calls.push(call);
      byId.set(call.id, call);
    } else if (dir === "recv" && frame._tag !== "Pong") {
      // A connection-level Defect answers the request just before it (0.0.24 unknown method).
      const call = "requestId" in frame ? byId.get(String(frame.requestId)) : calls.at(-1);
      call?.responses.push(frame);
    }
  }
  return calls;
}

/**
 * A server that answers each request with the recorded frames of the matching recorded request,
 * rewriting ids and holding every next Chunk until the client's Ack, as T3 does.
 */
async function replayServer(calls: RecordedCall[]) {
  const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  const pending = [...calls];
  wss.on("connection", (ws: WebSocket) => {
    const queues = new Map<string, Record<string, unknown>[]>();
    const sendNext = (id: string) => {
      const queue = queues.get(id);
      while (queue && queue.length > 0) {
        const frame = queue.shift()!;
        const rewritten = "requestId" in frame ? { ...frame, requestId: id } : frame;
        ws.send(JSON.stringify(rewritten));
        if (frame._tag === "Chunk") return; // wait for the Ack
      }
    };
    ws.on("message", (data) => {
      const frame = mustDecode(RpcClientFrameSchema, JSON.parse(data.toString()), "client frame");
      if (frame._tag === "Ping") ws.send(JSON.stringify({ _tag: "Pong" }));
      if (frame._tag === "Ack") sendNext(frame.requestId);
      if (frame._tag === "Request") {
        // The client always asks for completion markers; match on what selects the data.
        const key = (payload: unknown) => {
          const { threadId, afterSequence, type, commandId } = (payload ?? {}) as Record<string, unknown>;
          return JSON.stringify([threadId, afterSequence, type, commandId]);
        };
        const index = pending.findIndex((call) => call.tag === frame.tag && key(call.payload) === key(frame.payload));
        if (index === -1) throw new Error(`no recorded request matches ${frame.tag} ${JSON.stringify(frame.payload)}`);
        const [call] = pending.splice(index, 1);
        queues.set(frame.id, [...call!.responses]);
        sendNext(frame.id);
      }
    });
  });
  return { url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws`, close: () => new Promise<void>((r) => wss.close(() => r())) };
}

const FRAME_LOGS: [RecordedVersion, string][] = [
  ["t3-0.0.24", "frames.jsonl"],
  ["t3-0.0.33", "ws-frames-focused.ndjson"],
  ["t3-0.0.33", "ws-frames-full-session.ndjson"],
  ["t3-0.0.33", "ws-frames-late-ack.ndjson"],
  ["t3-0.0.33", "ws-frames-late-ack-streaming.ndjson"],
  ["t3-0.0.33", "ws-frames-readonly-scope.ndjson"],
];

describe("recorded frames replayed through the client", () => {
  it("covers every recorded frame log", () => {
    const logs = (["t3-0.0.24", "t3-0.0.33"] as const).flatMap((version) =>
      recordingFiles(version)
        .filter((name) => /\.(ndjson|jsonl)$/.test(name))
        .map((name) => `${version}/${name}`),
    );
    expect(logs.sort()).toEqual(FRAME_LOGS.map(([version, name]) => `${version}/${name}`).sort());
  });

  it.each(FRAME_LOGS)("%s %s", async (version, name) => {
    const frames = readFrames(version, name);
    for (const { dir, frame } of frames) {
      if (dir === "recv") mustDecode(RpcServerFrame, frame, `${name} recv frame`);
      else mustDecode(RpcClientFrameSchema, frame, `${name} send frame`);
    }
    const connections = [...new Set(frames.map((frame) => frame.conn))];
    for (const conn of connections) {
      const calls = recordedCalls(frames.filter((frame) => frame.conn === conn));
      const server = await replayServer(calls);
      const socket = await RpcSocket.open({ url: server.url });
      const connection = new T3Connection(socket);
      try {
        const outcomes = await Promise.all(calls.map((call) => replayCall(connection, call)));
        for (const outcome of outcomes) expect(outcome.dropped, `${name}/${conn} request ${outcome.id}`).toBe(0);
      } finally {
        connection.close();
        await server.close();
      }
    }
  });
});

/** Issues the recorded call through the client and checks that every recorded item reached a listener. */
async function replayCall(connection: T3Connection, call: RecordedCall): Promise<{ id: string; dropped: number }> {
  const recordedItems = call.responses.flatMap((frame) => (frame._tag === "Chunk" ? (frame.values as { kind: string }[]) : []));
  const ends = call.responses.some((frame) => frame._tag === "Exit");
  if (call.tag === "orchestration.subscribeShell" || call.tag === "orchestration.subscribeThread") {
    const payload = call.payload as { threadId?: string; afterSequence?: number };
    const recorder = call.tag === "orchestration.subscribeShell" ? new ShellRecorder() : new ThreadRecorder();
    const options = payload.afterSequence !== undefined ? { afterSequence: payload.afterSequence } : {};
    const subscription =
      recorder instanceof ShellRecorder
        ? connection.subscribeShell(recorder, options)
        : connection.subscribeThread(payload.threadId!, recorder as ThreadRecorder, options);
    const expected = recordedItems.filter((item) => item.kind !== "synchronized").length;
    const delivered = () =>
      recorder instanceof ShellRecorder ? recorder.snapshots + recorder.deltas.length : (recorder.snapshotValue ? 1 : 0) + recorder.events.length;
    if (ends) {
      const error = await recorder.untilEnded();
      // Recorded streams end only when the recorder interrupted them or the server refused (scope).
      if (error) expect(["interrupted", "insufficient-scope"], error.message).toContain(error.kind);
    } else {
      await recorder.until(() => delivered() === expected);
      subscription.close();
    }
    return { id: call.id, dropped: expected - delivered() };
  }
  const outcome =
    call.tag === "orchestration.dispatchCommand"
      ? connection.dispatch(call.payload as ClientCommand)
      : call.tag === "server.getConfig"
        ? connection.getConfig()
        : connection.socket.call(call.tag, call.payload);
  const settled = await outcome.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if ("error" in settled) expect(settled.error).toBeInstanceOf(T3Error);
  return { id: call.id, dropped: 0 };
}
