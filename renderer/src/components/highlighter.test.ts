import type { ElementContent, Root } from "hast";
import { describe, expect, it } from "vitest";
import { grammarOf, grammarsIn, grammarsReady, rehypeLazyHighlight } from "./highlighter";

function codeBlock(language: string, source: string): Root {
  return {
    type: "root",
    children: [
      {
        type: "element",
        tagName: "pre",
        properties: {},
        children: [{ type: "element", tagName: "code", properties: { className: [`language-${language}`] }, children: [{ type: "text", value: source }] }],
      },
    ],
  };
}

/** A compact serialization: elements as tag.class[children], text as itself. */
function show(node: Root | ElementContent): string {
  if (node.type === "text") return node.value;
  if (node.type === "root") return node.children.map((child) => show(child as ElementContent)).join("");
  if (node.type !== "element") return "";
  const classes = Array.isArray(node.properties.className) ? node.properties.className.join(".") : "";
  return `${node.tagName}${classes ? `.${classes}` : ""}[${node.children.map(show).join("")}]`;
}

describe("the lazy highlighter", () => {
  it("finds the grammars a text's fenced blocks name, through their common aliases", () => {
    expect(grammarsIn("intro\n```ts\nconst a = 1;\n```\n\n~~~py\nx = 1\n~~~\n```\nplain\n```\n```klingon\nx\n```")).toEqual(["typescript", "python"]);
    expect(grammarOf("YML")).toBe("yaml");
    expect(grammarOf("toString")).toBeNull();
  });

  it("leaves code plain until its grammar is loaded, then highlights it", async () => {
    const before = codeBlock("ts", "const a = 1;");
    rehypeLazyHighlight()(before);
    expect(show(before)).toBe("pre[code.language-ts[const a = 1;]]");

    await grammarsReady(["typescript"]);
    const after = codeBlock("ts", "const a = 1;");
    rehypeLazyHighlight()(after);
    expect(show(after)).toBe("pre[code.language-ts.hljs[span.hljs-keyword[const] a = span.hljs-number[1];]]");

    // A grammar that is not loaded yet does not block the others.
    const python = codeBlock("python", "def f(): pass");
    rehypeLazyHighlight()(python);
    expect(show(python)).toBe("pre[code.language-python[def f(): pass]]");
  });
});
