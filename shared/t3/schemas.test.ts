// Decoders against malformed, truncated, oversized and hostile input, property-based.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeWith, formatPath, parseJson } from "./decode";
import { RpcServerFrame } from "./rpc-frames";
import { AuthSessionState, EnvironmentDescriptor } from "./schemas";
import { ShellStreamItemSchema, ThreadShell, ThreadStreamItemSchema } from "./protocol1/schemas";

const fixtures = process.env.T3_FIXTURES_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../../shared/fixtures");
const recorded = (name: string): unknown => JSON.parse(readFileSync(resolve(fixtures, name), "utf8"));

const shellRow = recorded("t3-0.0.24/shell-row-running.json") as Record<string, unknown>;
const threadSnapshot = recorded("t3-0.0.24/thread-approval-pending.json");
const shellSnapshot = recorded("t3-0.0.24/shell-initial.json");

const decoders = [
  ["environment descriptor", EnvironmentDescriptor],
  ["auth session", AuthSessionState],
  ["shell row", ThreadShell],
  ["shell stream item", ShellStreamItemSchema],
  ["thread stream item", ThreadStreamItemSchema],
  ["RPC frame", RpcServerFrame],
] as const;

/** Every path inside a JSON value, as key arrays. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.flatMap((item, i) => [[...prefix, i], ...paths(item, [...prefix, i])]);
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([key, item]) => [[...prefix, key], ...paths(item, [...prefix, key])]);
  }
  return [];
}

function mutate(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let target = copy;
  for (const key of path.slice(0, -1)) target = target[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (replacement === undefined) delete target[last];
  else target[last] = replacement;
  return copy;
}

describe("decoders never throw", () => {
  it.each(decoders)("%s: arbitrary JSON yields a value or an error with a path", (what, schema) => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (input) => {
        const result = decodeWith(schema, input, what);
        if (!result.ok) {
          expect(typeof result.error.path).toBe("string");
          expect(result.error.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("a recorded shell row with any one field removed or retyped is decoded or rejected at that field", () => {
    const candidates = paths(shellRow);
    fc.assert(
      fc.property(fc.constantFrom(...candidates), fc.constantFrom(undefined, 42, "x", null, [], {}), (path, replacement) => {
        const result = decodeWith(ThreadShell, mutate(shellRow, path, replacement), "shell row");
        if (!result.ok) {
          // The reported path is the mutated field or lies on the way to it.
          const reported = result.error.path;
          const mutated = formatPath(path);
          expect(mutated.startsWith(reported) || reported.startsWith(mutated)).toBe(true);
        }
      }),
      { numRuns: 400 },
    );
  });

  it("truncated recorded frames are rejected as JSON, never half-applied", () => {
    const text = JSON.stringify(threadSnapshot);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: text.length - 1 }), (cut) => {
        const parsed = parseJson(text.slice(0, cut));
        expect(parsed.ok).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});

describe("decoders tolerate newer servers", () => {
  it("keeps unknown enum values as unknown and drops unknown fields", () => {
    const newer = {
      ...shellRow,
      runtimeMode: "yolo",
      futureField: { anything: true },
      session: { ...(shellRow.session as object), status: "hibernating" },
    };
    const result = decodeWith(ThreadShell, newer, "shell row");
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.runtimeMode).toBe("unknown");
    expect(result.value.session?.status).toBe("unknown");
    expect("futureField" in result.value).toBe(false);
  });

  it("keeps an unknown stream item kind as unknown instead of failing", () => {
    const result = decodeWith(ShellStreamItemSchema, { kind: "thread-snoozed", sequence: 9 }, "item");
    expect(result).toEqual({ ok: true, value: { kind: "unknown", rawKind: "thread-snoozed" } });
  });

  it("keeps events of unknown types raw and types the known ones", () => {
    const item = decodeWith(
      ThreadStreamItemSchema,
      {
        kind: "event",
        event: {
          sequence: 5,
          eventId: "e",
          aggregateKind: "thread",
          aggregateId: "t",
          type: "thread.pinned",
          occurredAt: "now",
          commandId: null,
          payload: { x: 1 },
        },
      },
      "item",
    );
    expect(item.ok && item.value.kind === "event" && item.value.event.known).toBe(false);
    const bad = decodeWith(
      ThreadStreamItemSchema,
      {
        kind: "event",
        event: {
          sequence: 5,
          eventId: "e",
          aggregateKind: "thread",
          aggregateId: "t",
          type: "thread.session-set",
          occurredAt: "now",
          commandId: null,
          payload: { threadId: "t", session: { status: "running" } },
        },
      },
      "item",
    );
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error.path).toMatch(/^event\.payload\.session\./);
  });

  it("normalizes legacy model selections", () => {
    const legacy = { ...shellRow, modelSelection: { provider: "codex", model: "gpt-5", options: { reasoningEffort: "high" } } };
    const result = decodeWith(ThreadShell, legacy, "row");
    expect(result.ok && result.value.modelSelection).toEqual({ instanceId: "codex", model: "gpt-5", options: [{ id: "reasoningEffort", value: "high" }] });
  });
});

describe("hostile input", () => {
  it("a __proto__ key does not pollute prototypes", () => {
    const hostile = JSON.parse(`{"environmentId":"e","label":"x","serverVersion":"1","capabilities":{"__proto__":{"polluted":true}}}`);
    const result = decodeWith(EnvironmentDescriptor, hostile, "descriptor");
    expect(result.ok).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("decodes a large snapshot; a single bad row is left out and named, the other rows kept (issue 43)", () => {
    const snapshot = shellSnapshot as { kind: string; snapshot: { threads: unknown[] } };
    const row = snapshot.snapshot.threads[0];
    const big = { ...snapshot, snapshot: { ...snapshot.snapshot, threads: Array.from({ length: 5_000 }, () => row) } };
    expect(decodeWith(ShellStreamItemSchema, big, "snapshot").ok).toBe(true);
    big.snapshot.threads[4_321] = { ...(row as object), hasPendingApprovals: "yes" };
    const result = decodeWith(ShellStreamItemSchema, big, "snapshot");
    expect(result.ok && result.value.kind === "snapshot" && result.value.snapshot.threads.length).toBe(4_999);
    expect(result.ok && result.dropped).toEqual([expect.objectContaining({ what: "shell row", path: "[4321].hasPendingApprovals" })]);
  });

  it("treats strings with markup as plain data", () => {
    const result = decodeWith(ThreadShell, { ...shellRow, title: "<img src=x onerror=alert(1)>" }, "row");
    expect(result.ok && result.value.title).toBe("<img src=x onerror=alert(1)>");
  });
});
