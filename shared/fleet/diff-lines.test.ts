import { describe, expect, it } from "vitest";
import { HOSTILE } from "../t3/hostile-text.testkit";
import { extensionOf, parseDiff, visibleSegments } from "./diff-lines";

const DIFF = `diff --git a/src/a.ts b/src/a.ts
index 1a2b3c4..5d6e7f8 100644
--- a/src/a.ts
+++ b/src/a.ts
@@ -10,3 +10,3 @@ export function a() {
 const x = 1;
-const y = 2;
+const y = 3;
diff --git a/docs/new.md b/docs/new.md
new file mode 100644
--- /dev/null
+++ b/docs/new.md
@@ -0,0 +1,1 @@
+# New
`;

describe("parseDiff", () => {
  it("splits files, hunks and lines with their numbers and file", () => {
    const lines = parseDiff(DIFF);
    expect(lines.map((line) => line.kind)).toEqual([
      "file",
      "meta",
      "meta",
      "meta",
      "hunk",
      "context",
      "del",
      "add",
      "file",
      "meta",
      "meta",
      "meta",
      "hunk",
      "add",
    ]);
    expect(lines[5]).toEqual({ kind: "context", text: "const x = 1;", path: "src/a.ts", oldNumber: 10, newNumber: 10 });
    expect(lines[6]).toMatchObject({ kind: "del", text: "const y = 2;", oldNumber: 11, newNumber: null });
    expect(lines[7]).toMatchObject({ kind: "add", text: "const y = 3;", oldNumber: null, newNumber: 11 });
    expect(lines[13]).toMatchObject({ kind: "add", text: "# New", path: "docs/new.md", newNumber: 1 });
  });

  it("reads an empty diff as no lines, and headers (--- and +++) outside hunks as meta", () => {
    expect(parseDiff("")).toEqual([]);
    expect(parseDiff(DIFF).filter((line) => line.text.startsWith("+++"))).toHaveLength(2);
  });

  it("names a path's extension", () => {
    expect(extensionOf("src/a.test.ts")).toBe("ts");
    expect(extensionOf("Dockerfile")).toBe("dockerfile");
    expect(extensionOf(".env")).toBe("");
  });
});

/** The Trojan Source pattern: an access check whose comment reorders what a reviewer reads (issue 43). */
const TROJAN = `diff --git a/auth.js b/auth.js
--- a/auth.js
+++ b/auth.js
@@ -1,1 +1,2 @@
 let isAdmin = false;
+/*\u202E } \u2066if (isAdmin)\u2069 \u2066 begin admins only */
+const crlf = 1;\r
+const bell = "\x07\x1b[2J\x9b";
`;

describe("hidden characters in a diff's lines", () => {
  it("names each bidi or control character of a line, in order, and flags only those lines", () => {
    const lines = parseDiff(TROJAN);
    const flagged = lines.filter((line) => line.hidden);
    expect(flagged.map((line) => line.newNumber)).toEqual([2, 4]);
    expect(flagged[0]!.hidden).toEqual([
      "U+202E RIGHT-TO-LEFT OVERRIDE",
      "U+2066 LEFT-TO-RIGHT ISOLATE",
      "U+2069 POP DIRECTIONAL ISOLATE",
      "U+2066 LEFT-TO-RIGHT ISOLATE",
    ]);
    expect(flagged[1]!.hidden).toEqual(["U+0007 control character", "U+001B control character", "U+009B control character"]);
    // A CRLF file's line end is no hidden character; a tab is code.
    expect(lines.find((line) => line.newNumber === 3)).toMatchObject({ text: "const crlf = 1;" });
    expect(parseDiff("@@ -1 +1 @@\n+\tindented\n")[1]!.hidden).toBeUndefined();
  });

  it("shows each hidden character as a marker between the text around it, the text itself unchanged", () => {
    const segments = visibleSegments(HOSTILE.rlo);
    expect(segments).toEqual([
      { kind: "text", text: "invoice " },
      { kind: "hidden", char: "\u202E", marker: "<U+202E>", name: "U+202E RIGHT-TO-LEFT OVERRIDE" },
      { kind: "text", text: "gnp.exe" },
      { kind: "hidden", char: "\u202C", marker: "<U+202C>", name: "U+202C POP DIRECTIONAL FORMATTING" },
    ]);
    expect(segments.map((segment) => (segment.kind === "text" ? segment.text : segment.char)).join("")).toBe(HOSTILE.rlo);
    expect(visibleSegments("plain")).toEqual([{ kind: "text", text: "plain" }]);
    expect(visibleSegments("")).toEqual([{ kind: "text", text: "" }]);
  });

  it("marks a file header and a hunk header too: a path or a function name can hide them as well", () => {
    const lines = parseDiff(`diff --git a/x\u202E.js b/x\u202E.js\n@@ -1 +1 @@ function\u2067 f\n+ok\n`);
    expect(lines.map((line) => line.hidden?.length ?? 0)).toEqual([1, 1, 0]);
  });
});
