// What a simulated turn changes in its workspace and the tokens it uses, for both protocols' servers.
// Scenario words in a message: `#edit` (3 files), `#edit:N` (N files, at most 200), `#bigdiff` (one new
// file of 10,000 lines), `#nearfull` (the context nearly full, and the provider does not compact),
// `#trojan` (one file whose added lines hold bidi and control characters: "Trojan Source", issue 43),
// `#vendor:N` (N new files of a few lines each, at most 100,000: a vendored tree checked in, issue 43).
// The diff text is what T3 returns from getTurnDiff: git's unified format, whose +/- counts match the
// checkpoint's file list (docs/t3-protocols.md, "Changes and usage").

export interface SimChangedFile {
  path: string;
  kind: "added" | "modified" | "deleted";
  additions: number;
  deletions: number;
}

export interface SimTurnChanges {
  files: SimChangedFile[];
  diff: string;
}

/** The context window the simulated providers report (Codex's, as recorded on 0.0.42). */
export const SIM_CONTEXT_WINDOW = 258_400;

const has = (text: string, word: string) => new RegExp(`(^|\\s)#${word}(\\b|$)`).test(text);

/** The files and diff of a turn whose message asks for edits, or undefined when it changes nothing. */
export function simTurnChanges(text: string, turnCount: number): SimTurnChanges | undefined {
  if (has(text, "bigdiff")) return fileChanges([{ path: `src/generated/table-${turnCount}.ts`, kind: "added", additions: 10_000, deletions: 0 }]);
  if (has(text, "trojan")) return trojanChanges();
  const vendor = /(^|\s)#vendor:(\d+)(\b|$)/.exec(text);
  if (vendor) return vendoredChanges(Math.max(1, Math.min(Number(vendor[2]), MAX_VENDORED_FILES)), turnCount);
  const edit = /(^|\s)#edit(?::(\d+))?(\b|$)/.exec(text);
  if (!edit) return undefined;
  const count = Math.max(1, Math.min(Number(edit[2] ?? 3), 200));
  const kinds: SimChangedFile["kind"][] = ["modified", "added", "modified", "deleted"];
  const files = Array.from({ length: count }, (_, index): SimChangedFile => {
    const kind = kinds[(index + turnCount) % kinds.length]!;
    const size = 3 + ((index * 7 + turnCount * 5) % 37);
    return {
      path: index === 0 ? "README.md" : `src/module-${turnCount}-${index}.ts`,
      kind,
      additions: kind === "deleted" ? 0 : size,
      deletions: kind === "added" ? 0 : kind === "deleted" ? size : 1 + (index % 3),
    };
  });
  return fileChanges(files);
}

/** The most files `#vendor:N` adds in one turn. */
export const MAX_VENDORED_FILES = 100_000;

/** N new files of 1 to 3 lines under vendor/, as a vendored tree or a checked-in node_modules is. */
function vendoredChanges(count: number, turnCount: number): SimTurnChanges {
  const files = Array.from({ length: count }, (_, index): SimChangedFile => ({
    path: `vendor/pkg-${turnCount}-${index}/index.js`,
    kind: "added",
    additions: 1 + (index % 3),
    deletions: 0,
  }));
  return fileChanges(files);
}

function fileChanges(files: SimChangedFile[]): SimTurnChanges {
  return { files, diff: files.map(fileDiff).join("") };
}

function codeLine(path: string, index: number): string {
  if (path.endsWith(".md")) return index === 0 ? "# Project notes" : `- item ${index}: keep the build green`;
  return `export const value${index} = compute(${index}, "${path.split("/").pop()}"); // step ${index}`;
}

function fileDiff(file: SimChangedFile): string {
  const header = [`diff --git a/${file.path} b/${file.path}`];
  if (file.kind === "added") header.push("new file mode 100644", "index 0000000..1a2b3c4", "--- /dev/null", `+++ b/${file.path}`);
  else if (file.kind === "deleted") header.push("deleted file mode 100644", "index 1a2b3c4..0000000", `--- a/${file.path}`, "+++ /dev/null");
  else header.push("index 1a2b3c4..5d6e7f8 100644", `--- a/${file.path}`, `+++ b/${file.path}`);
  const context = file.kind === "modified" ? 1 : 0;
  const lines = [
    `@@ -${file.deletions + context > 0 ? 1 : 0},${file.deletions + context} +${file.additions + context > 0 ? 1 : 0},${file.additions + context} @@`,
  ];
  if (context) lines.push(` ${codeLine(file.path, 0)}`);
  for (let index = 1; index <= file.deletions; index++) lines.push(`-${codeLine(file.path, index)}`);
  for (let index = 1; index <= file.additions; index++) lines.push(`+${codeLine(file.path, index + file.deletions)}`);
  return [...header, ...lines].join("\n") + "\n";
}

