// The simulator against the recordings of real servers: for the recorded scenarios it must produce
// the same keys, the same enum values and the same frame sequence shapes (0.0.24 ⇔ fork, 0.0.33 ⇔ upstream).
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { Generation, WireEvent } from "./model";
import { RawPeer } from "../raw-peer.testkit";
import { makeThread, nextEvent, sendTurn } from "./threads.testkit";
import { type HttpRecording, type RecordedVersion, readFrames, readRecording } from "../recordings";
import { SimServer } from "./server";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function startSim(generation: Generation) {
  const sim = await new SimServer({ generation, tickMs: 3 }).start();
  cleanups.push(() => sim.stop());
  return sim;
}

type Json = Record<string, unknown>;
const keys = (value: unknown) => Object.keys(value as Json).sort();
const body = (version: RecordedVersion, name: string) => (readRecording(version, name) as HttpRecording).body as Json;

async function http(sim: SimServer, path: string, init: RequestInit = {}) {
  const response = await fetch(`${sim.baseUrl}${path}`, init);
  const text = await response.text();
  const contentType = response.headers.get("content-type") ?? "";
  // Bodies are typed loosely on purpose: the test compares their keys with recorded ones.
  const parsed = (contentType.includes("json") ? JSON.parse(text) : text) as Json & string;
  return { status: response.status, contentType, body: parsed };
}

/** Runs one completed turn on a fresh thread and returns the thread's forwarded events and final rows. */
async function completedTurn(sim: SimServer, text = "Say hello") {
  const threadId = makeThread(sim);
  const events: WireEvent[] = [];
  let replied = false;
  const listener = (event: WireEvent) => {
    if (event.aggregateId !== threadId) return;
    events.push(event);
    if (event.type === "thread.message-sent" && event.payload.role === "assistant" && !event.payload.streaming) replied = true;
  };
  sim.engine.on("event", listener);
  const done = nextEvent(
    sim,
    (e) => replied && e.aggregateId === threadId && e.type === "thread.session-set" && (e.payload.session as Json).status === "ready",
  );
  sendTurn(sim, threadId, text);
  await done;
  sim.engine.off("event", listener);
  const thread = sim.engine.threads.get(threadId)!;
  return { threadId, events, shellRow: sim.engine.shellRow(thread), detail: sim.engine.threadDetail(thread) };
}

/** Event signature that survives ids and times: type plus what distinguishes a step of a turn. */
function signature(event: { type: string; payload: Json }): string {
  const p = event.payload;
  if (event.type === "thread.session-set") return `session:${(p.session as Json).status}`;
  if (event.type === "thread.message-sent")
    return `message:${p.role}:${p.role === "assistant" ? (p.streaming ? "delta" : p.text === "" ? "close" : "final") : "sent"}`;
  if (event.type === "thread.activity-appended") return `activity:${(p.activity as Json).kind}`;
  return event.type;
}
const collapse = (items: string[]) => items.filter((item, i) => item !== items[i - 1]);

const RECORDED: Record<Generation, RecordedVersion> = { fork: "t3-0.0.24", upstream: "t3-0.0.33" };

