// Contract tests of the T3 client against the protocol-faithful simulator, for both auth generations.
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import type { SkippedItem } from "../../../shared/fleet/types";
import { T3Error } from "../../../shared/t3/errors";
import { parsePairingInput } from "../../../shared/t3/pairing";
import type { Generation } from "../../../sim/protocol1/model";
import { makeThread, turnStartCommand } from "../../../sim/protocol1/threads.testkit";
import { SimServer } from "../../../sim/protocol1/server";
import { negotiateProtocol } from "./adapters";
import { type T3Credentials, T3EnvironmentClient } from "./client";
import { Protocol1HttpReads } from "./protocol1/http-reads";
import { RpcSocket } from "./rpc-socket";
import { ShellRecorder, ThreadRecorder } from "./streams.testkit";
import { OriginToken } from "./origin-token";
import { T3Connection } from "./protocol1/connection";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function startSim(generation: Generation, options: Partial<ConstructorParameters<typeof SimServer>[0]> = {}) {
  const sim = await new SimServer({ generation, tickMs: 5, ...options }).start();
  cleanups.push(() => sim.stop());
  return sim;
}

function clientFor(baseUrl: string, pingIntervalMs = 5_000) {
  return new T3EnvironmentClient(baseUrl, { clientLabel: "T3 Fleet on test", socket: { pingIntervalMs } });
}

async function pairAndConnect(sim: SimServer, pingIntervalMs?: number) {
  const target = parsePairingInput(sim.pairingUrl());
  if (!target.ok || !target.target.pairingToken) throw new Error("bad pairing url");
  const client = clientFor(target.target.baseUrl, pingIntervalMs);
  const paired = await client.pair({ pairingToken: target.target.pairingToken });
  const credentials: T3Credentials = { token: paired.token, generation: paired.generation };
  const connection = await T3Connection.open(client, credentials);
  cleanups.push(() => connection.close());
  return { client, paired, credentials, connection };
}

function seedThread(sim: SimServer, threadId?: string, provider = "codex") {
  return makeThread(sim, provider, threadId);
}

const turnStart = turnStartCommand;

async function expectT3Error(promise: Promise<unknown>, kind: T3Error["kind"]): Promise<T3Error> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(T3Error);
  expect((error as T3Error).kind).toBe(kind);
  return error as T3Error;
}

