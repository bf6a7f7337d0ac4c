// Lint enforces the runtime layers (docs/architecture.md, "Layers"): shared/ is pure, the renderer
// talks only to shared/, and only the Electron shell may import `electron`.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import boundaries from "eslint-plugin-boundaries";
import reactHooks from "eslint-plugin-react-hooks";
import { builtinModules } from "node:module";
import { cycleSettings, cyclesPlugin } from "./scripts/lint/cycles.js";

const nodeBuiltins = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];
const nodeOnlyPackages = ["undici", "ws", "keytar", "electron", ...nodeBuiltins];

export default tseslint.config(
  { ignores: ["node_modules/**", "out/**", "dist/**", "test-results/**", "playwright-report/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.{ts,tsx}"],
    plugins: { boundaries },
    settings: {
      "import/resolver": { typescript: { project: "./tsconfig.node.json" } },
      "boundaries/include": ["shared/**", "electron/**", "renderer/**", "sim/**", "bench/**", "e2e/**", "integration/**"],
      "boundaries/elements": [
        { type: "shared", pattern: "shared/**", mode: "full" },
        { type: "fleet", pattern: "electron/fleet/**", mode: "full" },
        { type: "serve", pattern: "electron/serve/**", mode: "full" },
        { type: "main", pattern: "electron/main/**", mode: "full" },
        { type: "preload", pattern: "electron/preload/**", mode: "full" },
        { type: "renderer", pattern: "renderer/**", mode: "full" },
        { type: "sim", pattern: "sim/**", mode: "full" },
        { type: "bench", pattern: "bench/**", mode: "full" },
        { type: "e2e", pattern: "e2e/**", mode: "full" },
        { type: "integration", pattern: "integration/**", mode: "full" },
      ],
    },
    rules: {
      "boundaries/element-types": [
        "error",
        {
          default: "disallow",
          rules: [
            { from: "shared", allow: ["shared"] },
            { from: "renderer", allow: ["shared", "renderer"] },
            { from: "fleet", allow: ["shared", "fleet", "sim"], message: "electron/fleet may import shared/ and itself (sim only from tests)" },
            { from: "serve", allow: ["shared", "fleet", "serve", "sim"] },
            { from: "main", allow: ["shared", "fleet", "main", "sim"] },
            { from: "preload", allow: ["shared", "preload"] },
            { from: "sim", allow: ["shared", "sim"] },
            // The soak's `--real` machines run on the real-server kit (integration/realt3, integration/model).
            { from: "bench", allow: ["shared", "fleet", "sim", "bench", "serve", "integration"] },
            { from: "e2e", allow: ["shared", "fleet", "sim", "serve", "e2e", "integration", "bench"] },
            // Harnesses against real servers and namespaces: they drive the service from outside; nothing in production imports them.
            { from: "integration", allow: ["shared", "fleet", "sim", "integration"] },
          ],
        },
      ],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  {
    files: ["shared/**/*.ts"],
    ignores: ["shared/**/*.test.ts"],
    rules: {
      "no-restricted-imports": ["error", { paths: [...nodeOnlyPackages, "react", "react-dom", "zustand"] }],
      "no-restricted-globals": ["error", "process", "Buffer", "window", "document", "require"],
    },
  },
  {
    files: ["renderer/**/*.{ts,tsx}"],
    rules: { "no-restricted-imports": ["error", { paths: nodeOnlyPackages }] },
  },
  {
    // A view acts only through the one dispatcher (issue 41): what an action does is its handler's
    // (renderer/src/state/action-handlers.ts), and these modules are the handlers' implementation.
    files: ["renderer/src/components/**/*.{ts,tsx}", "renderer/src/App.tsx"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: nodeOnlyPackages,
          patterns: [
            {
              group: ["**/state/*-commands", "**/state/navigation", "**/state/links", "**/state/action-handlers"],
              message: "A view acts through dispatch(action, source, args) (renderer/src/state/dispatch.ts), never by calling a handler's implementation.",
            },
            {
              // These modules hold a store the views read, beside the calls only the handlers make.
              group: ["**/state/new-agent", "**/state/diff-view"],
              importNames: ["newAgent", "diffView"],
              message: "A view acts through dispatch(action, source, args) (renderer/src/state/dispatch.ts), never by calling a handler's implementation.",
            },
          ],
        },
      ],
    },
  },
  {
    // React's own rules: hooks called unconditionally, effects and memos list what they read, and
    // the React Compiler's checks (no writes during render, no refs read in render, pure renders).
    files: ["renderer/**/*.{ts,tsx}"],
    plugins: { "react-hooks": reactHooks },
    rules: {
      ...reactHooks.configs["recommended-latest"].rules,
      "react-hooks/exhaustive-deps": "error",
      // Only says the React Compiler would skip memoizing a component that uses TanStack Virtual;
      // the build does not run the compiler (electron.vite.config.ts), so there is nothing to fix.
      "react-hooks/incompatible-library": "off",
    },
  },
  {
    files: ["electron/fleet/**/*.ts", "electron/serve/**/*.ts", "sim/**/*.ts", "bench/**/*.ts", "integration/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { paths: ["electron"] }] },
  },
  {
    // Each protocol's simulator stands alone (issue 41): what both share is in sim/ (host, providers),
    // and the one place that knows both is sim/upgrade.ts.
    files: ["sim/protocol1/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { paths: ["electron"], patterns: ["**/protocol2/**", "!**/shared/t3/protocol2/**"] }] },
  },
  {
    files: ["sim/protocol2/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { paths: ["electron"], patterns: ["**/sim/protocol1/**", "../protocol1/**"] }] },
  },
  {
    // A file does one job: split it by role before it passes 600 lines (issue 41). Tests, testkits and fixtures aside.
    files: ["**/*.{ts,tsx,js,mjs,cjs}"],
    ignores: ["**/*.test.{ts,tsx}", "**/*.testkit.ts", "e2e/**/*.spec.ts", "fixtures/**"],
    rules: { "max-lines": ["error", { max: 600 }] },
  },
  {
    // Production code must not depend on the simulator; tests may.
    files: ["electron/**/*.ts"],
    ignores: ["electron/**/*.test.ts", "electron/**/*.testkit.ts"],
    rules: { "no-restricted-imports": ["error", { paths: ["electron"], patterns: ["**/sim/**"] }] },
  },
  {
    files: ["electron/main/**/*.ts", "electron/preload/**/*.ts"],
    ignores: ["electron/**/*.test.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: ["**/sim/**"] }] },
  },
  {
    // Import cycles, type imports counted (scripts/lint/cycles.js). Not in renderer/: the zustand
    // store and its slices type each other (renderer/src/state/store.ts, zustand's slices pattern).
    files: ["shared/**/*.ts", "electron/**/*.ts", "sim/**/*.ts"],
    plugins: { cycles: cyclesPlugin },
    settings: cycleSettings("./tsconfig.json"),
    rules: { "cycles/no-cycle": "error" },
  },
  {
    // import-x loads its parsers with require().
    files: ["scripts/lint/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { require: "readonly", module: "readonly" } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
