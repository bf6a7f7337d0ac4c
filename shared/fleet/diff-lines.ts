// A unified diff (git's `diff --git` format, as T3's getTurnDiff returns it) split into lines a
// viewer shows one by one: file headers, hunk headers, added, removed and context lines with their
// line numbers, and the file each line belongs to (its language colours the code). A diff is the
// agent's code as written, so it is not cleaned as server text is (shared/t3/text.ts); instead each
// bidi or control character in a line is named, so the viewer shows it as a visible marker and
// flags the line: a reviewer is never shown code in an order other than the one it runs in
// ("Trojan Source", issue 43).

export type DiffLineKind = "file" | "meta" | "hunk" | "add" | "del" | "context";

export interface DiffLine {
  kind: DiffLineKind;
  /** The line without its +/-/space marker (headers keep their whole text). */
  text: string;
  /** The file this line belongs to (the new path; the old one for a deleted file). */
  path: string;
  oldNumber: number | null;
  newNumber: number | null;
  /** The hidden characters the line holds (bidi controls, C0/C1 controls but tab), in order; absent when none. */
  hidden?: string[];
}

/** Bidi embeddings, overrides, isolates and marks, line and paragraph separators, and C0/C1 controls but tab. */
const HIDDEN = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/; // eslint-disable-line no-control-regex -- finding them is the point
const HIDDEN_ALL = new RegExp(HIDDEN.source, "g");

const NAMES: Record<number, string> = {
  0x061c: "ARABIC LETTER MARK",
  0x200e: "LEFT-TO-RIGHT MARK",
  0x200f: "RIGHT-TO-LEFT MARK",
  0x202a: "LEFT-TO-RIGHT EMBEDDING",
  0x202b: "RIGHT-TO-LEFT EMBEDDING",
  0x202c: "POP DIRECTIONAL FORMATTING",
  0x202d: "LEFT-TO-RIGHT OVERRIDE",
  0x202e: "RIGHT-TO-LEFT OVERRIDE",
  0x2066: "LEFT-TO-RIGHT ISOLATE",
  0x2067: "RIGHT-TO-LEFT ISOLATE",
  0x2068: "FIRST STRONG ISOLATE",
  0x2069: "POP DIRECTIONAL ISOLATE",
  0x2028: "LINE SEPARATOR",
  0x2029: "PARAGRAPH SEPARATOR",
};

/** "U+202E", the marker a hidden character is shown as. */
export function codePointOf(char: string): string {
  return `U+${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
}

/** "U+202E RIGHT-TO-LEFT OVERRIDE", "U+001B control character". */
export function hiddenCharName(char: string): string {
  return `${codePointOf(char)} ${NAMES[char.charCodeAt(0)] ?? "control character"}`;
}

/** A line's text as the viewer shows it: plain runs, and each hidden character as its own marker. */
export type DiffSegment = { kind: "text"; text: string } | { kind: "hidden"; char: string; marker: string; name: string };

export function visibleSegments(text: string): DiffSegment[] {
  const segments: DiffSegment[] = [];
  let from = 0;
  for (const match of text.matchAll(HIDDEN_ALL)) {
    if (match.index > from) segments.push({ kind: "text", text: text.slice(from, match.index) });
    segments.push({ kind: "hidden", char: match[0], marker: `<${codePointOf(match[0])}>`, name: hiddenCharName(match[0]) });
    from = match.index + 1;
  }
  if (from < text.length || segments.length === 0) segments.push({ kind: "text", text: text.slice(from) });
  return segments;
}

/** The line with the hidden characters it holds named, when it holds any. */
function line(fields: Omit<DiffLine, "hidden">): DiffLine {
  if (!HIDDEN.test(fields.text)) return fields;
  return { ...fields, hidden: [...fields.text.matchAll(HIDDEN_ALL)].map((match) => hiddenCharName(match[0])) };
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
  for (const rawLine of source.split("\n")) {
    // A file with CRLF line ends: the CR ends the line, as an editor shows it, and is no hidden character.
    const raw = rawLine.endsWith("\r") ? rawLine.slice(0, -1) : rawLine;
    const file = FILE.exec(raw);
    if (file) {
      path = file[2]!;
      inHunk = false;
      lines.push(line({ kind: "file", text: path, path, oldNumber: null, newNumber: null }));
      continue;
    }
    const hunk = HUNK.exec(raw);
    if (hunk) {
      oldNumber = Number(hunk[1]);
      newNumber = Number(hunk[2]);
      inHunk = true;
      lines.push(line({ kind: "hunk", text: raw, path, oldNumber: null, newNumber: null }));
      continue;
    }
    if (inHunk && raw.startsWith("+")) lines.push(line({ kind: "add", text: raw.slice(1), path, oldNumber: null, newNumber: newNumber++ }));
    else if (inHunk && raw.startsWith("-")) lines.push(line({ kind: "del", text: raw.slice(1), path, oldNumber: oldNumber++, newNumber: null }));
    else if (inHunk && raw.startsWith(" ")) lines.push(line({ kind: "context", text: raw.slice(1), path, oldNumber: oldNumber++, newNumber: newNumber++ }));
    else lines.push(line({ kind: "meta", text: raw, path, oldNumber: null, newNumber: null }));
  }
  return lines;
}

/** The file extension a path's code is coloured by ("src/a.test.ts" → "ts"), or "" when it has none. */
export function extensionOf(path: string): string {
  const name = path.split("/").at(-1) ?? "";
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1) : name === "Dockerfile" ? "dockerfile" : name === "Makefile" ? "makefile" : "";
}
