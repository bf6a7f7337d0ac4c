// Comparing the simulated protocol-2 server with recordings of T3's real V2 engine
// (sim/recordings.ts), read through the raw peer (sim/raw-peer.testkit.ts): normalisations that
// keep what must match (key sets, value types, event kinds and their order, which items share a
// chunk) and drop what may not (ids, times, texts).
import { expect } from "vitest";
import { type Exit, RawPeer } from "../raw-peer.testkit";
import type { V2RecordedFrame, V2Recording } from "../recordings";
import type { AgentStep } from "./engine";
import { providerTurnRunning, untilEngine } from "./engine.testkit";
import { V2SimServer, type V2SimServerOptions } from "./server";

type Json = unknown;

/** What a value is made of: object keys (deep), array elements, leaf types; `null` fits any leaf. */
export function shapeDifferences(actual: Json, expected: Json, path = "$"): string[] {
  if (actual === null || expected === null || actual === undefined || expected === undefined) return [];
  if (Array.isArray(expected) || Array.isArray(actual)) {
    if (!Array.isArray(expected) || !Array.isArray(actual)) return [`${path}: ${kindOf(actual)} where the recording has ${kindOf(expected)}`];
    if (expected.length === 0 || actual.length === 0) return [];
    return shapeDifferences(actual[0], expected[0], `${path}[0]`);
  }
  if (typeof expected === "object" && typeof actual === "object") {
    const a = actual as Record<string, Json>;
    const e = expected as Record<string, Json>;
    const problems: string[] = [];
    for (const key of Object.keys(e)) if (!(key in a)) problems.push(`${path}.${key}: missing (the recording has it)`);
    for (const key of Object.keys(a)) if (!(key in e)) problems.push(`${path}.${key}: not in the recording`);
    for (const key of Object.keys(e)) if (key in a) problems.push(...shapeDifferences(a[key], e[key], `${path}.${key}`));
    return problems;
  }
  return kindOf(actual) === kindOf(expected) ? [] : [`${path}: ${kindOf(actual)} where the recording has ${kindOf(expected)}`];
}

function kindOf(value: Json): string {
  return value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
}

interface EventItem {
  kind: "event";
  sequence: number;
  event: { type: string; payload: { type?: string; status?: string } & Record<string, Json> } & Record<string, Json>;
}

export function isEvent(value: Json): value is EventItem {
  return (value as { kind?: unknown } | null)?.kind === "event";
}

/** `run.updated/running`, `turn-item.updated:assistant_message/completed`, `snapshot`, `synchronized`… */
export function label(value: Json): string {
  if (!isEvent(value)) {
    const item = value as { kind: string; snapshot?: { threads?: unknown[] }; resolvedRepositoryIdentityRoots?: unknown };
    if (item.kind === "snapshot" && "snapshot" in item) return item.resolvedRepositoryIdentityRoots !== undefined ? "snapshot(metadata)" : "snapshot";
    return item.kind;
  }
  const { type, payload } = value.event;
  const itemType = type === "turn-item.updated" ? `:${payload.type}` : "";
  return `${type}${itemType}${typeof payload.status === "string" ? `/${payload.status}` : ""}`;
}

/** Consecutive repeats merged: how many checkpoints a run captures is not part of the protocol. */
export function collapseRepeats(labels: string[]): string[] {
  return labels.filter((entry, index) => index === 0 || entry !== labels[index - 1]);
}

/** The stream values of the recording's `index`-th request with `tag`, by chunk. */
export function recordedChunks(recording: V2Recording, tag: string, index = 0): Json[][] {
  const requests = recording.frames.filter((entry) => entry.dir === "out" && entry.frame?._tag === "Request" && entry.frame.tag === tag);
  const id = requests[index]?.frame?.id;
  if (id === undefined) throw new Error(`the recording has no ${tag} #${index}`);
  return recording.frames
    .filter((entry) => entry.dir === "in" && entry.frame?._tag === "Chunk" && entry.frame.requestId === id)
    .map((entry) => entry.frame!.values ?? []);
}

/** The Exit of the recording's `index`-th request with `tag`. */
export function recordedExit(recording: V2Recording, tag: string, index = 0): NonNullable<V2RecordedFrame["frame"]>["exit"] {
  const requests = recording.frames.filter((entry) => entry.dir === "out" && entry.frame?._tag === "Request" && entry.frame.tag === tag);
  const id = requests[index]?.frame?.id;
  const exit = recording.frames.find((entry) => entry.dir === "in" && entry.frame?._tag === "Exit" && entry.frame.requestId === id);
  if (!exit) throw new Error(`the recording has no Exit for ${tag} #${index}`);
  return exit.frame!.exit;
}

