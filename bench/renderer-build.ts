// The page benchmarks measure the built renderer (out/renderer): a stale or missing build would
// measure old code or time out waiting for the page, so they build it from the current sources.
import { execFileSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Set by bench/run.ts once it has built the renderer, so each page bench it starts does not build it again. */
const BUILT_ENV = "T3_FLEET_BENCH_RENDERER_BUILT";

/** Builds the renderer into out/renderer and marks it built for this process and the benches it starts. */
export function buildRenderer(): void {
  execFileSync(process.execPath, [join(root, "node_modules/electron-vite/bin/electron-vite.js"), "build", "--logLevel", "error"], {
    cwd: root,
    stdio: "inherit",
  });
  process.env[BUILT_ENV] = "1";
}

/** Builds the renderer unless this process, or the `npm run bench` that started it, already did. */
export function ensureRendererBuilt(): void {
  if (process.env[BUILT_ENV] !== "1") buildRenderer();
}
