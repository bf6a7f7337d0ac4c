// A unified diff (git's `diff --git` format, as T3's getTurnDiff returns it) split into lines a
// viewer shows one by one: file headers, hunk headers, added, removed and context lines with their
// line numbers, and the file each line belongs to (its language colours the code).

export type DiffLineKind = "file" | "meta" | "hunk" | "add" | "del" | "context";

export interface DiffLine {
  kind: DiffLineKind;
  /** The line without its +/-/space marker (headers keep their whole text). */
  text: string;
  /** The file this line belongs to (the new path; the old one for a deleted file). */
  path: string;
  oldNumber: number | null;
  newNumber: number | null;
}

const FILE = /^diff --git a\/(.+?) b\/(.+)$/;
const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

export function parseDiff(text: string): DiffLine[] {
  const lines: DiffLine[] = [];
  let path = "";
  let oldNumber = 0;
  let newNumber = 0;
  let inHunk = false;
  const source = text.endsWith("\n") ? text.slice(0, -1) : text;
  if (source === "") return lines;
  for (const raw of source.split("\n")) {
    const file = FILE.exec(raw);
    if (file) {
      path = file[2]!;
      inHunk = false;
      lines.push({ kind: "file", text: path, path, oldNumber: null, newNumber: null });
      continue;
    }
    const hunk = HUNK.exec(raw);
    if (hunk) {
      oldNumber = Number(hunk[1]);
      newNumber = Number(hunk[2]);
      inHunk = true;
      lines.push({ kind: "hunk", text: raw, path, oldNumber: null, newNumber: null });
      continue;
    }
    if (inHunk && raw.startsWith("+")) lines.push({ kind: "add", text: raw.slice(1), path, oldNumber: null, newNumber: newNumber++ });
    else if (inHunk && raw.startsWith("-")) lines.push({ kind: "del", text: raw.slice(1), path, oldNumber: oldNumber++, newNumber: null });
    else if (inHunk && raw.startsWith(" ")) lines.push({ kind: "context", text: raw.slice(1), path, oldNumber: oldNumber++, newNumber: newNumber++ });
    else lines.push({ kind: "meta", text: raw, path, oldNumber: null, newNumber: null });
  }
  return lines;
}

/** The file extension a path's code is coloured by ("src/a.test.ts" → "ts"), or "" when it has none. */
export function extensionOf(path: string): string {
  const name = path.split("/").at(-1) ?? "";
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1) : name === "Dockerfile" ? "dockerfile" : name === "Makefile" ? "makefile" : "";
}