/** An access check whose comment reorders what a reviewer reads (bidi override and isolates), and a terminal escape. */
function trojanChanges(): SimTurnChanges {
  const path = "src/auth.js";
  const diff = [
    `diff --git a/${path} b/${path}`,
    "index 1a2b3c4..5d6e7f8 100644",
    `--- a/${path}`,
    `+++ b/${path}`,
    "@@ -1,2 +1,3 @@",
    " let isAdmin = false;",
    "-// admins only",
    "+/*\u202E } \u2066if (isAdmin)\u2069 \u2066 begin admins only */",
    '+const banner = "\x1b[2Jready";',
  ].join("\n");
  return { files: [{ path, kind: "modified", additions: 2, deletions: 1 }], diff: `${diff}\n` };
}

/** The diff between two turn counts: the turns after `from` up to `to`, in order. */
export function diffBetween(diffs: ReadonlyMap<number, string>, from: number, to: number): string {
  let text = "";
  for (let turn = from + 1; turn <= to; turn++) text += diffs.get(turn) ?? "";
  return text;
}

export interface SimTurnUsage {
  input: number;
  cachedInput: number;
  output: number;
  reasoning: number;
}

/**
 * One turn's tokens, from its message: a fixed cost plus a little per word and per changed line. A
 * nearly full context (`#nearfull`) was sent whole with the turn's request, so the turn processed
 * it: no simulated server reports a fill larger than what its turn used (issue 39).
 */
export function simTurnUsage(text: string, turnCount: number, changes: SimTurnChanges | undefined): SimTurnUsage {
  const words = text.split(/\s+/).filter(Boolean).length;
  const changed = changes?.files.reduce((sum, file) => sum + file.additions + file.deletions, 0) ?? 0;
  const output = 180 + words * 3 + Math.min(changed, 20_000) * 6;
  const input = simNearlyFull(text) ? Math.floor(SIM_CONTEXT_WINDOW * 0.95) - output : 2_400 + words * 12 + Math.min(changed, 20_000) * 4;
  return { input, cachedInput: turnCount > 1 ? Math.floor(input / 2) : 0, output, reasoning: 64 };
}

/** Whether the message asks for a nearly full context that the provider will not compact. */
export function simNearlyFull(text: string): boolean {
  return has(text, "nearfull");
}

/** The RPC answer of getTurnDiff / getFullThreadDiff, or undefined for other methods (both protocols' servers). */
export function diffRpc(
  tag: string,
  payload: unknown,
  diffsOf: (threadId: string) => { diffs: ReadonlyMap<number, string>; turnCount: number } | undefined,
): { ok: true; value: unknown } | { ok: false; cause: unknown[] } | undefined {
  if (tag !== "orchestration.getTurnDiff" && tag !== "orchestration.getFullThreadDiff") return undefined;
  const input = (payload ?? {}) as { threadId?: unknown; fromTurnCount?: unknown; toTurnCount?: unknown };
  const errorTag = tag === "orchestration.getTurnDiff" ? "OrchestrationGetTurnDiffError" : "OrchestrationGetFullThreadDiffError";
  const fail = (message: string) => ({ ok: false as const, cause: [{ _tag: "Fail", error: { _tag: errorTag, message } }] });
  const threadId = typeof input.threadId === "string" ? input.threadId : "";
  const to = Number(input.toTurnCount);
  const from = tag === "orchestration.getFullThreadDiff" ? 0 : Number(input.fromTurnCount);
  if (!Number.isInteger(from) || !Number.isInteger(to) || from < 0 || from > to) return fail("fromTurnCount must be less than or equal to toTurnCount");
  const thread = diffsOf(threadId);
  if (!thread) return fail(`Thread '${threadId}' not found.`);
  if (to > thread.turnCount) return fail(`Checkpoint ref is unavailable for turn ${to}.`);
  return { ok: true, value: { threadId, fromTurnCount: from, toTurnCount: to, diff: diffBetween(thread.diffs, from, to) } };
}
