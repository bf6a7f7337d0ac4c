// The protocol-2 simulator against T3's contract: every frame it sends in a scenario that touches
// every method, item and error the fleet uses is decoded twice, by the fleet's tolerant decoders and
// by a strict, contract-shaped check (shared/t3/protocol2/contract.testkit.ts). Plus the rules around the
// frames: the 426 gate before auth, the header rule, the slow-consumer cutoff, the in-place upgrade.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { z } from "zod";
import { FLEET_SCOPES } from "../../../../shared/t3/pairing";
import { EnvironmentDescriptor } from "../../../../shared/t3/schemas";
import {
  StrictDispatchResult,
  StrictProjection,
  StrictRpcError,
  StrictShellSnapshot,
  StrictShellStreamItem,
  StrictThreadDetailSnapshot,
  StrictThreadStreamItem,
} from "../../../../shared/t3/protocol2/contract.testkit";
import {
  DispatchResultV2,
  ProtocolIncompatibleBody,
  ShellSnapshotV2,
  ShellStreamItemV2Schema,
  ThreadBoundedSnapshotV2,
  ThreadDetailSnapshotV2,
  ThreadProjection,
  ThreadStreamItemV2Schema,
  V2RpcError,
} from "../../../../shared/t3/protocol2/schemas";
import { SimServer } from "../../../../sim/protocol1/server";
import { providerTurnRunning, untilEngine } from "../../../../sim/protocol2/engine.testkit";
import type { V2SimServer } from "../../../../sim/protocol2/server";
import { upgradeInPlace } from "../../../../sim/upgrade";
import { T3EnvironmentClient } from "../client";
import type { RpcSocket } from "../rpc-socket";
import { FleetRecorder, ThreadDetailRecorder, v2Fixture } from "./recorders.testkit";
import { OriginToken } from "../origin-token";
import type { AgentCommand } from "../adapter";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

type WithoutCommandId<T> = T extends unknown ? Omit<T, "commandId"> : never;
type Frame = {
  _tag: string;
  id?: string;
  tag?: string;
  requestId?: string;
  values?: unknown[];
  exit?: { _tag: string; value?: unknown; cause?: { _tag: string; error?: unknown }[] };
};

/**
 * Fields T3's real V2 engine sends that the contract reading (006bb815) does not list: project
 * metadata, the projection's subagent activations, title regeneration, and the repository roots of
 * a metadata snapshot (sim/protocol2/recordings-conformance.test.ts holds the simulator to the real keys).
 */
const REAL_ENGINE_EXTRAS = new Set(["subagentActivations", "titleRegeneration", "defaultThreadEnvMode", "faviconPath", "resolvedRepositoryIdentityRoots"]);
/** Engine events the fleet skips (attempts, nodes, provider threads and turns, checkpoints): only their envelope is checked. */
const SKIPPED_EVENT = z.strictObject({
  id: z.string().min(1),
  threadId: z.string().min(1),
  runId: z.string().min(1).optional(),
  nodeId: z.string().min(1).optional(),
  driver: z.string().min(1).optional(),
  providerInstanceId: z.string().min(1).optional(),
  occurredAt: z.iso.datetime({ offset: true }),
  type: z.enum([
    "provider-thread.updated",
    "provider-turn.updated",
    "run-attempt.created",
    "run-attempt.updated",
    "node.updated",
    "checkpoint-scope.created",
    "checkpoint.captured",
  ]),
  payload: z.record(z.string(), z.unknown()),
});

/** Optional in the contract, `null` on the real engine (a running command's output). */
const REAL_ENGINE_NULLS = new Set(["output"]);

function contractView(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(contractView);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, inner]) => !REAL_ENGINE_EXTRAS.has(key) && !(inner === null && REAL_ENGINE_NULLS.has(key)))
      .map(([key, inner]) => [key, contractView(inner)]),
  );
}

/** Checks one value with both readings; returns the problems found. */
function bothReadings(tolerant: z.ZodType, strict: z.ZodType, value: unknown, what: string): string[] {
  const problems: string[] = [];
  const a = tolerant.safeParse(value);
  if (!a.success) problems.push(`${what}: tolerant decoder: ${a.error.issues[0]?.message} at ${a.error.issues[0]?.path.join(".")}`);
  const event = (value as { kind?: unknown; event?: unknown }).kind === "event" ? SKIPPED_EVENT.safeParse((value as { event: unknown }).event) : undefined;
  if (event?.success) return problems;
  const b = strict.safeParse(contractView(value));
  if (!b.success)
    problems.push(`${what}: contract check: ${b.error.issues[0]?.message} at ${b.error.issues[0]?.path.join(".")} (${JSON.stringify(value).slice(0, 200)})`);
  return problems;
}

