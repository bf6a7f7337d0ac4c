// One way to decode untrusted input: a result that either holds the value or names the path of the
// first problem. Callers never see a thrown zod error.
import { z } from "zod";

/** `dropped`: elements of lenient lists (`lenientList`) that did not decode and were left out, each to be reported. */
export type Decoded<T> = { ok: true; value: T; dropped?: DecodeFailure[] } | { ok: false; error: DecodeFailure };

export interface DecodeFailure {
  /** What was being decoded, e.g. "shell stream item". */
  what: string;
  /** Dotted path of the first bad field, "" for the root. */
  path: string;
  message: string;
}

/** Dotted path with array indexes, e.g. `snapshot.threads[3].session.status`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** The elements the decoding under way left out (parsing is synchronous, so one list per decodeWith call). */
let droppedNow: DecodeFailure[] | null = null;

export function decodeWith<S extends z.ZodType>(schema: S, input: unknown, what: string): Decoded<z.output<S>> {
  const outer = droppedNow;
  const dropped: DecodeFailure[] = [];
  droppedNow = dropped;
  try {
    const result = schema.safeParse(input);
    if (!result.success) return failed(result.error, what);
    if (dropped.length === 0) return { ok: true, value: result.data };
    // Kept on the value as well, for callers that pass only the value on (http.ts decodeAnswer).
    if (typeof result.data === "object" && result.data !== null) Object.defineProperty(result.data, DROPPED, { value: dropped, enumerable: false });
    return { ok: true, value: result.data, dropped };
  } finally {
    droppedNow = outer;
  }
}

function failed(error: z.ZodError, what: string): Decoded<never> {
  const issue = error.issues[0];
  return { ok: false, error: { what, path: issue ? formatPath(issue.path) : "", message: issue?.message ?? "invalid input" } };
}

const DROPPED = Symbol("dropped elements");

/** The elements decodeWith left out of a decoded value's lenient lists (none when it left none out). */
export function droppedOf(value: unknown): DecodeFailure[] {
  return typeof value === "object" && value !== null ? ((value as { [DROPPED]?: DecodeFailure[] })[DROPPED] ?? []) : [];
}

/** A left-out element as a skipped item of a stream (shared/fleet/types.ts SkippedItem). */
export function droppedAsSkipped(method: string, failure: DecodeFailure): { method: string; path: string; message: string; sequence: null } {
  return { method, path: failure.path, message: `${failure.what} left out: ${failure.message}`, sequence: null };
}

/**
 * A list whose elements are each a thing of their own (a thread row, a transcript item, a
 * checkpoint): an element that does not decode is left out and reported through decodeWith's
 * `dropped` (its index and path within the list), never failing the list, the snapshot it is in, or
 * the machine (issue 43). A missing list reads as empty.
 */
export function lenientList<S extends z.ZodType>(schema: S, what: string) {
  return z
    .array(z.unknown())
    .default([])
    .transform((items) => {
      const kept: z.output<S>[] = [];
      items.forEach((item, index) => {
        const result = schema.safeParse(item);
        if (result.success) kept.push(result.data);
        else {
          const issue = result.error.issues[0];
          droppedNow?.push({ what, path: formatPath([index, ...(issue?.path ?? [])]), message: issue?.message ?? "invalid input" });
        }
      });
      return kept;
    });
}

export function describeDecodeFailure(failure: DecodeFailure): string {
  return `Could not decode ${failure.what}${failure.path ? ` at ${failure.path}` : ""}: ${failure.message}`;
}

/** Parses JSON text without throwing. */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : "invalid JSON" };
  }
}