describe("simulator vs recorded 0.0.33 (upstream)", () => {
  const version = RECORDED.upstream;

  it("HTTP bodies have the recorded keys", async () => {
    const sim = await startSim("upstream");
    const descriptor = await http(sim, "/.well-known/t3/environment");
    expect(keys(descriptor.body)).toEqual(keys(body(version, "http-well-known-environment.json")));
    expect(keys(descriptor.body.capabilities)).toEqual(keys(body(version, "http-well-known-environment.json").capabilities));
    expect(keys((await http(sim, "/api/auth/session")).body)).toEqual(keys(body(version, "http-auth-session-unauthenticated.json")));

    const token = new URL(sim.pairingUrl()).hash.slice("#token=".length);
    const form = new URLSearchParams({
      grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
      subject_token: token,
      subject_token_type: "urn:t3:params:oauth:token-type:environment-bootstrap",
      requested_token_type: "urn:ietf:params:oauth:token-type:access_token",
      scope: "orchestration:read orchestration:operate",
    });
    const exchanged = await http(sim, "/oauth/token", { method: "POST", body: form, headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(keys(exchanged.body)).toEqual(keys(body(version, "http-oauth-token-response.json")));
    const reused = await http(sim, "/oauth/token", { method: "POST", body: form, headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(reused.status).toBe(401);
    expect(keys(reused.body)).toEqual(keys(body(version, "error-oauth-token-reused-pairing-token.json")));

    const auth = { authorization: `Bearer ${exchanged.body.access_token as string}` };
    expect(keys((await http(sim, "/api/auth/session", { headers: auth })).body)).toEqual(keys(body(version, "http-auth-session-authenticated.json")));
    expect(keys((await http(sim, "/api/auth/websocket-ticket", { method: "POST", headers: auth })).body)).toEqual(
      keys(body(version, "http-websocket-ticket-response.json")),
    );

    const { threadId } = await completedTurn(sim);
    const shell = await http(sim, "/api/orchestration/shell", { headers: auth });
    const recordedShell = body(version, "http-shell-after-a-completed.json");
    expect(keys(shell.body)).toEqual(keys(recordedShell));
    expect(keys((shell.body.projects as Json[])[0])).toEqual(keys((recordedShell.projects as Json[])[0]));
    expect(keys((shell.body.threads as Json[])[0])).toEqual(keys((recordedShell.threads as Json[])[0]));

    const detail = await http(sim, `/api/orchestration/threads/${threadId}`, { headers: auth });
    const recordedDetail = body(version, "http-thread-a-completed.json");
    expect(keys(detail.body)).toEqual(keys(recordedDetail));
    expect(keys(detail.body.thread)).toEqual(keys(recordedDetail.thread));
    const [user, assistant] = (detail.body.thread as Json).messages as Json[];
    const [recordedUser, recordedAssistant] = (recordedDetail.thread as Json).messages as Json[];
    expect(keys(user)).toEqual(keys(recordedUser));
    expect(keys(assistant)).toEqual(keys(recordedAssistant));
    expect(keys((detail.body.thread as Json).session)).toEqual(keys((recordedDetail.thread as Json).session));
    expect(keys((detail.body.thread as Json).latestTurn)).toEqual(keys((recordedDetail.thread as Json).latestTurn));
    expect(keys(((detail.body.thread as Json).activities as Json[])[0])).toEqual(keys(((recordedDetail.thread as Json).activities as Json[])[0]));

    const missing = await http(sim, "/api/orchestration/threads/no-such-thread", { headers: auth });
    expect([missing.status, keys(missing.body)]).toEqual([404, keys(body(version, "error-404-thread-not-found.json"))]);
    const undecodable = await http(sim, "/api/orchestration/dispatch", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ type: "thread.create", commandId: "x" }),
    });
    expect([undecodable.status, undecodable.contentType, undecodable.body]).toEqual([400, "", ""]);
    const invariant = await http(sim, "/api/orchestration/dispatch", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({
        type: "thread.turn.start",
        commandId: "x2",
        threadId: "no-such-thread",
        message: { messageId: "m", role: "user", text: "t", attachments: [] },
        runtimeMode: "full-access",
        interactionMode: "default",
        createdAt: new Date().toISOString(),
      }),
    });
    expect([invariant.status, keys(invariant.body), invariant.body.reason]).toEqual([
      500,
      keys(body(version, "error-dispatch-invariant-http.json")),
      "orchestration_dispatch_failed",
    ]);
    const unauthenticated = await http(sim, "/api/orchestration/shell");
    expect([unauthenticated.status, unauthenticated.body]).toMatchObject([401, { reason: "missing_credential" }]);
    const unknownGet = await http(sim, "/no/such/page");
    expect([unknownGet.status, unknownGet.contentType]).toEqual([503, "text/plain"]);
  });

  it("a scope mismatch burns the pairing token, as recorded", async () => {
    const sim = await startSim("upstream");
    const token = new URL(sim.pairingUrl()).hash.slice("#token=".length);
    const exchange = (scope: string) =>
      http(sim, "/oauth/token", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
          subject_token: token,
          subject_token_type: "urn:t3:params:oauth:token-type:environment-bootstrap",
          requested_token_type: "urn:ietf:params:oauth:token-type:access_token",
          scope,
        }),
      });
    const mismatch = await exchange("access:write");
    expect([mismatch.status, mismatch.body.reason]).toEqual([400, body(version, "error-400-scope-not-granted.json").reason]);
    const retry = await exchange("orchestration:read");
    expect([retry.status, retry.body.reason]).toEqual([401, body(version, "error-401-pairing-token-burned-by-scope-mismatch.json").reason]);
  });

  it("a completed turn streams the recorded event sequence, with the recorded keys", async () => {
    const sim = await startSim("upstream");
    const { events } = await completedTurn(sim);
    const forwarded = events.filter((event) => ["thread.message-sent", "thread.session-set", "thread.activity-appended"].includes(event.type));
    const recordedEvents = readFrames(version, "ws-frames-full-session.ndjson")
      .filter((frame) => frame.dir === "recv" && frame.frame._tag === "Chunk" && frame.frame.requestId === "3")
      .flatMap((frame) => (frame.frame.values as Json[]).filter((item) => item.kind === "event").map((item) => item.event as WireEvent & Json))
      .filter((event) => event.sequence >= 3 && event.sequence <= 14);
    expect(collapse(forwarded.map(signature))).toEqual(collapse(recordedEvents.map(signature)));
    expect(keys(forwarded[0])).toEqual(keys(recordedEvents[0]));
    for (const type of ["thread.message-sent", "thread.session-set", "thread.activity-appended"]) {
      const ours = forwarded.find((event) => event.type === type)!;
      const theirs = recordedEvents.find((event) => event.type === type)!;
      expect(keys(ours.payload), type).toEqual(keys(theirs.payload));
    }
  });

  it("frame shapes: snapshot then marker, Die for unknown methods and malformed commands, equal exits for a duplicate", async () => {
    const sim = await startSim("upstream");
    const raw = await RawPeer.connect(sim);
    cleanups.push(() => raw.close());
    const id = raw.request("orchestration.subscribeShell", { requestCompletionMarker: true });
    await raw.until(() => raw.chunks(id).length === 1);
    raw.ack(id);
    await raw.until(() => raw.chunks(id).length === 2);
    const recorded = readFrames(version, "ws-frames-focused.ndjson")
      .filter((f) => f.frame._tag === "Chunk" && f.frame.requestId === "4")
      .slice(0, 2);
    expect(raw.chunks(id).map((chunk) => chunk.map((v) => (v as Json).kind))).toEqual(recorded.map((f) => (f.frame.values as Json[]).map((v) => v.kind)));

    const unknown = await raw.call("no.such.method", {});
    const recordedUnknown = readFrames(version, "ws-frames-focused.ndjson").find((f) => f.frame._tag === "Exit" && f.frame.requestId === "99")!.frame;
    expect(unknown).toEqual(recordedUnknown.exit);
    const malformed = await raw.call("orchestration.dispatchCommand", { type: "thread.create", commandId: "cmd-malformed" });
    const recordedMalformed = readFrames(version, "ws-frames-focused.ndjson").find((f) => f.frame._tag === "Exit" && f.frame.requestId === "102")!.frame;
    expect(malformed).toEqual(recordedMalformed.exit);
  });
});