function project(sim: V2SimServer): string {
  if (!sim.engine.projects.has("p1"))
    sim.engine.addProject({ id: "p1", title: "Repo", workspaceRoot: "/home/user/repo", defaultModelSelection: null, scripts: [] });
  return "p1";
}

describe("protocol-2 simulator frames against the contract", () => {
  it("every frame of a full scenario decodes with the fleet's decoders and passes the contract check", async () => {
    const sent = new Map<string, string>();
    const received: Frame[] = [];
    const fixture = await v2Fixture({
      adapter: {
        socket: {
          onFrame: (direction, frame) => {
            const typed = frame as Frame;
            if (direction === "send" && typed._tag === "Request") sent.set(typed.id!, typed.tag!);
            if (direction === "recv") received.push(typed);
          },
        },
      },
    });
    const { sim, adapter, credentials } = fixture;
    cleanups.push(() => sim.stop());
    const session = await adapter.connect(credentials);
    cleanups.push(() => session.close());
    const fleet = new FleetRecorder();
    session.subscribeFleet(fleet);
    const execute = (command: WithoutCommandId<AgentCommand>) => session.execute({ ...command, commandId: `c-${randomUUID()}` } as AgentCommand);
    const sendText = (threadId: string, text: string, mode: "start" | "steer" | "queue" = "start", runId: string | null = null) =>
      execute({ type: "send", threadId, messageId: `m-${randomUUID()}`, text, mode, runId });

    const threadId = sim.engine.createThread({ projectId: project(sim), title: "Main", provider: "codex" }).thread.id;
    sim.engine.fork(threadId, "A fork");
    const detail = new ThreadDetailRecorder();
    session.followThread(adapter.thread(threadId), detail);
    await detail.untilDetail((d) => d.synced, "thread live");

    // Approval, question, subagents (native and app-owned), background wait, failure.
    await sendText(threadId, "#approval #stream");
    let card = (await detail.untilDetail((d) => d.facts.pending.length === 1, "approval")).facts.pending[0]!;
    await execute({ type: "respond-approval", threadId, requestId: card.requestId, decision: "acceptForSession" });
    await detail.untilDetail((d) => d.facts.run?.phase === "completed", "approved run done");
    await sendText(threadId, "#question");
    card = (await detail.untilDetail((d) => d.facts.pending.length === 1, "question")).facts.pending[0]!;
    await execute({ type: "respond-input", threadId, requestId: card.requestId, answers: { scope: ["api"], note: "" } });
    await detail.untilDetail((d) => d.facts.run?.phase === "completed" && d.facts.pending.length === 0, "answered run done");
    await sendText(threadId, "#subagent #delegate #background");
    await detail.untilDetail((d) => d.facts.run?.phase === "waiting", "waiting");
    sim.engine.release(threadId);
    await detail.untilDetail((d) => d.facts.run?.phase === "completed", "background drained");
    await sendText(threadId, "#fail:permission_error");
    await detail.untilDetail((d) => d.facts.run?.phase === "failed", "failed");

    // Queue, steer, cancel, interrupt, errors.
    await sendText(threadId, "#hold");
    const active = (await detail.untilDetail((d) => d.facts.activeRunId !== null && d.facts.run?.phase === "running", "holding")).facts.activeRunId!;
    await untilEngine(sim.engine, () => providerTurnRunning(sim.engine, threadId), "provider turn running");
    await sendText(threadId, "queued one", "queue", active);
    await sendText(threadId, "steer it", "steer", active);
    const queued = (await detail.untilDetail((d) => Object.values(d.facts.messageOutcomes ?? {}).some((o) => o.how === "queued"), "queued")).facts
      .messageOutcomes!;
    const queuedRun = Object.values(queued).find((o) => o.how === "queued")!.runId;
    await expect(execute({ type: "interrupt", threadId, runId: queuedRun })).rejects.toThrow(/queued-run.cancel/);
    await execute({ type: "cancel-queued", threadId, runId: queuedRun });
    await execute({ type: "interrupt", threadId, runId: active });
    await detail.untilDetail((d) => d.facts.run?.phase === "interrupted", "interrupted");
    await expect(sendText(threadId, "late steer", "steer", active)).rejects.toThrow(/cannot be steered/);
    await expect(execute({ type: "respond-approval", threadId, requestId: "nope", decision: "accept" })).rejects.toThrow(/does not exist/);

    // Lifecycle changes on the shell.
    const other = sim.engine.createThread({ projectId: project(sim), title: "Other", provider: "grok" }).thread.id;
    await fleet.untilAgent(other, () => true, "other appears");
    sim.engine.dispatch({ type: "thread.archive", commandId: "ar", threadId: other });
    await fleet.until(() => fleet.leftAs.get(other) === "archived", "archived");
    sim.engine.dispatch({ type: "thread.unarchive", commandId: "un", threadId: other });
    await fleet.untilAgent(other, (agent) => agent.lifecycle === "active", "unarchived");
    sim.engine.dispatch({ type: "thread.delete", commandId: "de", threadId: other });
    await fleet.until(() => fleet.leftAs.get(other) === "archived-or-deleted", "deleted");

    // The unary reads, directly on a second socket of the same adapter.
    const problems: string[] = [];
    const unknownThread = new ThreadDetailRecorder();
    session.followThread(adapter.thread("missing-thread"), unknownThread);
    await unknownThread.untilEnded();
    const probeFollow = new ThreadDetailRecorder();
    session.followThread(adapter.thread(other), probeFollow);
    await probeFollow.untilDetail((d) => d.synced, "deleted thread still subscribes");

    // HTTP reads with the header, both readings.
    const http = fixture.client.http;
    const headers = { "x-t3-orchestration-protocol": "2" };
    const get = async (path: string) => JSON.parse((await http.send({ method: "GET", path, bearer: credentials.token, headers })).text) as unknown;
    problems.push(...bothReadings(ShellSnapshotV2, StrictShellSnapshot, await get("/api/orchestration/shell"), "GET shell"));
    problems.push(...bothReadings(ThreadDetailSnapshotV2, StrictThreadDetailSnapshot, await get(`/api/orchestration/threads/${threadId}`), "GET thread"));
    problems.push(
      ...bothReadings(ThreadBoundedSnapshotV2, StrictThreadDetailSnapshot, await get(`/api/orchestration/threads/${threadId}/bounded`), "GET bounded thread"),
    );

    // Every frame the socket received.
    let checked = 0;
    for (const frame of received) {
      const tag = frame.requestId ? sent.get(frame.requestId) : undefined;
      if (frame._tag === "Chunk") {
        for (const value of frame.values ?? []) {
          checked++;
          if (tag === "orchestration.subscribeShell") problems.push(...bothReadings(ShellStreamItemV2Schema, StrictShellStreamItem, value, "shell item"));
          else if (tag === "orchestration.subscribeThread")
            problems.push(...bothReadings(ThreadStreamItemV2Schema, StrictThreadStreamItem, value, "thread item"));
          else problems.push(`chunk for unexpected request ${tag}`);
        }
      } else if (frame._tag === "Exit" && frame.exit?._tag === "Success" && tag === "orchestration.dispatchCommand") {
        checked++;
        problems.push(...bothReadings(DispatchResultV2, StrictDispatchResult, frame.exit.value, "dispatch result"));
      } else if (frame._tag === "Exit" && frame.exit?._tag === "Failure") {
        for (const cause of frame.exit.cause ?? []) {
          if (cause._tag !== "Fail") continue;
          checked++;
          problems.push(...bothReadings(V2RpcError, StrictRpcError, cause.error, `${tag} error`));
        }
      }
    }
    expect(problems).toEqual([]);
    const kinds = new Set(
      received.flatMap((frame) =>
        (frame.values ?? []).map((value) => {
          const item = value as { kind: string; event?: { type: string; payload?: { type?: string } } };
          return item.kind === "event" ? `${item.event!.type}${item.event!.type === "turn-item.updated" ? `:${item.event!.payload!.type}` : ""}` : item.kind;
        }),
      ),
    );
    // The scenario reached every item and event kind the fleet reads.
    for (const kind of ["snapshot", "synchronized", "thread.updated", "thread.removed"]) expect(kinds).toContain(kind);
    for (const type of [
      "run.created",
      "run.updated",
      "runtime-request.updated",
      "subagent.updated",
      "provider-session.attached",
      "provider-session.updated",
      "message.updated",
      "turn-item.updated:user_message",
      "turn-item.updated:assistant_message",
      "turn-item.updated:approval_request",
      "turn-item.updated:user_input_request",
      "turn-item.updated:command_execution",
      "turn-item.updated:subagent",
      "turn-item.updated:error",
      "turn-item.updated:checkpoint",
      "turn-item.updated:run_interrupt_request",
      "turn-item.updated:run_interrupt_result",
    ])
      expect(kinds).toContain(type);
    expect(checked).toBeGreaterThan(100);
  });

  it("answers getThreadProjection and getArchivedShellSnapshot in the contract's shapes, and an unknown thread with its typed error", async () => {
    const { sim, adapter, credentials } = await v2Fixture();
    cleanups.push(() => sim.stop());
    const threadId = sim.engine.createThread({ projectId: project(sim), title: "Main" }).thread.id;
    sim.engine.dispatch({ type: "thread.archive", commandId: "ar", threadId });
    const session = await adapter.connect(credentials);
    cleanups.push(() => session.close());
    const socket = (session as unknown as { connection: { socket: RpcSocket } }).connection.socket;
    const projection = await socket.call("orchestration.getThreadProjection", { threadId });
    expect(bothReadings(ThreadProjection, StrictProjection, projection, "projection")).toEqual([]);
    const archived = (await socket.call("orchestration.getArchivedShellSnapshot", {})) as { threads: { id: string }[] };
    expect(archived.threads.map((row) => row.id)).toEqual([threadId]);
    const error = await socket.call("orchestration.getThreadProjection", { threadId: "missing" }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ kind: "rejected", details: { tag: "OrchestrationV2GetThreadProjectionError" } });
    const removed = await socket.call("orchestration.replayEvents", { fromSequenceExclusive: 0 }).catch((caught: unknown) => caught);
    expect(removed).toMatchObject({ kind: "incompatible" });
  });
});

