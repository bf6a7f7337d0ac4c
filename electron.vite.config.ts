import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import react from "@vitejs/plugin-react";
import { defineConfig } from "electron-vite";

// Optional dependencies (keytar) stay outside the bundle like the others, so the build never needs
// them installed: electron/fleet/secrets.ts loads keytar at run time and says where tokens go without it.
const optional = Object.keys(
  (JSON.parse(readFileSync("package.json", "utf8")) as { optionalDependencies?: Record<string, string> }).optionalDependencies ?? {},
);

// Three bundles, one per runtime (docs/architecture.md, "Layers"): the Electron main process (which hosts the fleet
// service), the sandboxed preload, and the React renderer.
export default defineConfig({
  main: {
    build: { outDir: "out/main", externalizeDeps: { include: optional }, rollupOptions: { input: resolve("electron/main/index.ts") } },
  },
  preload: {
    build: { outDir: "out/preload", rollupOptions: { input: resolve("electron/preload/index.ts"), output: { format: "cjs" } } },
  },
  renderer: {
    root: "renderer",
    plugins: [react()],
    build: { outDir: resolve("out/renderer"), minify: "esbuild", rollupOptions: { input: resolve("renderer/index.html") } },
  },
});
