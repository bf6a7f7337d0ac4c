// Access to the recordings of real T3 servers in ../shared/fixtures (override with T3_FIXTURES_DIR).
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export function fixturesDir(): string {
  const dir = process.env.T3_FIXTURES_DIR ?? resolve(repoRoot, "../shared/fixtures");
  if (!existsSync(dir)) throw new Error(`T3 recordings not found at ${dir}; set T3_FIXTURES_DIR`);
  return dir;
}

export type RecordedVersion = "t3-0.0.24" | "t3-0.0.33";

export function recordingFiles(version: RecordedVersion): string[] {
  return readdirSync(join(fixturesDir(), version))
    .filter((name) => name !== "README.md")
    .sort();
}

export function readRecording(version: RecordedVersion, name: string): unknown {
  return JSON.parse(readFileSync(join(fixturesDir(), version, name), "utf8")) as unknown;
}

export interface RecordedFrame {
  conn: string;
  dir: "send" | "recv";
  frame: Record<string, unknown>;
}

/** Frame logs: 0.0.24 `frames.jsonl` ({ms, dir: in/out, frame}); 0.0.33 `*.ndjson` ({conn, dir: send/recv, atMs, frame}). */
export function readFrames(version: RecordedVersion, name: string): RecordedFrame[] {
  const text = readFileSync(join(fixturesDir(), version, name), "utf8");
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const raw = JSON.parse(line) as { conn?: string; dir: string; frame: Record<string, unknown> };
      const dir = raw.dir === "in" || raw.dir === "recv" ? "recv" : "send";
      return { conn: raw.conn ?? "main", dir, frame: raw.frame };
    });
}

/** 0.0.33 HTTP recordings: `{_fixture: {request, status, contentType}, body}`. */
export interface HttpRecording {
  _fixture: { request: { method?: string; path?: string; ws?: string }; status: number | null; contentType: string };
  body: unknown;
}

/**
 * Recordings of T3's real V2 engine (`t3-v2dev/NN-*.json`): `{meta: {what}, frames}`, each frame a
 * client `out` or server `in` Effect-RPC frame, an `http` exchange or a `ws-open`.
 */
export interface V2RecordedFrame {
  t: number;
  dir: "in" | "out" | "http" | "ws-open";
  frame?: {
    _tag: string;
    id?: string;
    tag?: string;
    requestId?: string;
    payload?: unknown;
    values?: unknown[];
    exit?: { _tag: string; value?: unknown; cause?: unknown[] };
  };
  method?: string;
  url?: string;
  status?: number;
  body?: unknown;
  reqHeaders?: string[];
}

export interface V2Recording {
  meta: { what: string };
  frames: V2RecordedFrame[];
}

export function readV2Recording(name: string): V2Recording {
  return JSON.parse(readFileSync(join(fixturesDir(), "t3-v2dev", name), "utf8")) as V2Recording;
}
