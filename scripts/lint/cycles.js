// No import cycles, type imports included (docs/architecture.md, "Layers"): a cycle of type
// imports is still two modules that cannot be understood, moved or tested apart. import-x/no-cycle
// does the search and resolves TypeScript paths; it skips type-only edges by design, so this rule
// shows it the linted file's type imports as value imports, and type-counting-parser.cjs does the
// same for every file the search reaches.
import { createRequire } from "node:module";
import importX from "eslint-plugin-import-x";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";

const require = createRequire(import.meta.url);

function asValueEdge(node) {
  return {
    ...node,
    ...(node.importKind !== undefined && { importKind: "value" }),
    ...(node.exportKind !== undefined && { exportKind: "value" }),
    ...(node.specifiers && { specifiers: node.specifiers.map((specifier) => ({ ...specifier, importKind: "value", exportKind: "value" })) }),
  };
}

const noCycle = importX.rules["no-cycle"];

const noCycleWithTypes = {
  meta: { ...noCycle.meta, docs: { description: "import-x/no-cycle, type imports counted" } },
  defaultOptions: noCycle.defaultOptions,
  create(context) {
    const visitors = noCycle.create(context);
    const wrapped = { ...visitors };
    for (const type of ["ImportDeclaration", "ExportNamedDeclaration", "ExportAllDeclaration"]) {
      const visit = visitors[type];
      if (visit) wrapped[type] = (node) => visit(asValueEdge(node));
    }
    return wrapped;
  },
};

export const cyclesPlugin = { rules: { "no-cycle": noCycleWithTypes } };

/** Settings import-x needs to follow this repository's TypeScript imports. */
export function cycleSettings(projects) {
  return {
    "import-x/extensions": [".ts", ".tsx"],
    "import-x/parsers": { [require.resolve("./type-counting-parser.cjs")]: [".ts", ".tsx"] },
    "import-x/resolver-next": [createTypeScriptImportResolver({ project: projects })],
  };
}
