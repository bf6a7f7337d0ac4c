// The protocol-2 simulator against recordings of T3's real V2 engine (sim/recordings.ts,
// `t3-v2dev`), the thread-stream flows: 00 handshake, 01 creation, 02 a plain turn, 03 an approval,
// 04/04b interrupts, 05 a failure, 06/06b/06c steers, 07/08 a second message queued. Driven over
// the wire and compared by shape (key sets and value types, not ids, times or texts), by event kinds,
// their envelopes and order, run states, what each receipt points at, and which items share a chunk.
// Where the provider's timing matters (a slow turn), the agent is scripted to the same point. The
// shell stream's flows, resumes and restarts: recordings-shell.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FLEET_SCOPES } from "../../shared/t3/pairing";
import { type Exit, RawPeer } from "../raw-peer.testkit";
import { type V2Recording, readV2Recording } from "../recordings";
import {
  DISPATCH,
  RecordedFlows,
  THREAD,
  envelopes,
  failureOf,
  idTemplates,
  isEvent,
  itemLinks,
  label,
  labelAt,
  liveLabels,
  payloadShapes,
  payloadWords,
  projectionDigest,
  recordedChunks,
  recordedExit,
  recordedThreadIds,
  runStates,
  shapeDifferences,
} from "./recordings.testkit";
import type { V2SimServer } from "./server";

let flows: RecordedFlows;
let sim: V2SimServer;
let client: RawPeer;

beforeAll(async () => {
  flows = await RecordedFlows.start({ tickMs: 5 });
  ({ sim, client } = flows);
});

afterAll(async () => {
  await flows?.stop();
});

/** The recording's first thread stream, all of it, and what the simulator's stream must match of it. */
function recordedStream(recording: V2Recording, index = 0) {
  const values = recordedChunks(recording, THREAD, index).flat();
  return { values, live: liveLabels(values), envelopes: envelopes(values), links: itemLinks(values), words: payloadWords(values), runs: runStates(values) };
}

/** The simulator's stream against the recording's: event order, envelopes, payload shapes, run states. */
function expectStreamLike(values: unknown[], recording: V2Recording, name: string): void {
  const recorded = recordedStream(recording);
  expect(liveLabels(values), `${name}: event order`).toEqual(recorded.live);
  expect(envelopes(values), `${name}: envelopes`).toEqual(recorded.envelopes);
  expect(itemLinks(values), `${name}: what items point at`).toEqual(recorded.links);
  expect(payloadWords(values), `${name}: the protocol's words in payloads`).toEqual(recorded.words);
  expect(payloadShapes(values, recorded.values), `${name}: payload shapes`).toEqual([]);
  expect(runStates(values), `${name}: run states`).toEqual(recorded.runs);
}

/** A dispatch receipt's sequence names the same event, in the simulator's stream and in the recording's. */
function expectReceiptLike(exit: Exit, values: unknown[], recording: V2Recording, index: number): void {
  const recorded = recordedExit(recording, DISPATCH, index) as Exit;
  const at = (recorded.value as { sequence: number }).sequence;
  expect(labelAt(values, (exit.value as { sequence: number }).sequence), `receipt #${index}`).toBe(labelAt(recordedStream(recording).values, at));
}

