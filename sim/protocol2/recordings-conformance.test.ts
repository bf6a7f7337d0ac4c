// The protocol-2 simulator against recordings of T3's real V2 engine (sim/recordings.ts,
// `t3-v2dev`): the same flows as the recordings (00 handshake … 10 shell resume), driven over the
// wire, compared by shape (key sets and value types, not ids, times or texts), by event kinds and
// their order, and by which items share a chunk. Where the provider's timing matters (a slow turn,
// a turn still running), the simulated agent is scripted to the same point instead of waiting.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FLEET_SCOPES } from "../../shared/t3/pairing";
import { type Exit, RawPeer } from "../raw-peer.testkit";
import { type V2Recording, readV2Recording } from "../recordings";
import type { AgentStep } from "./engine";
import { providerTurnRunning, untilEngine } from "./engine.testkit";
import { collapseRepeats, firstPayloads, idTemplates, isEvent, label, recordedChunks, recordedExit, shapeDifferences } from "./recordings.testkit";
import { V2SimServer } from "./server";

const THREAD = "orchestration.subscribeThread";
const SHELL = "orchestration.subscribeShell";
const DISPATCH = "orchestration.dispatchCommand";

let sim: V2SimServer;
let client: RawPeer;
let projectId: string;
let counter = 0;
const fresh = (prefix: string) => `${prefix}-${++counter}-${Date.now().toString(36)}`;

beforeAll(async () => {
  sim = await new V2SimServer({ tickMs: 5 }).start();
  client = await RawPeer.connectProtocol2(sim);
  projectId = fresh("proj");
  const created = await client.call("projects.mutate", {
    type: "project.create",
    commandId: fresh("cmd"),
    projectId,
    title: "sim beta",
    workspaceRoot: "/work/flows",
    createWorkspaceRootIfMissing: true,
  });
  expect(created._tag).toBe("Success");
});

afterAll(async () => {
  client?.close();
  await sim?.stop();
});

async function createThread(options: { runtimeMode?: string } = {}): Promise<string> {
  const threadId = fresh("thread");
  const exit = await client.call(DISPATCH, {
    type: "thread.create",
    createdBy: "user",
    creationSource: "web",
    commandId: fresh("cmd"),
    threadId,
    projectId,
    title: "sim flow",
    modelSelection: { instanceId: "codex", model: "gpt-5-codex" },
    runtimeMode: options.runtimeMode ?? "full-access",
    interactionMode: "default",
    branch: null,
    worktreePath: null,
  });
  expect(exit._tag).toBe("Success");
  return threadId;
}

function dispatchMessage(
  threadId: string,
  text: string,
  dispatchMode: Record<string, unknown> = { type: "queue_after_active" },
  commandId = fresh("cmd"),
): Promise<Exit> {
  return client.call(DISPATCH, {
    type: "message.dispatch",
    createdBy: "user",
    creationSource: "web",
    commandId,
    threadId,
    messageId: fresh("msg"),
    text,
    attachments: [],
    dispatchMode,
  });
}

/** Subscribes to a thread with the completion marker; resolves once it is in sync. */
async function followThread(threadId: string, afterSequence?: number): Promise<string> {
  const id = client.request(THREAD, { threadId, ...(afterSequence !== undefined && { afterSequence }), requestCompletionMarker: true });
  await client.untilValue(id, (value) => label(value) === "synchronized");
  return id;
}

const hasLabel = (id: string, wanted: string, count = 1) => client.until(() => client.values(id).filter((value) => label(value) === wanted).length >= count);

/** Labels after `synchronized`, repeats merged, as recorded for the recording's `index`-th thread stream. */
function liveLabels(values: unknown[]): string[] {
  const start = values.findIndex((value) => label(value) === "synchronized");
  return collapseRepeats(
    values
      .slice(start + 1)
      .filter(isEvent)
      .map(label),
  );
}

function recordedLive(recording: V2Recording, index = 0): string[] {
  return liveLabels(recordedChunks(recording, THREAD, index).flat());
}

/** Every event payload kind the recording shows has the recorded shape in the simulator. */
function payloadShapes(simValues: unknown[], recordedValues: unknown[]): string[] {
  const simulated = firstPayloads(simValues);
  const problems: string[] = [];
  for (const [kind, payload] of firstPayloads(recordedValues)) {
    if (!simulated.has(kind)) problems.push(`${kind}: never sent by the simulator`);
    else problems.push(...shapeDifferences(simulated.get(kind), payload, kind));
  }
  return problems;
}