/** The first payload of each event kind (`turn-item.updated` per item type) in some stream values. */
export function firstPayloads(values: Json[]): Map<string, Json> {
  const found = new Map<string, Json>();
  for (const value of values) {
    if (!isEvent(value)) continue;
    const { type, payload } = value.event;
    const key = type === "turn-item.updated" ? `${type}:${payload.type}` : type;
    if (!found.has(key)) found.set(key, payload);
  }
  return found;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** Entities the engine names itself (a user message's item carries the client's message id). */
const ENGINE_NAMED = new Set([
  "run.created",
  "run.updated",
  "run-attempt.created",
  "run-attempt.updated",
  "node.updated",
  "checkpoint-scope.created",
  "checkpoint.captured",
  "provider-thread.updated",
  "provider-turn.updated",
  "provider-session.attached",
  "provider-session.updated",
  "runtime-request.updated",
]);

/**
 * How the engine composes its ids, per event kind: the thread's id and every UUID replaced by a
 * placeholder, so `run:thread:<thread>:ordinal:1` or `node:run:run%3Athread%3A<thread>…:root`
 * compare across servers. Turn items also keep their ordinal (run·1,000,000 + n).
 */
export function idTemplates(values: Json[], threadId: string): string[] {
  const template = (id: string) =>
    id
      .split(threadId)
      .join("<thread>")
      .replace(UUID, "<uuid>")
      .replace(/[0-9a-f]{32}|[A-Za-z0-9_-]{40,}=*/g, "<digest>");
  const found = new Set<string>();
  for (const value of values) {
    if (!isEvent(value)) continue;
    const { type, payload } = value.event;
    if (ENGINE_NAMED.has(type) && typeof payload.id === "string") found.add(`${type} ${template(payload.id)}`);
    if (type === "turn-item.updated" && payload.type !== "user_message")
      found.add(`${label(value)} ${template(String(payload.id))} #${String(payload.ordinal)}`);
  }
  return [...found].sort();
}

/**
 * Every event in order as `label {envelope keys}`, repeats merged: which events carry `runId`,
 * `nodeId`, `driver`; a node also says its kind (`node.updated/running tool_call {…}`).
 */
export function envelopes(values: Json[]): string[] {
  return collapseRepeats(
    values.filter(isEvent).map((value) => {
      const keys = Object.keys(value.event)
        .filter((key) => key !== "payload")
        .sort();
      const kind = value.event.type === "node.updated" ? ` ${String(value.event.payload.kind)}` : "";
      return `${label(value)}${kind} {${keys.join(",")}}`;
    }),
  );
}

/**
 * What each turn item points at, in order: whether it names a provider turn and a native item, and
 * whether its node is the run's root (`turn-item.updated:user_message/completed turn native root`).
 */
export function itemLinks(values: Json[]): string[] {
  return collapseRepeats(
    values.filter(isEvent).flatMap((value) => {
      if (value.event.type !== "turn-item.updated") return [];
      const { providerTurnId, nativeItemRef, nodeId } = value.event.payload;
      const node = typeof nodeId !== "string" ? "none" : nodeId.endsWith(":root") ? "root" : "own";
      return [`${label(value)}${providerTurnId ? " turn" : ""}${nativeItemRef ? " native" : ""} node:${node}`];
    }),
  );
}

/** Payload fields whose values are words of the protocol (enums), not ids, times or texts. */
const WORDS = ["kind", "role", "inputIntent", "reason", "requestKind", "origin", "createdBy", "creationSource", "driver", "visibility", "location"];

/** Each event with the protocol's words its payload holds (`run-attempt.created/pending reason=initial`), repeats merged. */
export function payloadWords(values: Json[]): string[] {
  return collapseRepeats(
    values.filter(isEvent).map((value) => {
      const payload = value.event.payload;
      const words = WORDS.filter((key) => typeof payload[key] === "string").map((key) => `${key}=${String(payload[key])}`);
      return [label(value), ...words].join(" ");
    }),
  );
}

/** The live events (after `synchronized`) as labels, repeats merged. */
export function liveLabels(values: Json[]): string[] {
  const start = values.findIndex((value) => label(value) === "synchronized");
  return collapseRepeats(
    values
      .slice(start + 1)
      .filter(isEvent)
      .map(label),
  );
}

/** Every event payload kind the recording shows has the recorded shape in the simulator. */
export function payloadShapes(simValues: Json[], recordedValues: Json[]): string[] {
  const simulated = firstPayloads(simValues);
  const problems: string[] = [];
  for (const [kind, payload] of firstPayloads(recordedValues)) {
    if (!simulated.has(kind)) problems.push(`${kind}: never sent by the simulator`);
    else problems.push(...shapeDifferences(simulated.get(kind), payload, kind));
  }
  return problems;
}

const ordinalOf = (runId: unknown) => (typeof runId === "string" ? (/:ordinal:(\d+)$/.exec(runId)?.[1] ?? "?") : null);

/** Each run's states in event order: `run 2 queued #1`, `run 2 running started`, … (which of its times are set). */
export function runStates(values: Json[]): string[] {
  return collapseRepeats(
    values.filter(isEvent).flatMap((value) => {
      if (value.event.type !== "run.created" && value.event.type !== "run.updated") return [];
      const run = value.event.payload as { ordinal: number; status: string; queuePosition?: number | null } & Record<string, Json>;
      const set = (["startedAt", "completedAt", "checkpointId"] as const).filter((key) => run[key] !== null && run[key] !== undefined);
      return [`run ${run.ordinal} ${run.status}${typeof run.queuePosition === "number" ? ` #${run.queuePosition}` : ""} ${set.join(" ")}`.trim()];
    }),
  );
}

/** The label of the stream value with that sequence: what a dispatch receipt points at. */
export function labelAt(values: Json[], sequence: unknown): string | undefined {
  const found = values.find((value) => isEvent(value) && value.sequence === sequence);
  return found === undefined ? undefined : label(found);
}

export interface ShellRowLike {
  id: string;
  status: string;
  activityRunStatus: string | null;
  activeRunId: string | null;
  latestRunId: string | null;
  lastError: string | null;
  pendingRuntimeRequest: { kind: string } | null;
}

/**
 * What a shell row says of its thread's run: `queued/running @1 latest 2` is status queued while run
 * 1 runs (activityRunStatus) and run 2 is the latest; `running @1 latest 1 awaiting command` a pending
 * request; `failed latest 1 error` a row with `lastError`.
 */
export function rowState(row: ShellRowLike): string {
  const activity = row.activityRunStatus && row.activityRunStatus !== row.status ? `/${row.activityRunStatus}` : "";
  const active = row.activeRunId ? ` @${ordinalOf(row.activeRunId)}` : "";
  const latest = row.latestRunId ? ` latest ${ordinalOf(row.latestRunId)}` : "";
  const pending = row.pendingRuntimeRequest ? ` awaiting ${row.pendingRuntimeRequest.kind}` : "";
  return `${row.status}${activity}${active}${latest}${pending}${row.lastError !== null ? " error" : ""}`;
}

/** The states of one thread's rows in a shell stream, repeats merged. */
export function shellStates(values: Json[], threadId: string): string[] {
  return collapseRepeats(
    values.flatMap((value) => {
      const row = (value as { kind?: string; thread?: ShellRowLike } | null)?.thread;
      return row?.id === threadId ? [rowState(row)] : [];
    }),
  );
}

/** Every row state in some shell stream values, of any thread. */
export function allShellStates(values: Json[]): Set<string> {
  return new Set(
    values.flatMap((value) => ((value as { thread?: ShellRowLike } | null)?.thread ? [rowState((value as { thread: ShellRowLike }).thread)] : [])),
  );
}

/**
 * `states` as a server that merged more of them would show them: only the states `recorded` has,
 * repeats merged. T3 coalesces a thread's shell updates over 50 ms, so which states a recording
 * shows depends on the provider's timing; the simulator, paced slower than that, shows each one.
 */
export function asCoalesced(states: string[], recorded: string[]): string[] {
  return collapseRepeats(states.filter((state) => recorded.includes(state)));
}

/** The thread ids of a recording's thread streams, in the order they were subscribed. */
export function recordedThreadIds(recording: V2Recording): string[] {
  return recording.frames.flatMap((entry) =>
    entry.dir === "out" && entry.frame?._tag === "Request" && entry.frame.tag === "orchestration.subscribeThread"
      ? [String((entry.frame.payload as { threadId: string }).threadId)]
      : [],
  );
}

/** A projection as lists of what each entity is: turn items by type, status and intent, runs by status, messages by role. */
export function projectionDigest(projection: Json): Record<string, string[]> {
  const digest: Record<string, string[]> = {};
  for (const [key, list] of Object.entries(projection as Record<string, Json>)) {
    if (!Array.isArray(list)) continue;
    digest[key] = list.map((entry: Record<string, Json>) => {
      if (typeof entry.type === "string") return [entry.type, entry.status, entry.inputIntent].filter((part) => typeof part === "string").join("/");
      return String(entry.role ?? entry.status ?? entry.kind ?? entry.visibility ?? "entry");
    });
  }
  return digest;
}

export const THREAD = "orchestration.subscribeThread";
export const SHELL = "orchestration.subscribeShell";
export const DISPATCH = "orchestration.dispatchCommand";

export const failureOf = (exit: Exit | undefined) => exit?.cause?.find((cause) => cause._tag === "Fail")?.error;

/**
 * Plays the recorded flows on a simulated server over the wire, as the recording client did: a
 * project, threads with Codex, messages in each dispatch mode, thread streams with the completion
 * marker. Where the provider's timing mattered (a slow turn), the agent is scripted to that point.
 */
export class RecordedFlows {
  private counter = 0;

  private constructor(
    readonly sim: V2SimServer,
    readonly client: RawPeer,
    readonly projectId: string,
  ) {}

  static async start(options: V2SimServerOptions = {}): Promise<RecordedFlows> {
    const sim = await new V2SimServer(options).start();
    const client = await RawPeer.connectProtocol2(sim);
    const flows = new RecordedFlows(sim, client, "");
    const projectId = flows.fresh("proj");
    const created = await client.call("projects.mutate", {
      type: "project.create",
      commandId: flows.fresh("cmd"),
      projectId,
      title: "sim beta",
      workspaceRoot: "/work/flows",
      createWorkspaceRootIfMissing: true,
    });
    expect(created._tag).toBe("Success");
    return new RecordedFlows(sim, client, projectId);
  }

  async stop(): Promise<void> {
    this.client.close();
    await this.sim.stop();
  }

  fresh(prefix: string): string {
    return `${prefix}-${++this.counter}-${Date.now().toString(36)}`;
  }

  async createThread(options: { runtimeMode?: string } = {}): Promise<string> {
    const threadId = this.fresh("thread");
    const exit = await this.client.call(DISPATCH, {
      type: "thread.create",
      createdBy: "user",
      creationSource: "web",
      commandId: this.fresh("cmd"),
      threadId,
      projectId: this.projectId,
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

  dispatchMessage(
    threadId: string,
    text: string,
    dispatchMode: Record<string, unknown> = { type: "queue_after_active" },
    commandId = this.fresh("cmd"),
  ): Promise<Exit> {
    return this.client.call(DISPATCH, {
      type: "message.dispatch",
      createdBy: "user",
      creationSource: "web",
      commandId,
      threadId,
      messageId: this.fresh("msg"),
      text,
      attachments: [],
      dispatchMode,
    });
  }

  interrupt(threadId: string, runId: string, reason?: string): Promise<Exit> {
    return this.client.call(DISPATCH, { type: "run.interrupt", commandId: this.fresh("cmd"), threadId, runId, ...(reason !== undefined && { reason }) });
  }

  /** Subscribes to a thread with the completion marker; resolves once it is in sync. */
  async followThread(threadId: string, afterSequence?: number, peer = this.client): Promise<string> {
    const id = peer.request(THREAD, { threadId, ...(afterSequence !== undefined && { afterSequence }), requestCompletionMarker: true });
    await peer.untilValue(id, (value) => label(value) === "synchronized");
    return id;
  }

  hasLabel(stream: string, wanted: string, count = 1): Promise<void> {
    return this.client.until(() => this.client.values(stream).filter((value) => label(value) === wanted).length >= count);
  }

  runId(threadId: string, index = 0): string {
    return this.sim.engine.threads.get(threadId)!.runs[index]!.id;
  }

  /** A thread whose first run plays `script`, followed; resolves once its provider turn runs and the agent holds. */
  async heldRun(script: AgentStep[], threadId?: string): Promise<{ threadId: string; stream: string; runId: string }> {
    const id = threadId ?? (await this.createThread());
    const stream = await this.followThread(id);
    this.sim.scriptNextRun(id, script);
    await this.dispatchMessage(id, "Please answer slow, word by word");
    await untilEngine(
      this.sim.engine,
      () => this.sim.engine.threads.get(id)!.runner?.blockedOn?.kind === "hold" && providerTurnRunning(this.sim.engine, id),
      "provider turn running, held",
    );
    return { threadId: id, stream, runId: this.runId(id) };
  }

  /** A run whose answer is final and which stays `waiting` (the real engine's checkpoint window, held open). */
  async waitingRun(threadId?: string): Promise<{ threadId: string; stream: string; runId: string }> {
    const id = threadId ?? (await this.createThread());
    const stream = await this.followThread(id);
    this.sim.scriptNextRun(id, [
      { kind: "reply", text: "Hello from the simulator." },
      { kind: "background", description: "checkpointing" },
    ]);
    await this.dispatchMessage(id, "Please answer slow, word by word");
    await this.hasLabel(stream, "run.updated/waiting");
    return { threadId: id, stream, runId: this.runId(id) };
  }
}
