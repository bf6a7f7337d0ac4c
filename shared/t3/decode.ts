// One way to decode untrusted input: a result that either holds the value or names the path of the
// first problem. Callers never see a thrown zod error.
import type { z } from "zod";

export type Decoded<T> = { ok: true; value: T } | { ok: false; error: DecodeFailure };

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

export function decodeWith<S extends z.ZodType>(schema: S, input: unknown, what: string): Decoded<z.output<S>> {
  const result = schema.safeParse(input);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0];
  return {
    ok: false,
    error: { what, path: issue ? formatPath(issue.path) : "", message: issue?.message ?? "invalid input" },
  };
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
