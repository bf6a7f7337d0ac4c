// The parser import-x uses to read the files an import leads to (eslint.config.js, "import cycles"):
// TypeScript's, with every type-only import and export marked as a value one, so import-x/no-cycle,
// which skips type-only edges by design, follows them too. Only import-x reads these trees.
const tsParser = require("@typescript-eslint/parser");

const MODULE_EDGES = new Set(["ImportDeclaration", "ExportNamedDeclaration", "ExportAllDeclaration"]);

function asValueEdge(node) {
  if (node.importKind !== undefined) node.importKind = "value";
  if (node.exportKind !== undefined) node.exportKind = "value";
  for (const specifier of node.specifiers ?? []) {
    if (specifier.importKind !== undefined) specifier.importKind = "value";
    if (specifier.exportKind !== undefined) specifier.exportKind = "value";
  }
}

function parseForESLint(code, options) {
  const result = tsParser.parseForESLint(code, options);
  for (const node of result.ast.body) if (MODULE_EDGES.has(node.type)) asValueEdge(node);
  return result;
}

module.exports = { parseForESLint, meta: { name: "type-counting-parser" } };
