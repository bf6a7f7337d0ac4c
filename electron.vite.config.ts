import { resolve } from "node:path";
import react from "@vitejs/plugin-react";
import { defineConfig, externalizeDepsPlugin } from "electron-vite";

// Three bundles, one per runtime (docs/architecture.md, "Layers"): the Electron main process (which hosts the fleet
// service), the sandboxed preload, and the React renderer.
export default defineConfig({
  main: {
    plugins: [externalizeDepsPlugin()],
    build: { outDir: "out/main", rollupOptions: { input: resolve("electron/main/index.ts") } },
  },
  preload: {
    plugins: [externalizeDepsPlugin()],
    build: { outDir: "out/preload", rollupOptions: { input: resolve("electron/preload/index.ts"), output: { format: "cjs" } } },
  },
  renderer: {
    root: "renderer",
    plugins: [react()],
    build: { outDir: resolve("out/renderer"), minify: "esbuild", rollupOptions: { input: resolve("renderer/index.html") } },
  },
});