describe.each(["fork", "upstream"] as const)("T3 client against a %s simulator", (generation) => {
  it("pairs through a pairing URL, subscribes, dispatches a turn and observes the streamed reply", async () => {
    const sim = await startSim(generation);
    const threadId = seedThread(sim);
    const { paired, connection } = await pairAndConnect(sim);
    expect(paired.environment.environmentId).toBe(sim.environmentId);
    expect(paired.generation).toBe(generation);
    expect(paired.readOnly).toBe(false);

    const shell = new ShellRecorder();
    connection.subscribeShell(shell);
    await shell.until(() => shell.synchronizedAt !== undefined, "shell synchronized");
    expect(shell.row(threadId)?.session).toBeNull();

    const thread = new ThreadRecorder();
    connection.subscribeThread(threadId, thread);
    await thread.until(() => thread.snapshotValue !== undefined, "thread snapshot");

    const result = await connection.dispatch(turnStart(threadId, "Run the tests"));
    expect(result.sequence).toBeGreaterThan(0);
    await thread.until(() => thread.assistantTexts().some((text) => text.includes("Run the tests")), "assistant reply");
    await shell.until(() => shell.row(threadId)?.session?.status === "ready", "session ready");
    expect(thread.assistantTexts()).toEqual(["Codex reply to: Run the tests"]);
    const userMessages = thread.events.filter((e) => e.type === "thread.message-sent" && e.known && e.payload.role === "user");
    expect(userMessages).toHaveLength(1);
  });

  it("re-sending a commandId yields the same sequence and exactly one effect", async () => {
    const sim = await startSim(generation);
    const threadId = seedThread(sim);
    const { connection } = await pairAndConnect(sim);
    const command = turnStart(threadId, "once");
    const first = await connection.dispatch(command);
    const again = await connection.dispatch(command);
    expect(again.sequence).toBe(first.sequence);
    const thread = sim.engine.threads.get(threadId)!;
    expect(thread.messages.filter((message) => message.role === "user")).toHaveLength(1);
  });

  it("reports an invariant failure over the socket as rejected, with the server's detail", async () => {
    const sim = await startSim(generation);
    const { connection } = await pairAndConnect(sim);
    const error = await expectT3Error(connection.dispatch(turnStart("no-such-thread", "hi")), "rejected");
    expect(error.message).toContain("Thread 'no-such-thread' does not exist");
    // A rejected command stays rejected.
    const command = turnStart("no-such-thread", "hi", "cmd-rejected");
    await expectT3Error(connection.dispatch(command), "rejected");
    seedThread(sim, "no-such-thread");
    const again = await expectT3Error(connection.dispatch(command), "rejected");
    expect(again.message).toContain("Command previously rejected (cmd-rejected)");
  });

  it("answers an unknown method with a typed incompatible error and keeps the socket usable", async () => {
    const sim = await startSim(generation);
    const threadId = seedThread(sim);
    const { connection } = await pairAndConnect(sim);
    await expectT3Error(connection.socket.call("no.such.method", {}), "incompatible");
    expect(connection.socket.isOpen).toBe(true);
    await expect(connection.dispatch(turnStart(threadId, "still works"))).resolves.toHaveProperty("sequence");
  });

  it("gives a typed unauthorized error once the token is revoked, on a server that drops the revoked session's socket", async () => {
    const sim = await startSim(generation, { closeSocketsOnRevoke: true });
    const { client, credentials, connection } = await pairAndConnect(sim);
    const closed = new Promise<T3Error>((resolve) => connection.onClose(resolve));
    expect(sim.auth.revoke(credentials.token.secretFor(sim.baseUrl))).toBe(1);
    expect((await closed).kind).toBe("network");
    await expectT3Error(T3Connection.open(client, credentials), "unauthorized");
    const { session } = await client.authSession(credentials.token);
    expect(session.authenticated).toBe(false);
  });

  it("refuses a pairing token the second time, and after it expired", async () => {
    const sim = await startSim(generation);
    const url = parsePairingInput(sim.pairingUrl());
    if (!url.ok) throw new Error("unparseable");
    const client = clientFor(url.target.baseUrl);
    await client.pair({ pairingToken: url.target.pairingToken! });
    await expectT3Error(client.pair({ pairingToken: url.target.pairingToken! }), "unauthorized");

    const expiring = parsePairingInput(sim.pairingUrl());
    if (!expiring.ok) throw new Error("unparseable");
    sim.engine.clockOffsetMs = 5 * 60_000 + 1;
    await expectT3Error(client.pair({ pairingToken: expiring.target.pairingToken! }), "unauthorized");
  });

  it("adopts a raw bearer token and refuses a bad one", async () => {
    const sim = await startSim(generation);
    const session = sim.auth.issueSession({ scopes: ["orchestration:read", "orchestration:operate"], role: "owner", label: "cli" });
    const client = clientFor(sim.baseUrl);
    const paired = await client.pair({ bearerToken: session.token });
    expect(paired.environment.label).toBe(sim.label);
    await expectT3Error(client.pair({ bearerToken: "not-a-token" }), "unauthorized");
  });

  it("resumes a thread stream by sequence without duplicating events", async () => {
    const sim = await startSim(generation);
    const threadId = seedThread(sim);
    const { connection } = await pairAndConnect(sim);
    const first = new ThreadRecorder();
    const subscription = connection.subscribeThread(threadId, first);
    await first.until(() => first.synchronizedAt !== undefined);
    await connection.dispatch(turnStart(threadId, "one"));
    await first.until(() => first.assistantTexts().length === 1 && sim.engine.threads.get(threadId)!.session?.status === "ready");
    subscription.close();
    const lastSeen = first.events.at(-1)!.sequence;

    await connection.dispatch(turnStart(threadId, "two"));
    const resumed = new ThreadRecorder();
    connection.subscribeThread(threadId, resumed, { afterSequence: lastSeen });
    await resumed.until(() => resumed.synchronizedAt !== undefined);
    if (generation === "upstream") {
      // Upstream replays what is newer, then marks synchronized; no snapshot.
      expect(resumed.snapshotValue).toBeUndefined();
    } else {
      // The fork ignores afterSequence and starts with a fresh snapshot.
      expect(resumed.snapshotValue?.snapshotSequence).toBeGreaterThan(lastSeen);
    }
    await resumed.until(
      () =>
        sim.engine.threads.get(threadId)!.session?.status === "ready" &&
        resumed.events.some((e) => e.type === "thread.session-set" && e.known && e.payload.session.status === "ready"),
    );
    const sequences = resumed.events.map((event) => event.sequence);
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(sequences.every((sequence) => sequence > lastSeen)).toBe(true);
  });

  it("ends a subscription on close with an Interrupt and one end callback", async () => {
    const sim = await startSim(generation);
    const { connection } = await pairAndConnect(sim);
    const shell = new ShellRecorder();
    const subscription = connection.subscribeShell(shell);
    await shell.until(() => shell.synchronizedAt !== undefined);
    subscription.close();
    expect(await shell.untilEnded()).toBeUndefined();
    expect(connection.socket.isOpen).toBe(true);
  });

  it("detects a host that vanished without a FIN through missing Pongs", async () => {
    const sim = await startSim(generation);
    const { connection } = await pairAndConnect(sim, 50);
    const closed = new Promise<T3Error>((resolve) => connection.onClose(resolve));
    sim.setBlackhole(true);
    const error = await closed;
    expect(error.kind).toBe("timeout");
    sim.setBlackhole(false);
  });
});