/** Opens a raw socket; resolves with the socket or the HTTP status of a refused upgrade. */
function rawSocket(url: string): Promise<{ ws: WebSocket; frames: Frame[] } | { status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const frames: Frame[] = [];
    ws.on("message", (data) => frames.push(JSON.parse(data.toString()) as Frame));
    ws.once("open", () => resolve({ ws, frames }));
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once("error", reject);
  });
}

async function ticket(sim: V2SimServer, token: OriginToken): Promise<string> {
  const answer = await fetch(`${sim.baseUrl}/api/auth/websocket-ticket`, {
    method: "POST",
    headers: { authorization: `Bearer ${token.secretFor(sim.baseUrl)}` },
  });
  return ((await answer.json()) as { ticket: string }).ticket;
}

describe("protocol-2 simulator rules", () => {
  it("refuses a /ws without ?orchestrationProtocol=2 with 426 before auth, leaving the ticket unused", async () => {
    const { sim, credentials } = await v2Fixture();
    cleanups.push(() => sim.stop());
    const wsUrl = sim.baseUrl.replace("http", "ws");
    const oneTicket = await ticket(sim, credentials.token);
    const refused = await rawSocket(`${wsUrl}/ws?wsTicket=${oneTicket}&orchestrationProtocol=1`);
    expect(refused).toMatchObject({ status: 426 });
    expect(ProtocolIncompatibleBody.parse(JSON.parse((refused as { body: string }).body))).toMatchObject({
      code: "orchestration_protocol_incompatible",
      orchestrationProtocolVersion: 2,
    });
    expect(await rawSocket(`${wsUrl}/ws`)).toMatchObject({ status: 426 });
    const accepted = await rawSocket(`${wsUrl}/ws?wsTicket=${oneTicket}&orchestrationProtocol=2`);
    expect("ws" in accepted).toBe(true);
    if ("ws" in accepted) accepted.ws.close();
    expect(await rawSocket(`${wsUrl}/ws?orchestrationProtocol=2`)).toMatchObject({ status: 401 });
  });

  it("answers authenticated HTTP orchestration reads without the protocol header (or with 1) with 400 and no body", async () => {
    const { sim, client, credentials } = await v2Fixture();
    cleanups.push(() => sim.stop());
    const without = await client.http.send({ method: "GET", path: "/api/orchestration/shell", bearer: credentials.token });
    expect(without).toMatchObject({ status: 400, text: "" });
    const older = await client.http.send({
      method: "GET",
      path: "/api/orchestration/shell",
      bearer: credentials.token,
      headers: { "x-t3-orchestration-protocol": "1" },
    });
    expect(older).toMatchObject({ status: 400, text: "" });
    const anonymous = await client.http.send({ method: "GET", path: "/api/orchestration/shell" });
    expect(anonymous.status).toBe(401);
    const withHeader = await client.http.send({
      method: "GET",
      path: "/api/orchestration/shell",
      bearer: credentials.token,
      headers: { "x-t3-orchestration-protocol": "2" },
    });
    expect(withHeader.status).toBe(200);
  });

  it("cuts off a consumer that stops acknowledging once 1000 items pile up (Exit → Die)", async () => {
    const { sim, credentials } = await v2Fixture({ tickMs: 1_000_000 });
    cleanups.push(() => sim.stop());
    const threadId = sim.engine.createThread({ projectId: project(sim), title: "Busy" }).thread.id;
    const opened = await rawSocket(`${sim.baseUrl.replace("http", "ws")}/ws?orchestrationProtocol=2&wsTicket=${await ticket(sim, credentials.token)}`);
    if (!("ws" in opened)) throw new Error("socket refused");
    const { ws, frames } = opened;
    cleanups.push(() => ws.close());
    ws.send(JSON.stringify({ _tag: "Request", id: "1", tag: "orchestration.subscribeThread", payload: { threadId }, headers: [] }));
    const arrived = (check: () => boolean) =>
      new Promise<void>((resolve) => {
        if (check()) return resolve();
        const onMessage = () => {
          if (!check()) return;
          ws.off("message", onMessage);
          resolve();
        };
        ws.on("message", onMessage);
      });
    await arrived(() => frames.some((frame) => frame._tag === "Chunk"));
    // No Ack: every further event queues on the server.
    for (let i = 0; i < 1100; i++) {
      sim.engine.dispatch({
        type: "message.dispatch",
        createdBy: "user",
        creationSource: "web",
        commandId: `c${i}`,
        threadId,
        messageId: `m${i}`,
        text: "go",
        attachments: [],
        dispatchMode: { type: "queue_after_active" },
      });
    }
    await arrived(() => frames.some((frame) => frame._tag === "Exit"));
    const exit = frames.find((frame) => frame._tag === "Exit")!;
    expect(exit.exit).toMatchObject({ _tag: "Failure", cause: [{ _tag: "Die" }] });
  });
});

