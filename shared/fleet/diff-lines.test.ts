import { describe, expect, it } from "vitest";
import { extensionOf, parseDiff } from "./diff-lines";

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