/** The recorded flows' thread ids, to read the recorded ids as templates. */
const RECORDED_THREAD = { "02": "thread-c5973a3b-4147-4396-bc36-563b4972b48a", "03": "thread-ba325275-48d4-4bdb-999c-a9beaf18fd32" };

const failureOf = (exit: Exit | undefined) => exit?.cause?.find((cause) => cause._tag === "Fail")?.error;

describe("the protocol-2 simulator against the real V2 engine's recordings", () => {
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
      commandId: fresh("cmd"),
      projectId: fresh("proj"),
      title: "another",
      workspaceRoot: "/work/another",
      createWorkspaceRootIfMissing: true,
    });
    expect(shapeDifferences(project.value, recordedExit(recording, "projects.mutate")!.value)).toEqual([]);
    const threadId = fresh("thread");
    const created = await client.call(DISPATCH, {
      type: "thread.create",
      createdBy: "user",
      creationSource: "web",
      commandId: fresh("cmd"),
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
    const refused = await dispatchMessage(threadId, "hello");
    expect(failureOf(refused)).toMatchObject({ _tag: "OrchestrationV2DispatchCommandError", commandType: "message.dispatch" });
  });

  it("02 a plain turn: snapshot, synchronized, the recorded item order, a deduplicated resend, a resume and the projection", async () => {
    const recording = readV2Recording("02-turn-plain.json");
    const threadId = await createThread();
    const stream = await followThread(threadId);
    expect(client.chunks(stream).map((chunk) => chunk.map(label))).toEqual(
      recordedChunks(recording, THREAD)
        .slice(0, 2)
        .map((chunk) => chunk.map(label)),
    );
    const commandId = fresh("cmd");
    const first = await dispatchMessage(threadId, "Hello there, please reply", undefined, commandId);
    await hasLabel(stream, "node.updated/completed", 2);
    const values: unknown[] = client.values(stream);
    expect(liveLabels(values)).toEqual(recordedLive(recording));
    expect(payloadShapes(values, recordedChunks(recording, THREAD).flat())).toEqual([]);
    expect(idTemplates(values, threadId)).toEqual(idTemplates(recordedChunks(recording, THREAD).flat(), RECORDED_THREAD["02"]));
    const snapshot = values[0] as { projection: unknown };
    expect(shapeDifferences(snapshot, recordedChunks(recording, THREAD)[0]![0])).toEqual([]);
    expect(await dispatchMessage(threadId, "Hello there, please reply", undefined, commandId)).toEqual(first);

    // A resume after the run's fourth event replays the rest, as the recording's second subscription.
    const runEvents = values.filter(isEvent);
    const resumed = await followThread(threadId, runEvents[3]!.sequence);
    expect(client.values(resumed).map(label)).toEqual(recordedChunks(recording, THREAD, 1).flat().map(label));
    const projection = await client.call("orchestration.getThreadProjection", { threadId });
    expect(shapeDifferences(projection.value, recordedExit(recording, "orchestration.getThreadProjection")!.value)).toEqual([]);
  });

  it("03 a Codex approval: the request and its item in one chunk, no options, resolved without a decision", async () => {
    const recording = readV2Recording("03-approval.json");
    const threadId = await createThread({ runtimeMode: "approval-required" });
    const stream = await followThread(threadId);
    await dispatchMessage(threadId, "Please run a command that needs #approval");
    await hasLabel(stream, "turn-item.updated:approval_request/waiting");
    const together = (chunks: unknown[][]) => chunks.find((chunk) => chunk.some((value) => label(value) === "runtime-request.updated/pending"))!.map(label);
    for (const chunk of [together(client.chunks(stream)), together(recordedChunks(recording, THREAD))]) {
      expect(chunk).toEqual(
        expect.arrayContaining([
          "turn-item.updated:command_execution/running",
          "runtime-request.updated/pending",
          "turn-item.updated:approval_request/waiting",
        ]),
      );
    }
    const approval = client.values(stream).find((value) => label(value) === "turn-item.updated:approval_request/waiting") as {
      event: { payload: Record<string, unknown> };
    };
    expect(approval.event.payload).not.toHaveProperty("options");
    const respond = await client.call(DISPATCH, {
      type: "runtime-request.respond",
      commandId: fresh("cmd"),
      threadId,
      requestId: approval.event.payload.requestId,
      decision: "accept",
    });
    expect(respond._tag).toBe("Success");
    await hasLabel(stream, "run.updated/completed");
    await hasLabel(stream, "node.updated/completed", 4);
    const values = client.values(stream);
    expect(liveLabels(values)).toEqual(recordedLive(recording));
    expect(payloadShapes(values, recordedChunks(recording, THREAD).flat())).toEqual([]);
    expect(idTemplates(values, threadId)).toEqual(idTemplates(recordedChunks(recording, THREAD).flat(), RECORDED_THREAD["03"]));
    const resolved = values.find((value) => label(value) === "runtime-request.updated/resolved") as { event: { payload: Record<string, unknown> } };
    expect(resolved.event.payload).not.toHaveProperty("decision");
  });

  /** A run whose answer is final and which stays `waiting` (the real engine's checkpoint window, held open). */
  async function waitingRun(): Promise<{ threadId: string; stream: string; runId: string }> {
    const threadId = await createThread();
    const stream = await followThread(threadId);
    sim.scriptNextRun(threadId, [
      { kind: "reply", text: "Hello from the simulator." },
      { kind: "background", description: "checkpointing" },
    ]);
    await dispatchMessage(threadId, "Please answer slow, word by word");
    await hasLabel(stream, "run.updated/waiting");
    return { threadId, stream, runId: sim.engine.threads.get(threadId)!.runs[0]!.id };
  }

  it("04 and 06 refuse an interrupt and a steer once the run is waiting, and the run completes as recorded", async () => {
    for (const [name, refuse, pattern] of [
      [
        "04-interrupt.json",
        (threadId: string, runId: string) => client.call(DISPATCH, { type: "run.interrupt", commandId: fresh("cmd"), threadId, runId, reason: "sim" }),
        /is not interruptible\.$/,
      ],
      [
        "06-steer.json",
        (threadId: string, runId: string) => dispatchMessage(threadId, "Steer: also mention bananas", { type: "steer_active", targetRunId: runId }),
        /cannot be steered\.$/,
      ],
    ] as const) {
      const recording = readV2Recording(name);
      const { threadId, stream, runId } = await waitingRun();
      const refused = failureOf(await refuse(threadId, runId));
      const recorded = failureOf(recordedExit(recording, DISPATCH, 2) as Exit);
      expect(recorded?.message).toMatch(pattern);
      expect(refused).toMatchObject({ _tag: recorded?._tag, commandType: recorded?.commandType });
      expect(refused?.message).toMatch(pattern);
      sim.engine.release(threadId);
      await hasLabel(stream, "node.updated/completed", 2);
      expect(liveLabels(client.values(stream))).toEqual(recordedLive(recording));
    }
  });

  async function heldRun(script: AgentStep[]): Promise<{ threadId: string; stream: string; runId: string }> {
    const threadId = await createThread();
    const stream = await followThread(threadId);
    sim.scriptNextRun(threadId, script);
    await dispatchMessage(threadId, "Please answer slow, word by word");
    await untilEngine(
      sim.engine,
      () => sim.engine.threads.get(threadId)!.runner?.blockedOn?.kind === "hold" && providerTurnRunning(sim.engine, threadId),
      "provider turn running, held",
    );
    return { threadId, stream, runId: sim.engine.threads.get(threadId)!.runs[0]!.id };
  }

  it("04b interrupts a running turn: request item, partial reply, provider turn, attempt, result, run", async () => {
    const recording = readV2Recording("04b-interrupt-running.json");
    const { threadId, stream, runId } = await heldRun([{ kind: "reply", text: "Hello from " }, { kind: "hold" }, { kind: "reply", text: "the simulator." }]);
    const accepted = await client.call(DISPATCH, { type: "run.interrupt", commandId: fresh("cmd"), threadId, runId, reason: "sim" });
    expect(accepted._tag).toBe("Success");
    await hasLabel(stream, "provider-thread.updated/idle");
    const values = client.values(stream);
    expect(liveLabels(values)).toEqual(recordedLive(recording));
    expect(payloadShapes(values, recordedChunks(recording, THREAD).flat())).toEqual([]);
  });

  it("05 a failed turn: the error item, and lastError null on the row", async () => {
    const recording = readV2Recording("05-fail.json");
    const threadId = await createThread();
    const stream = await followThread(threadId);
    sim.scriptNextRun(threadId, [
      { kind: "reply", text: "Hello from the simulator." },
      { kind: "fail", failureClass: "provider_error", message: "Simulated failure" },
    ]);
    await dispatchMessage(threadId, "Please fail this turn");
    await hasLabel(stream, "provider-thread.updated/idle");
    const values = client.values(stream);
    expect(liveLabels(values)).toEqual(recordedLive(recording));
    expect(payloadShapes(values, recordedChunks(recording, THREAD).flat())).toEqual([]);
    expect(sim.engine.shellRow(sim.engine.threads.get(threadId)!)).toMatchObject({ status: "failed", lastError: null });
  });

  it("06b/06c a steer into a running turn stays in the run as a user_message with inputIntent steer", async () => {
    for (const name of ["06b-steer-running.json", "06c-steer-supported.json"]) {
      const recording = readV2Recording(name);
      const { threadId, stream, runId } = await heldRun([{ kind: "hold" }, { kind: "reply", text: "Hello from the simulator." }]);
      const steered = await dispatchMessage(threadId, "Steer: mention bananas too", { type: "steer_active", targetRunId: runId });
      expect(steered._tag).toBe("Success");
      sim.engine.release(threadId);
      await hasLabel(stream, "node.updated/completed", 2);
      const values = client.values(stream);
      expect(liveLabels(values), name).toEqual(recordedLive(recording));
      const steer = values.find(
        (value) =>
          label(value) === "turn-item.updated:user_message/completed" &&
          (value as { event: { payload: { inputIntent: string } } }).event.payload.inputIntent === "steer",
      ) as { event: { payload: { runId: string } } };
      expect(steer.event.payload.runId).toBe(runId);
      expect(sim.engine.threads.get(threadId)!.runs).toHaveLength(1);
    }
  });

  it("07/08 a second message queues behind the running turn and runs after it", async () => {
    for (const [name, dispatchMode] of [
      ["07-queue.json", { type: "queue_after_active" }],
      ["08-start-immediately.json", { type: "start_immediately" }],
    ] as const) {
      const recording = readV2Recording(name);
      const { threadId, stream } = await heldRun([{ kind: "hold" }, { kind: "reply", text: "Hello from the simulator." }]);
      expect((await dispatchMessage(threadId, "Second message", dispatchMode))._tag).toBe("Success");
      sim.engine.release(threadId);
      await client.until(() => sim.engine.threads.get(threadId)!.runs.every((run) => run.status === "completed"));
      await hasLabel(stream, "node.updated/completed", 4);
      const values = client.values(stream);
      expect(liveLabels(values), name).toEqual(recordedLive(recording));
      expect(payloadShapes(values, recordedChunks(recording, THREAD).flat())).toEqual([]);
    }
  });

  it("09 the shell stream: full snapshot, metadata refreshes (threads: []) after project and thread creation, rows in the recorded shape", async () => {
    const recording = readV2Recording("09-shell-stream.json");
    const recorded = recordedChunks(recording, SHELL).flat();
    const watcher = await RawPeer.connectProtocol2(sim);
    const shell = watcher.request(SHELL, { requestCompletionMarker: true });
    await watcher.until(() => watcher.values(shell).map(label).includes("snapshot(metadata)") && watcher.values(shell).map(label).includes("synchronized"));
    expect(watcher.values(shell).map(label).sort()).toEqual(recorded.slice(0, 3).map(label).sort());
    await client.call("projects.mutate", {
      type: "project.create",
      commandId: fresh("cmd"),
      projectId: fresh("proj"),
      title: "later",
      workspaceRoot: "/work/later",
      createWorkspaceRootIfMissing: true,
    });
    await watcher.until(
      () =>
        watcher
          .values(shell)
          .map(label)
          .filter((entry) => entry === "snapshot(metadata)").length >= 2,
    );
    const threadId = await createThread();
    await watcher.until(() => watcher.values(shell).some((value) => (value as { thread?: { id: string } }).thread?.id === threadId));
    const stream = await followThread(threadId);
    sim.scriptNextRun(threadId, [{ kind: "hold" }, { kind: "reply", text: "Hello." }]);
    await dispatchMessage(threadId, "first");
    await untilEngine(sim.engine, () => providerTurnRunning(sim.engine, threadId), "running");
    await dispatchMessage(threadId, "Second message, queued");
    await watcher.until(() =>
      watcher
        .values(shell)
        .some(
          (value) =>
            (value as { thread?: { id: string; status: string } }).thread?.id === threadId &&
            (value as { thread: { status: string } }).thread.status === "queued",
        ),
    );
    sim.engine.release(threadId);
    await hasLabel(stream, "node.updated/completed", 4);
    await watcher.until(() =>
      watcher
        .values(shell)
        .some(
          (value) =>
            (value as { thread?: { id: string; status: string } }).thread?.id === threadId &&
            (value as { thread: { status: string } }).thread.status === "completed" &&
            sim.engine.threads.get(threadId)!.runs.length === 2 &&
            sim.engine.threads.get(threadId)!.runs.every((run) => run.status === "completed"),
        ),
    );
    const values = watcher.values(shell);
    const labels = collapseRepeats(values.map(label));
    // After a project is created: its row, then a metadata refresh.
    expect(labels.join(" ")).toContain("project.updated snapshot(metadata)");
    expect(collapseRepeats(recorded.map(label)).join(" ")).toContain("project.updated snapshot(metadata)");
    const first = (kind: string, list: unknown[]) => list.find((value) => label(value) === kind);
    for (const kind of ["snapshot", "snapshot(metadata)", "project.updated", "thread.updated"])
      expect(shapeDifferences(first(kind, values), first(kind, recorded), kind)).toEqual([]);
    // The queued thread's statuses are the recorded ones, minus those the 50 ms coalescing merged.
    const statuses = (list: unknown[], id: string) =>
      collapseRepeats(
        list.flatMap((value) =>
          (value as { thread?: { id: string; status: string } }).thread?.id === id ? [(value as { thread: { status: string } }).thread.status] : [],
        ),
      );
    const recordedQueue = statuses(recorded, "thread-a9012a87-a3c5-43b5-8c80-d70fc00bf2b2");
    const simulated = statuses(values, threadId);
    expect(simulated).toContain("queued");
    expect(simulated.at(-1)).toBe("completed");
    expect(simulated.filter((status) => !recordedQueue.includes(status))).toEqual([]);
    watcher.close();
  });

  it("10 a shell resume starts with a metadata-only snapshot (threads: []), then the changed rows, then synchronized", async () => {
    const recording = readV2Recording("10-shell-resume.json");
    const watcher = await RawPeer.connectProtocol2(sim);
    const full = watcher.request(SHELL, { requestCompletionMarker: true });
    await watcher.untilValue(full, (value) => label(value) === "synchronized");
    expect(watcher.values(full).slice(0, 2).map(label)).toEqual(recordedChunks(recording, SHELL, 0).flat().slice(0, 2).map(label));
    watcher.interrupt(full);
    const head = sim.engine.sequence;
    const atHead = watcher.request(SHELL, { afterSequence: head, requestCompletionMarker: true });
    await watcher.untilValue(atHead, (value) => label(value) === "synchronized");
    expect(watcher.values(atHead).map(label)).toEqual(recordedChunks(recording, SHELL, 1).flat().map(label));
    const [a, b] = [await createThread(), await createThread()];
    for (const threadId of [a, b]) sim.engine.dispatch({ type: "thread.metadata.update", commandId: fresh("cmd"), threadId, title: "renamed" });
    const behind = watcher.request(SHELL, { afterSequence: head, requestCompletionMarker: true });
    await watcher.untilValue(behind, (value) => label(value) === "synchronized");
    expect(watcher.values(behind).map(label)).toEqual(recordedChunks(recording, SHELL, 2).flat().map(label));
    const metadata = watcher.values(behind)[0] as { snapshot: { threads: unknown[]; archivedThreads: unknown[] } };
    expect(metadata.snapshot).toMatchObject({ threads: [], archivedThreads: [] });
    expect(shapeDifferences(metadata, recordedChunks(recording, SHELL, 2)[0]![0])).toEqual([]);

    // More than 1,000 events behind (T3's SHELL_RESUME_MAX_GAP): a full snapshot instead.
    const old = sim.engine.sequence;
    for (let i = 0; i <= 1000; i++) sim.engine.dispatch({ type: "thread.metadata.update", commandId: fresh("cmd"), threadId: a, title: `renamed ${i}` });
    const far = watcher.request(SHELL, { afterSequence: old, requestCompletionMarker: true });
    await watcher.untilValue(far, (value) => label(value) === "synchronized");
    expect(watcher.values(far).map(label).slice(0, 2)).toEqual(["snapshot", "synchronized"]);
    expect((watcher.values(far)[0] as { snapshot: { threads: { id: string }[] } }).snapshot.threads.map((row) => row.id)).toEqual(
      expect.arrayContaining([a, b]),
    );
    watcher.close();
  });
});
