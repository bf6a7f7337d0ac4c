// Comparing the simulated protocol-2 server with recordings of T3's real V2 engine
// (sim/recordings.ts), read through the raw peer (sim/raw-peer.testkit.ts): normalisations that
// keep what must match (key sets, value types, event kinds and their order, which items share a
// chunk) and drop what may not (ids, times, texts).
import type { V2RecordedFrame, V2Recording } from "../recordings";

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
