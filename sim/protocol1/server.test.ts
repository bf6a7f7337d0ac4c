// The simulator's own rules: framing and Ack gating, receipts, resume by sequence, auth, and the
// generation quirks recorded from real servers (docs/t3-protocols.md).
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { Generation } from "./model";
import { RawPeer } from "../raw-peer.testkit";
import { makeThread, nextEvent, sendTurn } from "./threads.testkit";
import { SimServer } from "./server";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function startSim(generation: Generation, tickMs = 5) {
  const sim = await new SimServer({ generation, tickMs }).start();
  cleanups.push(() => sim.stop());
  return sim;
}

async function peer(sim: SimServer, scopes?: string[]) {
  const raw = await RawPeer.connect(sim, scopes);
  cleanups.push(() => raw.close());
  return raw;
}

describe.each(["fork", "upstream"] as const)("simulator framing (%s)", (generation) => {
  it("sends no second Chunk of a stream before the Ack, then batches what queued", async () => {
    const sim = await startSim(generation);
    const threadId = makeThread(sim);
    const raw = await peer(sim);
    const id = raw.request("orchestration.subscribeThread", { threadId });
    await raw.until(() => raw.chunks(id).length === 1);
    raw.ack(id); // attach the live tail (fork attaches it only after this Ack)
    await raw.barrier();
    sim.engine.dispatch({ type: "thread.meta.update", commandId: "m1", threadId, title: "x" }); // not forwarded on thread streams
    const turnDone = nextEvent(sim, (e) => e.type === "thread.session-set" && (e.payload.session as { status: string }).status === "ready");
    sendTurn(sim, threadId, "hello");
    await raw.until(() => raw.chunks(id).length === 2);
    await turnDone;
    await raw.barrier();
    expect(raw.chunks(id)).toHaveLength(2); // everything else waits for the Ack
    raw.ack(id);
    await raw.until(() => raw.chunks(id).length === 3);
    const batched = raw.chunks(id)[2]!;
    expect(batched.length).toBeGreaterThan(1);
  });

  it("answers Ping with Pong and a malformed command with Die naming the missing key", async () => {
    const sim = await startSim(generation);
    const raw = await peer(sim);
    await raw.barrier();
    const exit = await raw.call("orchestration.dispatchCommand", { type: "thread.create" });
    expect(exit).toEqual({ _tag: "Failure", cause: [{ _tag: "Die", defect: 'Missing key\n  at ["commandId"]' }] });
  });

  it("ends a stream with an Interrupt exit", async () => {
    const sim = await startSim(generation);
    const raw = await peer(sim);
    const id = raw.request("orchestration.subscribeShell", {});
    await raw.until(() => raw.chunks(id).length === 1);
    raw.send({ _tag: "Interrupt", requestId: id });
    await raw.until(() => raw.exit(id) !== undefined);
    expect(raw.exit(id)!.cause).toEqual([{ _tag: "Interrupt", fiberId: expect.any(Number) }]);
  });

  it("keeps command receipts: the same commandId returns the same sequence and has no second effect", async () => {
    const sim = await startSim(generation);
    const threadId = makeThread(sim);
    const raw = await peer(sim);
    const command = {
      type: "thread.turn.start",
      commandId: "dup-1",
      threadId,
      message: { messageId: "m-1", role: "user", text: "once", attachments: [] },
      runtimeMode: "full-access",
      interactionMode: "default",
      createdAt: new Date().toISOString(),
    };
    const first = await raw.call("orchestration.dispatchCommand", command);
    const again = await raw.call("orchestration.dispatchCommand", command);
    expect(again).toEqual(first);
    expect(sim.engine.threads.get(threadId)!.messages.filter((m) => m.role === "user")).toHaveLength(1);
  });

  it("fails a thread subscription for an unknown thread with OrchestrationGetSnapshotError", async () => {
    const sim = await startSim(generation);
    const raw = await peer(sim);
    const exit = await raw.call("orchestration.subscribeThread", { threadId: "nope" });
    expect(exit).toEqual({
      _tag: "Failure",
      cause: [{ _tag: "Fail", error: { _tag: "OrchestrationGetSnapshotError", message: "Thread nope was not found" } }],
    });
  });
});