describe("in-place upgrade from protocol 1 to protocol 2", () => {
  it("keeps the port, the environmentId, the sessions and the thread ids; sequences start over", async () => {
    const v1 = await new SimServer({ generation: "upstream", tickMs: 2 }).start();
    cleanups.push(() => v1.stop());
    v1.engine.dispatch({ type: "project.create", commandId: "p", projectId: "p1", title: "Repo", workspaceRoot: "/repo", createdAt: v1.engine.now() });
    for (const id of ["alpha", "sub.alpha.worker1"]) {
      v1.engine.dispatch({
        type: "thread.create",
        commandId: `t-${id}`,
        threadId: id,
        projectId: "p1",
        title: id,
        modelSelection: { instanceId: "codex", model: "gpt-5.4" },
        runtimeMode: "full-access",
        interactionMode: "default",
        branch: null,
        worktreePath: null,
        createdAt: v1.engine.now(),
      });
    }
    const token = v1.auth.issueSession({ scopes: [...FLEET_SCOPES], role: "client", label: "T3 Fleet" }).token;
    const v1Sequence = v1.engine.sequence;
    const client = new T3EnvironmentClient(v1.baseUrl);
    const before = await client.http.json({ method: "GET", path: "/.well-known/t3/environment" }, EnvironmentDescriptor, "descriptor");
    expect(before.orchestrationProtocolVersion).toBeUndefined();

    const v2 = await upgradeInPlace(v1, { tickMs: 2 });
    cleanups.push(() => v2.stop());
    expect(v2.baseUrl).toBe(v1.baseUrl);
    const after = await client.http.json({ method: "GET", path: "/.well-known/t3/environment" }, EnvironmentDescriptor, "descriptor");
    expect(after).toMatchObject({ environmentId: before.environmentId, label: before.label, orchestrationProtocolVersion: 2 });

    const { adapter } = await v2Fixture({ server: v2 });
    const session = await adapter.connect({ token: OriginToken.issuedBy(v2.baseUrl, token), generation: "upstream" });
    cleanups.push(() => session.close());
    const fleet = new FleetRecorder();
    session.subscribeFleet(fleet);
    await fleet.until(() => fleet.synced === 1, "synced");
    expect([...fleet.agents.keys()].sort()).toEqual(["alpha", "sub.alpha.worker1"]);
    expect(fleet.agent("sub.alpha.worker1")?.parent).toEqual({ threadId: "alpha", relationship: "child-id" });
    expect(adapter.shell!.sequence).toBeLessThan(v1Sequence);
    // The upgraded machine works: a message runs on protocol 2.
    await session.execute({ type: "send", commandId: "c-after", threadId: "alpha", messageId: "m-after", text: "hello v2", mode: "start", runId: null });
    await fleet.untilAgent("alpha", (agent) => agent.run.phase === "completed", "runs on v2");
  });
});