describe("fork live-tail gap", () => {
  it("a bare thread subscription loses events between its snapshot and its Ack (the protocol-1 adapter repairs it)", async () => {
    const sim = await startSim("fork");
    const threadId = seedThread(sim);
    const { connection } = await pairAndConnect(sim);
    let gapSequence = -1;
    class GapRecorder extends ThreadRecorder {
      override snapshot(snapshot: Parameters<ThreadRecorder["snapshot"]>[0]): void {
        super.snapshot(snapshot);
        // Produced while our Ack is still on the wire: 0.0.24 does not deliver it live.
        gapSequence = sim.engine.append("thread", threadId, "thread.activity-appended", "provider:gap", {
          threadId,
          activity: {
            id: "gap-activity",
            tone: "info",
            kind: "task.started",
            summary: "in the gap",
            payload: { taskId: "t1" },
            turnId: null,
            createdAt: sim.engine.now(),
          },
        }).sequence;
      }
    }
    const thread = new GapRecorder();
    connection.subscribeThread(threadId, thread);
    await thread.until(() => thread.synchronizedAt !== undefined);
    await connection.getConfig(); // a round trip: our Ack has reached the server, the live tail is attached
    const after = sim.engine.append("thread", threadId, "thread.activity-appended", "provider:after", {
      threadId,
      activity: {
        id: "after-activity",
        tone: "info",
        kind: "task.progress",
        summary: "after",
        payload: { taskId: "t1" },
        turnId: null,
        createdAt: sim.engine.now(),
      },
    }).sequence;
    await thread.until(() => thread.events.some((event) => event.sequence === after));
    expect(thread.events.some((event) => event.sequence === gapSequence)).toBe(false);
    const sequences = thread.events.map((event) => event.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
  });
});

describe("T3 client socket credentials", () => {
  it.each([
    ["fork", "upstream"],
    ["upstream", "fork"],
  ] as const)("a %s server reached with a %s guess still gets a socket through the other ticket endpoint", async (actual, guessed) => {
    const sim = await startSim(actual);
    const session = sim.auth.issueSession({ scopes: ["orchestration:read", "orchestration:operate"], role: "client", label: "t" });
    const connection = await T3Connection.open(clientFor(sim.baseUrl), { token: OriginToken.issuedBy(sim.baseUrl, session.token), generation: guessed });
    cleanups.push(() => connection.close());
    const shell = new ShellRecorder();
    connection.subscribeShell(shell);
    await shell.until(() => shell.synchronizedAt !== undefined);
  });

  it("leaves no socket or timer behind after close", async () => {
    const sim = await startSim("upstream");
    const handles = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout" || kind === "TCPSocketWrap").length;
    const before = handles();
    const { connection } = await pairAndConnect(sim, 20);
    const shell = new ShellRecorder();
    connection.subscribeShell(shell);
    await shell.until(() => shell.synchronizedAt !== undefined);
    const closed = new Promise<T3Error>((resolve) => connection.onClose(resolve));
    connection.close();
    expect((await closed).kind).toBe("interrupted");
    await shell.untilEnded();
    await sim.stop(); // server side of the socket
    await new Promise((resolve) => setImmediate(resolve));
    expect(handles()).toBeLessThanOrEqual(before);
  });
});

describe("T3 client, upstream specifics", () => {
  it("reads the shell and a thread over HTTP and dispatches over HTTP", async () => {
    const sim = await startSim("upstream");
    const threadId = seedThread(sim);
    const { client, credentials } = await pairAndConnect(sim);
    const reads = new Protocol1HttpReads(client.http);
    const shell = await reads.getShell(credentials);
    expect(shell.threads.map((row) => row.id)).toContain(threadId);
    const detail = await reads.getThread(credentials, threadId);
    expect(detail.thread.id).toBe(threadId);
    await expectT3Error(reads.getThread(credentials, "missing"), "not-found");
    const result = await reads.dispatch(credentials, turnStart(threadId, "over http"));
    expect(result.sequence).toBeGreaterThan(0);
    // Invariant failures over HTTP are a 500 without the detail.
    const failure = await expectT3Error(reads.dispatch(credentials, turnStart("missing", "x")), "server");
    expect(failure.details.reason).toBe("orchestration_dispatch_failed");
  });

  it("refuses a pairing link that does not grant operate, and the link is then used up", async () => {
    const sim = await startSim("upstream");
    const url = parsePairingInput(sim.pairingUrl({ scopes: ["orchestration:read"] }));
    if (!url.ok) throw new Error("unparseable");
    const client = clientFor(sim.baseUrl);
    const error = await expectT3Error(client.pair({ pairingToken: url.target.pairingToken! }), "insufficient-scope");
    expect(error.details.reason).toBe("scope_not_granted");
    await expectT3Error(client.pair({ pairingToken: url.target.pairingToken! }), "unauthorized");
  });

  it("marks a read-only token as such and gets a typed scope error when dispatching", async () => {
    const sim = await startSim("upstream");
    const threadId = seedThread(sim);
    const session = sim.auth.issueSession({ scopes: ["orchestration:read"], role: "client", label: "ro" });
    const client = clientFor(sim.baseUrl);
    const paired = await client.pair({ bearerToken: session.token });
    expect(paired.readOnly).toBe(true);
    const connection = await T3Connection.open(client, { token: paired.token, generation: "upstream" });
    cleanups.push(() => connection.close());
    const error = await expectT3Error(connection.dispatch(turnStart(threadId, "x")), "insufficient-scope");
    expect(error.details.requiredScope).toBe("orchestration:operate");
    await expectT3Error(
      new Protocol1HttpReads(client.http).dispatch({ token: paired.token, generation: "upstream" }, turnStart(threadId, "x")),
      "insufficient-scope",
    );
  });

  it("streams token deltas when the server has legacy token streaming on", async () => {
    const sim = await startSim("upstream", { tokenStreaming: true });
    const threadId = seedThread(sim, undefined, "claudeAgent");
    const { connection } = await pairAndConnect(sim);
    const thread = new ThreadRecorder();
    connection.subscribeThread(threadId, thread);
    await thread.until(() => thread.synchronizedAt !== undefined);
    await connection.dispatch(turnStart(threadId, "stream please"));
    await thread.until(() => thread.events.some((e) => e.type === "thread.message-sent" && e.known && e.payload.role === "assistant" && !e.payload.streaming));
    const deltas = thread.events.filter((e) => e.type === "thread.message-sent" && e.known && e.payload.role === "assistant" && e.payload.streaming);
    expect(deltas.length).toBeGreaterThan(2);
    expect(thread.assistantTexts()).toEqual(["Claude reply to: stream please"]);
  });

  it("reports the server config with resume markers", async () => {
    const sim = await startSim("upstream");
    const { connection } = await pairAndConnect(sim);
    const config = await connection.getConfig();
    expect(config.environment.environmentId).toBe(sim.environmentId);
    expect(config.shellResumeCompletionMarker).toBe(true);
  });
});

describe("T3 client against hostile or foreign servers", () => {
  async function rawServer(handler: RequestListener) {
    const server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** A WebSocket server on loopback (closed after the test) and the RPC socket URL that reaches it. */
  async function rawSocketServer() {
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    cleanups.push(() => new Promise<void>((resolve) => wss.close(() => resolve())));
    await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
    return { wss, url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws` };
  }

  it("says a web page is not a T3 server", async () => {
    const baseUrl = await rawServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>router admin</html>");
    });
    await expectT3Error(clientFor(baseUrl).identify(), "incompatible");
  });

  it("reads the protocol a server announces; negotiation accepts 2 and reports an unknown newer protocol as incompatible", async () => {
    let announced = 2;
    const baseUrl = await rawServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ environmentId: "e", label: "v3", serverVersion: "0.1.0", capabilities: {}, orchestrationProtocolVersion: announced }));
    });
    expect(negotiateProtocol(await clientFor(baseUrl).identify())).toBe(2);
    announced = 3;
    const descriptor = await clientFor(baseUrl).identify();
    expect(descriptor.orchestrationProtocolVersion).toBe(3);
    const error = await expectT3Error(
      Promise.resolve().then(() => negotiateProtocol(descriptor)),
      "incompatible",
    );
    expect(error.message).toContain("Update T3 Fleet");
    expect(error.message).toContain("protocol 3");
  });

  it("reports a descriptor that does not decode with the path of the bad field", async () => {
    const baseUrl = await rawServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ environmentId: "", label: "x", serverVersion: "1" }));
    });
    const error = await expectT3Error(clientFor(baseUrl).identify(), "decode");
    expect(error.details.decode?.path).toBe("environmentId");
  });

  it("gives a network error for a closed port", async () => {
    const baseUrl = await rawServer(() => {});
    const port = new URL(baseUrl).port;
    await cleanups.pop()!();
    await expectT3Error(clientFor(`http://127.0.0.1:${port}`).identify(), "network");
  });

  it("turns a malformed frame into a typed decode error and never crashes", async () => {
    const { wss, url } = await rawSocketServer();
    // Truncated JSON that names a request: the call it answers cannot be trusted.
    const frames = [
      '{"_tag":"Exit","requestId":"1","exit":{"_tag":"Succ',
      JSON.stringify({ _tag: "Chunk", requestId: "1" }),
      JSON.stringify({ _tag: "Exit", requestId: "1", exit: { _tag: "Maybe" } }),
    ];
    wss.on("connection", (ws) => {
      ws.on("message", () => ws.send(frames.shift() ?? "null"));
    });
    for (let i = 0; i < 3; i++) {
      const socket = await RpcSocket.open({ url });
      const error = await expectT3Error(socket.call("orchestration.dispatchCommand", {}), "decode");
      expect(error.message.length).toBeGreaterThan(0);
      expect(socket.isOpen).toBe(false);
    }
  });

  it("skips and counts a frame that is not JSON and names no request; the connection and its calls go on", async () => {
    const { wss, url } = await rawSocketServer();
    wss.on("connection", (ws) => {
      ws.on("message", (data) => {
        const frame = JSON.parse(data.toString()) as { _tag: string; id?: string };
        if (frame._tag !== "Request") return;
        ws.send("<html>502 Bad Gateway</html>");
        ws.send("{not json");
        ws.send(JSON.stringify({ _tag: "Exit", requestId: frame.id, exit: { _tag: "Success", value: { sequence: 4 } } }));
      });
    });
    const socket = await RpcSocket.open({ url });
    cleanups.push(() => socket.close());
    const skipped: SkippedItem[] = [];
    socket.onSkipped((item) => skipped.push(item));
    await expect(socket.call("orchestration.dispatchCommand", {})).resolves.toEqual({ sequence: 4 });
    expect(skipped).toEqual([
      expect.objectContaining({ method: "RPC frame", message: expect.stringContaining("not JSON") }),
      expect.objectContaining({ method: "RPC frame", message: expect.stringContaining("not JSON") }),
    ]);
    expect(socket.isOpen).toBe(true);
  });

  it("skips and reports an item that does not decode; ends the stream only when it cannot be trusted", async () => {
    const { wss, url } = await rawSocketServer();
    wss.on("connection", (ws) => {
      ws.on("message", (data) => {
        const frame = JSON.parse(data.toString()) as { _tag: string; id?: string; requestId?: string };
        if (frame._tag === "Request" && frame.id === "1") {
          ws.send(
            JSON.stringify({ _tag: "Chunk", requestId: "1", values: [{ kind: "thread-upserted", sequence: 3, thread: { id: 5 } }, { kind: "synchronized" }] }),
          );
        }
        if (frame._tag === "Ack" && frame.requestId === "1") {
          // A frame kind no client knows: skipped too. Then a snapshot that does not decode: no base left.
          ws.send(JSON.stringify({ _tag: "FutureFrame", detail: "from a newer server" }));
          ws.send(JSON.stringify({ _tag: "Chunk", requestId: "1", values: [{ kind: "snapshot", snapshot: { snapshotSequence: "x" } }] }));
        }
        if (frame._tag === "Request" && frame.id === "2")
          ws.send(JSON.stringify({ _tag: "Exit", requestId: "2", exit: { _tag: "Success", value: { sequence: 9 } } }));
      });
    });
    const socket = await RpcSocket.open({ url });
    const frameSkips: SkippedItem[] = [];
    socket.onSkipped((item) => frameSkips.push(item));
    const connection = new T3Connection(socket);
    cleanups.push(() => connection.close());
    const skipped: SkippedItem[] = [];
    let synchronized = false;
    const ended = new Promise<T3Error | undefined>((resolve) =>
      connection.subscribeShell({
        snapshot: () => {},
        delta: () => {},
        synchronized: () => (synchronized = true),
        skipped: (item) => skipped.push(item),
        end: resolve,
      }),
    );
    const error = await ended;
    expect(skipped).toEqual([{ method: "orchestration.subscribeShell", path: "thread.id", message: expect.any(String), sequence: 3 }]);
    expect(synchronized).toBe(true); // the stream went on after the bad row
    expect(frameSkips).toEqual([expect.objectContaining({ method: "RPC frame" })]);
    expect(error?.kind).toBe("decode");
    expect(error?.details.decode?.path).toBe("snapshot.snapshotSequence");
    expect(socket.isOpen).toBe(true); // only that stream ended
    await expect(connection.dispatch(turnStart("t", "x"))).resolves.toEqual({ sequence: 9 });
  });
});
