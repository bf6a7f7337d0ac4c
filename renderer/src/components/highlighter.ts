// One code highlighter for the whole window: lowlight's core with only the grammars fenced code
// blocks actually name, each loaded on first use in its own chunk, so the first paint never waits
// for highlighting and no render registers grammars again (rehype-highlight builds a new lowlight
// with ~37 grammars every time its plugin is attached, i.e. on every markdown render).
import type { Element, ElementContent, Root, RootContent } from "hast";
import type { createLowlight } from "lowlight";
import { useSyncExternalStore } from "react";

type Lowlight = ReturnType<typeof createLowlight>;
type GrammarModule = { default: Parameters<Lowlight["register"]>[1] };

/** Grammars we load on demand, by highlight.js name; each import becomes its own chunk. */
const GRAMMARS: Record<string, () => Promise<GrammarModule>> = {
  bash: () => import("highlight.js/lib/languages/bash"),
  c: () => import("highlight.js/lib/languages/c"),
  cpp: () => import("highlight.js/lib/languages/cpp"),
  csharp: () => import("highlight.js/lib/languages/csharp"),
  css: () => import("highlight.js/lib/languages/css"),
  diff: () => import("highlight.js/lib/languages/diff"),
  dockerfile: () => import("highlight.js/lib/languages/dockerfile"),
  go: () => import("highlight.js/lib/languages/go"),
  graphql: () => import("highlight.js/lib/languages/graphql"),
  ini: () => import("highlight.js/lib/languages/ini"),
  java: () => import("highlight.js/lib/languages/java"),
  javascript: () => import("highlight.js/lib/languages/javascript"),
  json: () => import("highlight.js/lib/languages/json"),
  kotlin: () => import("highlight.js/lib/languages/kotlin"),
  lua: () => import("highlight.js/lib/languages/lua"),
  makefile: () => import("highlight.js/lib/languages/makefile"),
  markdown: () => import("highlight.js/lib/languages/markdown"),
  php: () => import("highlight.js/lib/languages/php"),
  plaintext: () => import("highlight.js/lib/languages/plaintext"),
  python: () => import("highlight.js/lib/languages/python"),
  ruby: () => import("highlight.js/lib/languages/ruby"),
  rust: () => import("highlight.js/lib/languages/rust"),
  scss: () => import("highlight.js/lib/languages/scss"),
  shell: () => import("highlight.js/lib/languages/shell"),
  sql: () => import("highlight.js/lib/languages/sql"),
  swift: () => import("highlight.js/lib/languages/swift"),
  typescript: () => import("highlight.js/lib/languages/typescript"),
  xml: () => import("highlight.js/lib/languages/xml"),
  yaml: () => import("highlight.js/lib/languages/yaml"),
};

/** Fence names people write → the grammar that reads them. */
const ALIASES: Record<string, string> = {
  sh: "bash",
  zsh: "bash",
  console: "shell",
  "c++": "cpp",
  h: "c",
  hpp: "cpp",
  cs: "csharp",
  patch: "diff",
  docker: "dockerfile",
  golang: "go",
  toml: "ini",
  js: "javascript",
  jsx: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  jsonc: "json",
  kt: "kotlin",
  md: "markdown",
  text: "plaintext",
  txt: "plaintext",
  py: "python",
  rb: "ruby",
  rs: "rust",
  ts: "typescript",
  tsx: "typescript",
  mts: "typescript",
  html: "xml",
  svg: "xml",
  yml: "yaml",
};

/** The grammar name for a fence's language, or null when we do not highlight it. */
export function grammarOf(language: string): string | null {
  const name = language.toLowerCase();
  const grammar = ALIASES[name] ?? name;
  return Object.hasOwn(GRAMMARS, grammar) ? grammar : null;
}

const FENCE = /^ {0,3}(?:```|~~~)[ \t]*([\w+#.-]+)/gm;

/** The grammars a markdown text's fenced code blocks name. */
export function grammarsIn(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(FENCE)) {
    const grammar = grammarOf(match[1]!);
    if (grammar) found.add(grammar);
  }
  return [...found];
}

let lowlight: Lowlight | undefined;
let core: Promise<Lowlight> | undefined;
const loading = new Map<string, Promise<void>>();
/** Bumped whenever a grammar becomes usable; markdown naming that grammar renders again. */
let version = 0;
const listeners = new Set<() => void>();

function loadCore(): Promise<Lowlight> {
  core ??= import("lowlight").then(({ createLowlight }) => (lowlight = createLowlight()));
  return core;
}

function load(grammar: string): void {
  if (loading.has(grammar)) return;
  const done = Promise.all([loadCore(), GRAMMARS[grammar]!()]).then(
    ([instance, module]) => {
      instance.register(grammar, module.default);
      version++;
      for (const listener of listeners) listener();
    },
    () => {
      // A chunk that failed to load leaves its code plain; a later render may try again.
      loading.delete(grammar);
    },
  );
  loading.set(grammar, done);
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Starts loading the grammars `text` needs and returns a number that changes once one of them is
 * ready (a render key). Text without fenced code never subscribes.
 */
export function useGrammars(grammars: readonly string[]): number {
  const ready = grammars.length === 0 || (lowlight !== undefined && grammars.every((grammar) => lowlight!.registered(grammar)));
  if (!ready) for (const grammar of grammars) load(grammar);
  // The snapshot is the version in both cases: a render forced by a new grammar must see it change,
  // or React keeps the previous (plain) output. Rendered to a string (Markdown.test.ts), the same.
  return useSyncExternalStore(ready ? noSubscription : subscribe, currentVersion, currentVersion);
}
const noSubscription = () => () => {};
const currentVersion = () => version;

/** Waits until the named grammars are registered (tests). */
export async function grammarsReady(grammars: readonly string[]): Promise<void> {
  for (const grammar of grammars) load(grammar);
  await Promise.all(grammars.map((grammar) => loading.get(grammar)));
}

/**
 * A rehype plugin (attached once per render, cheap): highlights `pre > code.language-x` blocks
 * whose grammar is loaded; others stay plain until it is.
 */
export function rehypeLazyHighlight() {
  return (tree: Root) => {
    if (lowlight) visit(tree, lowlight);
  };
}

function visit(node: Root | Element, instance: Lowlight): void {
  for (const child of node.children as (RootContent | ElementContent)[]) {
    if (child.type !== "element") continue;
    if (child.tagName === "pre") {
      for (const code of child.children) if (code.type === "element" && code.tagName === "code") highlightCode(code, instance);
      continue;
    }
    visit(child, instance);
  }
}

function highlightCode(code: Element, instance: Lowlight): void {
  const classes = Array.isArray(code.properties.className) ? code.properties.className.map(String) : [];
  const language = classes.find((name) => name.startsWith("language-"))?.slice("language-".length);
  const grammar = language ? grammarOf(language) : null;
  if (!grammar || !instance.registered(grammar)) return;
  const source = textContent(code);
  const result = instance.highlight(grammar, source);
  code.properties.className = [...classes, "hljs"];
  code.children = result.children as ElementContent[];
}

function textContent(node: Element | ElementContent): string {
  if (node.type === "text") return node.value;
  if (node.type === "element") return node.children.map(textContent).join("");
  return "";
}

/**
 * One line of code coloured by `grammar` (a diff line, renderer/src/components/DiffView.tsx), or null
 * while the grammar is not loaded yet (useGrammars loads it and re-renders).
 */
export function highlightLine(grammar: string, line: string): ElementContent[] | null {
  if (!lowlight || !lowlight.registered(grammar)) return null;
  return lowlight.highlight(grammar, line).children as ElementContent[];
}