describe("simulator vs recorded 0.0.24 (fork)", () => {
  const version = RECORDED.fork;

  it("HTTP bodies have the recorded keys", async () => {
    const sim = await startSim("fork");
    expect(keys((await http(sim, "/.well-known/t3/environment")).body)).toEqual(keys(readRecording(version, "environment.json")));
    expect(keys((await http(sim, "/api/auth/session")).body)).toEqual(keys(readRecording(version, "auth-session-unauthenticated.json")));
    const token = new URL(sim.pairingUrl()).hash.slice("#token=".length);
    const paired = await http(sim, "/api/auth/bootstrap/bearer", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ credential: token }),
    });
    expect(keys(paired.body)).toEqual(keys(readRecording(version, "pair-response.json")));
    const again = await http(sim, "/api/auth/bootstrap/bearer", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ credential: token }),
    });
    expect([again.status, again.body]).toEqual([401, { error: "Invalid bootstrap credential." }]);
    const auth = { authorization: `Bearer ${paired.body.sessionToken as string}` };
    expect(keys((await http(sim, "/api/auth/session", { headers: auth })).body)).toEqual(keys(readRecording(version, "auth-session-authenticated.json")));
    const unknownGet = await http(sim, "/api/orchestration/shell", { headers: auth });
    expect([unknownGet.status, unknownGet.contentType]).toEqual([200, "text/html; charset=utf-8"]);
  });

  it("shell rows, thread snapshots and the shell status flow match the recordings", async () => {
    const sim = await startSim("fork");
    const raw = await RawPeer.connect(sim);
    cleanups.push(() => raw.close());
    const shellId = raw.request("orchestration.subscribeShell", { requestCompletionMarker: true });
    await raw.until(() => raw.chunks(shellId).length === 1);
    raw.ack(shellId);
    await raw.barrier(); // the fork attaches its live tail only once this Ack arrived
    const recordedSnapshot = readRecording(version, "shell-initial.json") as Json;
    expect(keys(raw.chunks(shellId)[0]![0])).toEqual(keys(recordedSnapshot));
    expect(keys((raw.chunks(shellId)[0]![0] as Json).snapshot)).toEqual(keys(recordedSnapshot.snapshot));

    const { threadId, shellRow, detail } = await completedTurn(sim);
    expect(keys(shellRow)).toEqual(keys(readRecording(version, "shell-row-completed.json")));
    const recordedThread = (readRecording(version, "thread-completed.json") as { snapshot: { thread: Json } }).snapshot.thread;
    expect(keys(detail)).toEqual(keys(recordedThread));
    expect(shellRow.latestTurn).toBeNull(); // the recorded non-git workspace quirk

    // Keep acking so every upsert arrives, then compare the collapsed status flow with the recorded planner.
    await raw.until(() => {
      raw.chunks(shellId).forEach(() => raw.ack(shellId));
      return raw
        .values(shellId)
        .some((item) => item.kind === "thread-upserted" && (item.thread as Json).id === threadId && (item.sequence as number) === sim.engine.sequence);
    });
    const rowState = (row: Json) => `${(row.session as Json | null)?.status ?? null}/${(row.latestTurn as Json | null)?.state ?? null}`;
    const ours = raw
      .values(shellId)
      .filter((item) => item.kind === "thread-upserted" && (item.thread as Json).id === threadId)
      .map((item) => rowState(item.thread as Json));
    const recordedFlow = readFrames(version, "frames.jsonl")
      .filter((f) => f.dir === "recv" && f.frame._tag === "Chunk" && f.frame.requestId === "1")
      .flatMap((f) => f.frame.values as Json[])
      .filter((item) => item.kind === "thread-upserted" && (item.thread as Json).id === "worker-42007485")
      .map((item) => rowState(item.thread as Json));
    // The recorded worker was interrupted at the end; compare the flow up to the turn's completion.
    const recordedUntilRunning = collapse(recordedFlow).slice(0, collapse(recordedFlow).indexOf("running/running") + 1);
    expect(collapse(ours).slice(0, recordedUntilRunning.length)).toEqual(recordedUntilRunning);
    expect(collapse(ours).at(-1)).toBe("ready/null");
  });

  it("frame shapes: Defect for an unknown method, Die for a malformed command, dedupe returns the same exit", async () => {
    const sim = await startSim("fork");
    const raw = await RawPeer.connect(sim);
    cleanups.push(() => raw.close());
    raw.request("no.such.method", {});
    await raw.until(() => raw.frames.some((frame) => frame._tag === "Defect"));
    const recordedDefect = readFrames(version, "frames.jsonl").find((f) => f.frame._tag === "Defect")!.frame;
    expect(raw.frames.find((frame) => frame._tag === "Defect")).toEqual(recordedDefect);

    const dedupe = readRecording(version, "dispatch-dedupe.json") as Json;
    const malformed = await raw.call("orchestration.dispatchCommand", { type: "thread.create" });
    expect(malformed).toEqual(dedupe.malformed);
    const threadId = `dup-${randomUUID().slice(0, 8)}`;
    const create = { type: "thread.create", commandId: "rec-1", createdAt: new Date().toISOString(), threadId, projectId: "p-missing" };
    sim.engine.dispatch({ type: "project.create", commandId: "p", projectId: "p1", title: "R", workspaceRoot: "/r", createdAt: new Date().toISOString() });
    const full = {
      ...create,
      projectId: "p1",
      title: "t",
      modelSelection: { instanceId: "codex", model: "gpt-5.4" },
      runtimeMode: "full-access",
      interactionMode: "default",
      branch: null,
      worktreePath: null,
    };
    const first = await raw.call("orchestration.dispatchCommand", full);
    const again = await raw.call("orchestration.dispatchCommand", full);
    expect(again).toEqual(first);
    expect(keys(first)).toEqual(keys(dedupe.first));
    const other = await raw.call("orchestration.dispatchCommand", { ...full, commandId: "rec-2" });
    const recordedFailure = dedupe.existingThreadNewCommand as { cause: { error: Json }[] };
    const failure = other as unknown as { cause: { error: Json }[] };
    expect(keys(failure.cause[0]!.error)).toEqual(keys(recordedFailure.cause[0]!.error));
    expect(failure.cause[0]!.error.message).toBe(
      `Orchestration command invariant failed (thread.create): Thread '${threadId}' already exists and cannot be created twice.`,
    );
  });
});
