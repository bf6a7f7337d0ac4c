// The served service runs under tsx, which turns Node's source maps on; reading a stack then parsed
// and kept the map of every TypeScript module in it (./source-maps.ts). Run here as `./fleet serve`
// runs it: the same loader, in a child process of its own, so the maps and arrays are that process's.
import { execFile } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { sourceMapsAsked } from "./source-maps";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const loader = pathToFileURL(join(root, "node_modules/tsx/dist/loader.mjs")).href;

/** What reading one error's stack through a TypeScript module kept: arrays alive after, and the frame it names. */
const PROBE = `
import { queryObjects } from "node:v8";
const { sourceMapsAsAsked } = await import(${JSON.stringify(pathToFileURL(join(root, "electron/serve/source-maps.ts")).href)});
const { Protocol1Rows } = await import(${JSON.stringify(pathToFileURL(join(root, "shared/t3/protocol1/facts.ts")).href)});
const on = sourceMapsAsAsked();
const arrays = () => queryObjects(Array, { format: "count" });
const before = arrays();
let stack = "";
try { new Protocol1Rows().facts(null); } catch (error) { stack = String(error.stack); }
const frame = stack.split("\\n").find((line) => line.includes("facts.ts"));
process.stdout.write(JSON.stringify({ on, kept: arrays() - before, frame }));
`;

async function probe(nodeOptions: string): Promise<{ on: boolean; kept: number; frame: string }> {
  const { stdout } = await promisify(execFile)(process.execPath, ["--no-warnings", "--import", loader, "--input-type=module", "--eval", PROBE], {
    cwd: root,
    env: { ...process.env, NODE_OPTIONS: nodeOptions },
  });
  return JSON.parse(stdout) as { on: boolean; kept: number; frame: string };
}

describe("the served service's source maps", () => {
  it("are off unless asked: a stack read through a module keeps nothing of its map", { timeout: 60_000 }, async () => {
    const off = await probe("");
    expect(off.on).toBe(false);
    expect(off.frame).toContain("facts.ts");
    // Under tsx's source maps the same read kept about a thousand arrays (the module's parsed map).
    expect(off.kept).toBeLessThan(50);
  });

  it("stay on when NODE_OPTIONS asks for them, and the stack names the TypeScript's line", { timeout: 60_000 }, async () => {
    const on = await probe("--enable-source-maps");
    expect(on.on).toBe(true);
    expect(on.frame).toMatch(/facts\.ts:\d{2,}:\d+\)$/);
    expect(on.kept).toBeGreaterThan(200);
  });

  it("are asked for only by the flag itself, on the command line or among NODE_OPTIONS", () => {
    expect(sourceMapsAsked(["--enable-source-maps"], undefined)).toBe(true);
    expect(sourceMapsAsked([], "--max-old-space-size=512 --enable-source-maps")).toBe(true);
    expect(sourceMapsAsked(["--import", "tsx"], "--heapsnapshot-signal=SIGWINCH")).toBe(false);
    expect(sourceMapsAsked([], "--enable-source-maps-x")).toBe(false);
  });
});