describe("simulator generation quirks", () => {
  it("fork: an unknown method is a connection-level Defect; upstream: a per-request Die", async () => {
    const fork = await peer(await startSim("fork"));
    fork.request("no.such.method", {});
    await fork.until(() => fork.frames.some((f) => f._tag === "Defect"));
    expect(fork.frames.find((f) => f._tag === "Defect")!.defect).toBe("Unknown request tag: no.such.method");

    const upstream = await peer(await startSim("upstream"));
    const exit = await upstream.call("no.such.method", {});
    expect(exit).toEqual({ _tag: "Failure", cause: [{ _tag: "Die", defect: "Unknown request tag: no.such.method" }] });
  });

  it("fork: events produced before the first Ack are lost (the 0.0.24 late-Ack loss)", async () => {
    const sim = await startSim("fork");
    const threadId = makeThread(sim);
    const raw = await peer(sim);
    const id = raw.request("orchestration.subscribeShell", {});
    await raw.until(() => raw.chunks(id).length === 1);
    const lost = sim.engine.dispatch({ type: "thread.meta.update", commandId: "late-1", threadId, title: "renamed while unacked" });
    raw.ack(id);
    await raw.barrier();
    const kept = sim.engine.dispatch({ type: "thread.meta.update", commandId: "late-2", threadId, title: "renamed after ack" });
    await raw.until(() => raw.chunks(id).length === 2);
    const sequences = raw.values(id).flatMap((item) => (typeof item.sequence === "number" ? [item.sequence] : []));
    expect(sequences).toEqual([kept]);
    expect(sequences).not.toContain(lost);
  });

  it("upstream: events produced while an Ack is late arrive batched, nothing is lost", async () => {
    const sim = await startSim("upstream");
    const threadId = makeThread(sim);
    const raw = await peer(sim);
    const id = raw.request("orchestration.subscribeThread", { threadId, requestCompletionMarker: true });
    await raw.until(() => raw.chunks(id).length === 1);
    const done = nextEvent(sim, (e) => e.type === "thread.session-set" && (e.payload.session as { status: string }).status === "ready");
    sendTurn(sim, threadId, "late ack");
    await done;
    raw.ack(id);
    await raw.until(() => raw.chunks(id).length === 2);
    const types = raw.chunks(id)[1]!.map((item) => (item as { kind: string; event?: { type: string } }).event?.type ?? (item as { kind: string }).kind);
    expect(types[0]).toBe("synchronized");
    expect(types).toContain("thread.message-sent");
    expect(types.at(-1)).toBe("thread.session-set");
  });

  it("upstream: the shell stream coalesces a turn's updates per thread", async () => {
    const sim = await startSim("upstream");
    const threadId = makeThread(sim);
    const raw = await peer(sim);
    const id = raw.request("orchestration.subscribeShell", { requestCompletionMarker: true });
    await raw.until(() => raw.chunks(id).length >= 1);
    const eventsBefore = sim.engine.sequence;
    const done = nextEvent(sim, (e) => e.type === "thread.session-set" && (e.payload.session as { status: string }).status === "ready");
    sendTurn(sim, threadId, "many events");
    await done;
    const produced = sim.engine.sequence - eventsBefore;
    const upserts = () => raw.values(id).filter((item) => item.kind === "thread-upserted");
    await raw.until(() => {
      raw.chunks(id).forEach(() => raw.ack(id));
      return upserts().some((item) => (item.sequence as number) === sim.engine.sequence);
    });
    expect(upserts().length).toBeLessThan(produced);
  });

  it("upstream: resume by afterSequence replays newer items then synchronized; fork always sends a snapshot", async () => {
    for (const generation of ["upstream", "fork"] as const) {
      const sim = await startSim(generation);
      const threadId = makeThread(sim);
      const after = sim.engine.sequence;
      sim.engine.dispatch({ type: "thread.meta.update", commandId: `r-${generation}`, threadId, title: "changed" });
      const raw = await peer(sim);
      const id = raw.request("orchestration.subscribeShell", { afterSequence: after, requestCompletionMarker: true });
      await raw.until(() => raw.chunks(id).length === 1);
      raw.ack(id);
      if (generation === "upstream") await raw.until(() => raw.chunks(id).length === 2);
      else await raw.barrier();
      const kinds = raw.values(id).map((item) => item.kind);
      // As recorded on 0.0.33, the marker follows in its own Chunk after the Ack.
      expect(kinds).toEqual(generation === "upstream" ? ["thread-upserted", "synchronized"] : ["snapshot"]);
    }
  });

  it("upstream: a resume gap beyond the replay window falls back to a snapshot", async () => {
    const sim = await startSim("upstream");
    const threadId = makeThread(sim);
    const after = sim.engine.sequence;
    for (let i = 0; i < 1001; i++) sim.engine.dispatch({ type: "thread.meta.update", commandId: `gap-${i}`, threadId, title: `t${i}` });
    const raw = await peer(sim);
    const id = raw.request("orchestration.subscribeShell", { afterSequence: after, requestCompletionMarker: true });
    await raw.until(() => raw.chunks(id).length === 1);
    raw.ack(id);
    await raw.until(() => raw.chunks(id).length === 2);
    expect(raw.values(id).map((item) => item.kind)).toEqual(["snapshot", "synchronized"]);
  });

  it("upstream: a read-only token can subscribe but not dispatch", async () => {
    const sim = await startSim("upstream");
    const raw = await peer(sim, ["orchestration:read"]);
    const id = raw.request("orchestration.subscribeShell", {});
    await raw.until(() => raw.chunks(id).length === 1);
    const exit = await raw.call("orchestration.dispatchCommand", { type: "thread.meta.update", commandId: "ro", threadId: "t", title: "x" });
    expect(exit).toEqual({
      _tag: "Failure",
      cause: [
        {
          _tag: "Fail",
          error: {
            _tag: "EnvironmentAuthorizationError",
            message: "The authenticated token is missing required scope: orchestration:operate.",
            requiredScope: "orchestration:operate",
          },
        },
      ],
    });
  });

  it("upstream, as real 0.0.42: a revoked session's open socket keeps working; new requests with its token are refused", async () => {
    const sim = await new SimServer({ generation: "upstream", tickMs: 5 }).start();
    cleanups.push(() => sim.stop());
    const threadId = makeThread(sim);
    const raw = await peer(sim);
    const other = sim.auth.issueSession({ scopes: ["orchestration:read", "orchestration:operate"], role: "client", label: "http" });
    expect(sim.auth.revoke()).toBeGreaterThanOrEqual(2);
    const renamed = await raw.call("orchestration.dispatchCommand", { type: "thread.meta.update", commandId: "after-revoke", threadId, title: "Still served" });
    expect(renamed).toMatchObject({ _tag: "Success" });
    expect(sim.engine.threads.get(threadId)!.title).toBe("Still served");
    const shell = await fetch(`${sim.baseUrl}/api/orchestration/shell`, { headers: { authorization: `Bearer ${other.token}` } });
    expect(shell.status).toBe(401);
    const ticket = await fetch(`${sim.baseUrl}/api/auth/websocket-ticket`, { method: "POST", headers: { authorization: `Bearer ${other.token}` } });
    expect(ticket.status).toBe(401);
  });

  it("upstream 0.0.42: archive and delete both leave the shell as thread-removed and read as not found; only the full snapshot tells them apart", async () => {
    const sim = await new SimServer({ generation: "upstream", tickMs: 5, serverVersion: "0.0.42" }).start();
    cleanups.push(() => sim.stop());
    const archived = makeThread(sim);
    const deleted = makeThread(sim);
    const raw = await peer(sim);
    const shell = raw.request("orchestration.subscribeShell", {});
    await raw.until(() => raw.chunks(shell).length > 0);
    raw.ack(shell);
    sim.engine.dispatch({ type: "thread.archive", commandId: "a-1", threadId: archived });
    sim.engine.dispatch({ type: "thread.delete", commandId: "d-1", threadId: deleted });
    const removed = () => raw.values(shell).filter((item) => item.kind === "thread-removed");
    // Each Chunk is acknowledged before the next is sent.
    for (let seen = raw.chunks(shell).length; removed().length < 2; seen = raw.chunks(shell).length) {
      await raw.until(() => raw.chunks(shell).length > seen);
      raw.ack(shell);
    }
    expect(removed().map((item) => Object.keys(item).sort())).toEqual([
      ["kind", "sequence", "threadId"],
      ["kind", "sequence", "threadId"],
    ]);
    const token = sim.auth.issueSession({ scopes: ["orchestration:read"], role: "client", label: "http" }).token;
    const get = (path: string) => fetch(`${sim.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
    expect((await get(`/api/orchestration/threads/${archived}`)).status).toBe(404);
    expect((await get(`/api/orchestration/threads/${deleted}`)).status).toBe(404);
    for (const threadId of [archived, deleted]) {
      const exit = await raw.call("orchestration.subscribeThread", { threadId });
      expect(exit).toMatchObject({ _tag: "Failure", cause: [{ _tag: "Fail", error: { _tag: "OrchestrationGetSnapshotError" } }] });
    }
    const snapshot = (await (await get("/api/orchestration/snapshot")).json()) as {
      threads: { id: string; archivedAt: string | null; deletedAt: string | null }[];
    };
    const stateOf = (threadId: string) => snapshot.threads.find((thread) => thread.id === threadId);
    expect(stateOf(archived)).toMatchObject({ archivedAt: expect.any(String), deletedAt: null });
    expect(stateOf(deleted)).toMatchObject({ deletedAt: expect.any(String) });
  });

  it("as real 0.0.42 after a (re)start: a connection accepted before the server serves is never answered; later ones are", async () => {
    const sim = await new SimServer({ generation: "upstream", tickMs: 5, deafAfterListenMs: 400 }).start();
    cleanups.push(() => sim.stop());
    const descriptor = (signal: AbortSignal) => fetch(`${sim.baseUrl}/.well-known/t3/environment`, { signal, headers: { connection: "close" } });
    const early = descriptor(AbortSignal.timeout(sim.servesFrom - Date.now() + 300));
    await expect(early).rejects.toThrow(/abort|timeout/i);
    expect(Date.now()).toBeGreaterThanOrEqual(sim.servesFrom);
    const late = await descriptor(AbortSignal.timeout(5_000));
    expect(late.status).toBe(200);
  });

  it("upstream: an upgrade without credentials is an HTTP 401 with a tagged body", async () => {
    const sim = await startSim("upstream");
    const refused = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${sim.baseUrl}/ws`, {
        headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" },
      });
      req.on("response", (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body)).toEqual({ _tag: "EnvironmentAuthInvalidError", code: "auth_invalid", reason: "missing_credential" });
  });
});