describe("the protocol-2 simulator against the real V2 engine's recordings: thread streams and commands", () => {
  it("00 handshake: descriptor, the /ws gate, HTTP reads and their header, projects, server.getConfig, an unknown method", async () => {
    const recording = readV2Recording("00-handshake.json");
    const http = recording.frames.filter((entry) => entry.dir === "http");
    const bearer = RawPeer.bearer(sim, FLEET_SCOPES, "recordings");
    const get = async (path: string, headers: Record<string, string> = {}) => {
      const answer = await fetch(`${sim.baseUrl}${path}`, { headers });
      const text = await answer.text();
      return { status: answer.status, text, body: text && answer.headers.get("content-type")?.includes("json") ? (JSON.parse(text) as unknown) : text };
    };
    const recorded = (url: string, index = 0) => http.filter((entry) => entry.url === url)[index]!;
    const auth = { authorization: `Bearer ${bearer}` };
    const cases: [string, Record<string, string>, ReturnType<typeof recorded>][] = [
      ["/.well-known/t3/environment", {}, recorded("/.well-known/t3/environment")],
      ["/api/auth/session", {}, recorded("/api/auth/session")],
      ["/ws", {}, recorded("/ws")],
      ["/ws?orchestrationProtocol=1", {}, recorded("/ws?orchestrationProtocol=1")],
      ["/ws?orchestrationProtocol=2", {}, recorded("/ws?orchestrationProtocol=2")],
      ["/api/orchestration/shell", auth, recorded("/api/orchestration/shell", 0)],
      ["/api/orchestration/shell", { ...auth, "x-t3-orchestration-protocol": "1" }, recorded("/api/orchestration/shell", 1)],
      ["/api/orchestration/shell", { ...auth, "x-t3-orchestration-protocol": "2" }, recorded("/api/orchestration/shell", 2)],
      ["/api/orchestration/threads/no-such-thread", { ...auth, "x-t3-orchestration-protocol": "2" }, recorded("/api/orchestration/threads/no-such-thread")],
      ["/api/projects", auth, recorded("/api/projects")],
    ];
    for (const [path, headers, entry] of cases) {
      const answer = await get(path, headers);
      expect(answer.status, path).toBe(entry.status);
      const body = typeof entry.body === "string" && entry.body.startsWith("{") ? (JSON.parse(entry.body) as unknown) : entry.body;
      if (body === "") expect(answer.text, `${path} has an empty body`).toBe("");
      else if (path.startsWith("/ws?orchestrationProtocol=1") || path === "/ws") expect(answer.body, path).toEqual(body);
      else expect(shapeDifferences(answer.body, body, path)).toEqual([]);
    }
    expect((await get("/api/orchestration/shell", { ...auth, "x-t3-orchestration-protocol": "2" })).body).toMatchObject({ schemaVersion: 3 });

    const config = await client.call("server.getConfig", {});
    const recordedConfig = recordedExit(recording, "server.getConfig")!.value as Record<string, unknown>;
    expect(Object.keys(config.value as object).sort()).toEqual(Object.keys(recordedConfig).sort());
    expect(Object.keys(recordedConfig)).toHaveLength(13);
    const simConfig = config.value as Record<string, unknown>;
    for (const key of ["environment", "auth", "observability"]) expect(shapeDifferences(simConfig[key], recordedConfig[key], key)).toEqual([]);
    expect(simConfig.settings).toMatchObject({ enableLegacyTokenStreaming: false });

    expect(await client.call("no.such.method", {})).toEqual(recordedExit(recording, "no.such.method"));
  });

  it("01 projects.mutate and thread.create answer in the recorded shapes", async () => {
    const recording = readV2Recording("01-create-project-thread.json");
    const project = await client.call("projects.mutate", {
      type: "project.create",
      commandId: flows.fresh("cmd"),
      projectId: flows.fresh("proj"),
      title: "another",
      workspaceRoot: "/work/another",
      createWorkspaceRootIfMissing: true,
    });
    expect(shapeDifferences(project.value, recordedExit(recording, "projects.mutate")!.value)).toEqual([]);
    const threadId = flows.fresh("thread");
    const created = await client.call(DISPATCH, {
      type: "thread.create",
      createdBy: "user",
      creationSource: "web",
      commandId: flows.fresh("cmd"),
      threadId,
      projectId: "no-such-project",
      title: "orphan",
      modelSelection: { instanceId: "codex", model: "gpt-5-codex" },
      runtimeMode: "full-access",
      interactionMode: "default",
      branch: null,
      worktreePath: null,
    });
    // Accepted for a project the engine does not know; the first message is what fails.
    expect(shapeDifferences(created.value, recordedExit(recording, DISPATCH)!.value)).toEqual([]);
    const refused = await flows.dispatchMessage(threadId, "hello");
    expect(failureOf(refused)).toMatchObject({ _tag: "OrchestrationV2DispatchCommandError", commandType: "message.dispatch" });
  });

  it("02 a plain turn: the recorded item order, a deduplicated resend, a resume and the projection", async () => {
    const recording = readV2Recording("02-turn-plain.json");
    const threadId = await flows.createThread();
    const stream = await flows.followThread(threadId);
    expect(client.chunks(stream).map((chunk) => chunk.map(label))).toEqual(
      recordedChunks(recording, THREAD)
        .slice(0, 2)
        .map((chunk) => chunk.map(label)),
    );
    const commandId = flows.fresh("cmd");
    const first = await flows.dispatchMessage(threadId, "Hello there, please reply", undefined, commandId);
    await flows.hasLabel(stream, "node.updated/completed", 2);
    const values: unknown[] = client.values(stream);
    expectStreamLike(values, recording, "02");
    expectReceiptLike(first, values, recording, 0);
    expect(idTemplates(values, threadId)).toEqual(idTemplates(recordedStream(recording).values, recordedThreadIds(recording)[0]!));
    expect(shapeDifferences(values[0], recordedStream(recording).values[0])).toEqual([]);

    // The same commandId again: the first receipt, and nothing happens (no event, no second run).
    const head = sim.engine.sequence;
    const again = await flows.dispatchMessage(threadId, "Hello there, please reply", undefined, commandId);
    expect(again).toEqual(first);
    expect(recordedExit(recording, DISPATCH, 1)).toEqual(recordedExit(recording, DISPATCH, 0));
    await client.barrier();
    expect(sim.engine.sequence).toBe(head);
    expect(client.values(stream)).toHaveLength(values.length);
    expect(sim.engine.threads.get(threadId)!.runs).toHaveLength(1);

    // A resume after the run's fourth event replays the rest and no snapshot, then synchronized, as
    // the recording's second subscription: the same events, none lost.
    const runEvents = values.filter(isEvent);
    const resumed = await flows.followThread(threadId, runEvents[3]!.sequence);
    const replayed = client.values(resumed);
    const recordedResume = recordedChunks(recording, THREAD, 1).flat();
    expect(replayed.map(label)).toEqual(recordedResume.map(label));
    expect(replayed.slice(0, -1)).toEqual(runEvents.slice(4));
    expect(payloadShapes(replayed, recordedResume)).toEqual([]);
    expect(envelopes(replayed)).toEqual(envelopes(recordedResume));

    const projection = await client.call("orchestration.getThreadProjection", { threadId });
    const recordedProjection = recordedExit(recording, "orchestration.getThreadProjection")!.value;
    expect(shapeDifferences(projection.value, recordedProjection)).toEqual([]);
    expect(projectionDigest(projection.value)).toEqual(projectionDigest(recordedProjection));
  });

  it("03 a Codex approval: the request and its item in one chunk, no options, resolved without a decision", async () => {
    const recording = readV2Recording("03-approval.json");
    const threadId = await flows.createThread({ runtimeMode: "approval-required" });
    const stream = await flows.followThread(threadId);
    const dispatched = await flows.dispatchMessage(threadId, "Please run a command that needs #approval");
    await flows.hasLabel(stream, "turn-item.updated:approval_request/waiting");
    const together = (chunks: unknown[][]) => chunks.find((chunk) => chunk.some((value) => label(value) === "runtime-request.updated/pending"))!.map(label);
    // The chunk that holds the request also holds the command item, the request's node and the approval item.
    expect(together(client.chunks(stream)).join(" ")).toContain(together(recordedChunks(recording, THREAD)).join(" "));
    const approval = client.values(stream).find((value) => label(value) === "turn-item.updated:approval_request/waiting") as {
      event: { payload: Record<string, unknown> };
    };
    expect(approval.event.payload).not.toHaveProperty("options");
    const respond = await client.call(DISPATCH, {
      type: "runtime-request.respond",
      commandId: flows.fresh("cmd"),
      threadId,
      requestId: approval.event.payload.requestId,
      decision: "accept",
    });
    expect(respond._tag).toBe("Success");
    await flows.hasLabel(stream, "run.updated/completed");
    await flows.hasLabel(stream, "node.updated/completed", 4);
    const values = client.values(stream);
    expectStreamLike(values, recording, "03");
    expectReceiptLike(dispatched, values, recording, 1);
    expectReceiptLike(respond, values, recording, 2);
    expect(idTemplates(values, threadId)).toEqual(idTemplates(recordedStream(recording).values, recordedThreadIds(recording)[0]!));
    // Resolving leaves in one chunk too: the request, its node, the approval item.
    const resolvedChunk = (chunks: unknown[][]) =>
      chunks.find((chunk) => chunk.some((value) => label(value) === "runtime-request.updated/resolved"))!.map(label);
    expect(resolvedChunk(client.chunks(stream))).toEqual(resolvedChunk(recordedChunks(recording, THREAD)));
    const resolved = values.find((value) => label(value) === "runtime-request.updated/resolved") as { event: { payload: Record<string, unknown> } };
    expect(resolved.event.payload).not.toHaveProperty("decision");
    expect(resolved.event.payload).not.toHaveProperty("answers");
  });

  it("04 and 06 refuse an interrupt (with a reason and without) and a steer once the run is waiting, and the run completes as recorded", async () => {
    const refusals = [
      ["04-interrupt.json", 2, (threadId: string, runId: string) => flows.interrupt(threadId, runId, "sim"), /is not interruptible\.$/],
      ["04-interrupt.json", 3, (threadId: string, runId: string) => flows.interrupt(threadId, runId), /is not interruptible\.$/],
      [
        "06-steer.json",
        2,
        (threadId: string, runId: string) => flows.dispatchMessage(threadId, "Steer: also mention bananas", { type: "steer_active", targetRunId: runId }),
        /is completed and cannot be steered\.$/,
      ],
    ] as const;
    for (const name of ["04-interrupt.json", "06-steer.json"]) {
      const recording = readV2Recording(name);
      const { threadId, stream, runId } = await flows.waitingRun();
      for (const [, index, refuse, pattern] of refusals.filter(([file]) => file === name)) {
        const before = sim.engine.sequence;
        const refused = failureOf(await refuse(threadId, runId));
        const recorded = failureOf(recordedExit(recording, DISPATCH, index) as Exit);
        expect(recorded?.message).toMatch(pattern);
        expect(refused?.message).toMatch(pattern);
        expect(refused?.detail, "the detail repeats the message").toBe(refused?.message);
        expect(recorded?.detail).toBe(recorded?.message);
        // The engine also sent its own error as `cause` ({name, message, cause}); the contract's
        // error has no such field (the contract check refuses it), so the simulator leaves it out.
        const { cause: _cause, ...recordedError } = recorded ?? {};
        expect(shapeDifferences(refused, recordedError, name)).toEqual([]);
        expect(refused).toMatchObject({ _tag: recorded?._tag, commandType: recorded?.commandType });
        expect(sim.engine.sequence, "a refusal changes nothing").toBe(before);
      }
      sim.engine.release(threadId);
      await flows.hasLabel(stream, "node.updated/completed", 2);
      expectStreamLike(client.values(stream), recording, name);
    }
  });

  it("04b interrupts a running turn: request item, partial reply, provider turn, attempt, result, run", async () => {
    const recording = readV2Recording("04b-interrupt-running.json");
    const { threadId, stream, runId } = await flows.heldRun([
      { kind: "reply", text: "Hello from " },
      { kind: "hold" },
      { kind: "reply", text: "the simulator." },
    ]);
    const accepted = await flows.interrupt(threadId, runId, "sim");
    expect(accepted._tag).toBe("Success");
    await flows.hasLabel(stream, "provider-thread.updated/idle");
    const values = client.values(stream);
    expectStreamLike(values, recording, "04b");
    expectReceiptLike(accepted, values, recording, 2);
    // The request item leaves alone, before the provider stops.
    const requestChunk = (chunks: unknown[][]) => chunks.find((chunk) => chunk.some((value) => label(value).includes("run_interrupt_request")))!.map(label);
    expect(requestChunk(client.chunks(stream))).toEqual(requestChunk(recordedChunks(recording, THREAD)));
  });

  it("05 a failed turn: the error item with its failure, the provider turn and the run failed", async () => {
    const recording = readV2Recording("05-fail.json");
    const threadId = await flows.createThread();
    const stream = await flows.followThread(threadId);
    sim.scriptNextRun(threadId, [
      { kind: "reply", text: "Hello from the simulator." },
      { kind: "fail", failureClass: "provider_error", message: "Simulated failure" },
    ]);
    const dispatched = await flows.dispatchMessage(threadId, "Please fail this turn");
    await flows.hasLabel(stream, "provider-thread.updated/idle");
    const values = client.values(stream);
    expectStreamLike(values, recording, "05");
    expectReceiptLike(dispatched, values, recording, 1);
    const failure = (list: unknown[]) =>
      (list.find((value) => label(value) === "turn-item.updated:error/failed") as { event: { payload: { failure: Record<string, unknown> } } }).event.payload
        .failure;
    expect(failure(values).class).toBe(failure(recordedStream(recording).values).class);
  });

  it("06b/06c a steer into a running turn stays in the run as a user_message with inputIntent steer", async () => {
    for (const name of ["06b-steer-running.json", "06c-steer-supported.json"]) {
      const recording = readV2Recording(name);
      const { threadId, stream, runId } = await flows.heldRun([{ kind: "hold" }, { kind: "reply", text: "Hello from the simulator." }]);
      const steered = await flows.dispatchMessage(threadId, "Steer: mention bananas too", { type: "steer_active", targetRunId: runId });
      expect(steered._tag).toBe("Success");
      const values = () => client.values(stream);
      // The steer's message and its item leave together, in the target run.
      await flows.hasLabel(stream, "turn-item.updated:user_message/completed", 2);
      const steerChunk = (chunks: unknown[][]) => chunks.at(-1)!.map(label);
      expect(steerChunk(client.chunks(stream)), name).toEqual(
        steerChunk(
          recordedChunks(recording, THREAD)
            .filter((chunk) => chunk.some((value) => label(value) === "turn-item.updated:user_message/completed"))
            .slice(0, 2),
        ),
      );
      expectReceiptLike(steered, values(), recording, 2);
      sim.engine.release(threadId);
      await flows.hasLabel(stream, "node.updated/completed", 2);
      expectStreamLike(values(), recording, name);
      const steer = values().find(
        (value) =>
          label(value) === "turn-item.updated:user_message/completed" &&
          (value as { event: { payload: { inputIntent: string } } }).event.payload.inputIntent === "steer",
      ) as { event: { payload: { runId: string } } };
      expect(steer.event.payload.runId).toBe(runId);
      expect(sim.engine.threads.get(threadId)!.runs).toHaveLength(1);
      const projection = await client.call("orchestration.getThreadProjection", { threadId });
      const recordedProjection = recordedExit(recording, "orchestration.getThreadProjection")!.value;
      expect(shapeDifferences(projection.value, recordedProjection, name)).toEqual([]);
      expect(projectionDigest(projection.value), name).toEqual(projectionDigest(recordedProjection));
    }
  });

  it("07/08 a second message (queue_after_active, start_immediately) queues behind the running turn and runs after it", async () => {
    for (const [name, dispatchMode] of [
      ["07-queue.json", { type: "queue_after_active" }],
      ["08-start-immediately.json", { type: "start_immediately" }],
    ] as const) {
      const recording = readV2Recording(name);
      const { threadId, stream } = await flows.heldRun([{ kind: "hold" }, { kind: "reply", text: "Hello from the simulator." }]);
      const queued = await flows.dispatchMessage(threadId, "Second message", dispatchMode);
      expect(queued._tag).toBe("Success");
      await flows.hasLabel(stream, "message.updated", 2);
      expectReceiptLike(queued, client.values(stream), recording, 2);
      sim.engine.release(threadId);
      await client.until(() => sim.engine.threads.get(threadId)!.runs.every((run) => run.status === "completed"));
      await flows.hasLabel(stream, "node.updated/completed", 4);
      // Run 2: queued #1, then starting, running, waiting, completed after run 1 (runStates).
      expectStreamLike(client.values(stream), recording, name);
    }
  });
});
