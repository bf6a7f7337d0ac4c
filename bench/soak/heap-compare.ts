// `npx tsx bench/soak/heap-compare.ts A.heapsnapshot B.heapsnapshot [C…] [--retained Owner.field,…] [--fields-of Owner,…]`:
// what a process's heap gained between V8 heap snapshots of the same process (bench/soak/heap-churn.ts
// takes them of the fleet service; issue 43). Prints, first to last: the self size per constructor;
// the objects allocated after the first and alive in the last (V8 keeps an object's id across one
// process's snapshots) by their shortest retaining path; every Map, Set and Array that grew, by its
// path; the same objects whose dominator-tree size grew most; and with `--retained`, what the named fields hold alone in each snapshot (e.g.
// EnvironmentBudget.changes): a structure that grows with churn rather than with the fleet shows in all.
// `--fields-of Owner,…` does that for every property of those constructors (e.g. FleetService), largest growth first.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface Snapshot {
  nodeFields: number;
  edgeFields: number;
  nodes: Uint32Array;
  edges: Uint32Array;
  strings: string[];
  nodeTypes: string[];
  edgeTypes: string[];
  firstEdge: Uint32Array;
}

function load(path: string): Snapshot {
  const raw = JSON.parse(readFileSync(path, "utf8")) as {
    snapshot: { meta: { node_fields: string[]; edge_fields: string[]; node_types: [string[]]; edge_types: [string[]] } };
    nodes: number[];
    edges: number[];
    strings: string[];
  };
  const { meta } = raw.snapshot;
  const nodeFields = meta.node_fields.length;
  const edgeFields = meta.edge_fields.length;
  const nodes = Uint32Array.from(raw.nodes);
  const count = nodes.length / nodeFields;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0; i < count; i++) firstEdge[i + 1] = firstEdge[i]! + nodes[i * nodeFields + 4]! * edgeFields;
  return {
    nodeFields,
    edgeFields,
    nodes,
    edges: Uint32Array.from(raw.edges),
    strings: raw.strings,
    nodeTypes: meta.node_types[0],
    edgeTypes: meta.edge_types[0],
    firstEdge,
  };
}

// Node fields: type, name, id, self_size, edge_count, trace_node_id, detachedness. Edge fields: type, name_or_index, to_node.
const typeOf = (s: Snapshot, i: number) => s.nodeTypes[s.nodes[i * s.nodeFields]!]!;
const nameOf = (s: Snapshot, i: number) => s.strings[s.nodes[i * s.nodeFields + 1]!]!;
const idOf = (s: Snapshot, i: number) => s.nodes[i * s.nodeFields + 2]!;
const sizeOf = (s: Snapshot, i: number) => s.nodes[i * s.nodeFields + 3]!;
const nodeCount = (s: Snapshot) => s.nodes.length / s.nodeFields;

/** A table slot that holds a value: deleted slots point at the hole, and the table at its own map; both are hidden. */
const liveSlot = (s: Snapshot, node: number) => typeOf(s, node) !== "hidden";

/** Objects grouped as the DevTools summary does: a constructor's name, or the kind for strings, arrays, code and the like. */
function groupOf(s: Snapshot, i: number): string {
  const type = typeOf(s, i);
  if (type === "object" || type === "closure" || type === "native") return `${type === "closure" ? "closure " : ""}${nameOf(s, i).slice(0, 60)}`;
  return `(${type})`;
}

function summary(s: Snapshot): Map<string, { count: number; bytes: number }> {
  const groups = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < nodeCount(s); i++) {
    const group = groups.get(groupOf(s, i)) ?? { count: 0, bytes: 0 };
    group.count++;
    group.bytes += sizeOf(s, i);
    groups.set(groupOf(s, i), group);
  }
  return groups;
}

function edgeName(s: Snapshot, edge: number): string {
  const type = s.edgeTypes[s.edges[edge]!]!;
  const nameOrIndex = s.edges[edge + 1]!;
  return type === "element" || type === "hidden" ? `[${nameOrIndex}]` : s.strings[nameOrIndex]!;
}

/** Each node's parent on a shortest path from the root (breadth first over strong edges), and the edge that reached it. */
function shortestRetainers(s: Snapshot): { parent: Int32Array; via: Int32Array } {
  const count = nodeCount(s);
  const parent = new Int32Array(count).fill(-1);
  const via = new Int32Array(count).fill(-1);
  parent[0] = 0;
  let frontier = [0];
  while (frontier.length) {
    const next: number[] = [];
    for (const node of frontier) {
      for (let edge = s.firstEdge[node]!; edge < s.firstEdge[node + 1]!; edge += s.edgeFields) {
        if (s.edgeTypes[s.edges[edge]!] === "weak") continue;
        const to = s.edges[edge + 2]! / s.nodeFields;
        if (parent[to] !== -1) continue;
        parent[to] = node;
        via[to] = edge;
        next.push(to);
      }
    }
    frontier = next;
  }
  return { parent, via };
}

/** A path's last few steps, as `Owner.field`, nearest the object last; array indices and map slots generalised so paths group. */
function pathOf(s: Snapshot, retainers: { parent: Int32Array; via: Int32Array }, node: number, depth: number): string {
  const steps: string[] = [];
  let current = node;
  for (let d = 0; d < depth && current > 0; d++) {
    const parent = retainers.parent[current]!;
    if (parent < 0) return "(unreachable)";
    const name = edgeName(s, retainers.via[current]!).replace(/^\[\d+\]$/, "[]");
    steps.unshift(`${groupOf(s, parent)}.${name}`);
    current = parent;
  }
  return steps.join(" → ");
}

const { values: options, positionals: paths } = parseArgs({
  options: { retained: { type: "string" }, "fields-of": { type: "string" } },
  allowPositionals: true,
});
if (paths.length < 2) throw new Error("usage: heap-compare.ts A.heapsnapshot B.heapsnapshot [C…] [--retained Owner.field,…] [--fields-of Owner,…]");
const snapshots = paths.map(load);
const summaries = snapshots.map(summary);
const first = summaries[0]!;
const last = summaries.at(-1)!;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
const totals = summaries.map((groups) => [...groups.values()].reduce((sum, group) => sum + group.bytes, 0));
console.log(`self size in all: ${totals.map(kb).join(" → ")}`);
const growth = [...last.entries()]
  .map(([group, { count, bytes }]) => ({ group, count, bytes, dCount: count - (first.get(group)?.count ?? 0), dBytes: bytes - (first.get(group)?.bytes ?? 0) }))
  .sort((a, b) => b.dBytes - a.dBytes);
console.log("\ngrowth by constructor, first → last (top 40 by bytes):");
for (const row of growth.slice(0, 40))
  console.log(
    `  ${kb(row.dBytes).padStart(9)} ${String(row.dCount).padStart(8)} objects  ${row.group}  (${summaries.map((groups) => groups.get(row.group)?.count ?? 0).join(" → ")})`,
  );

// Objects new since the first snapshot and alive in the last: grouped by their retaining path.
const firstIds = new Set<number>();
for (let i = 0; i < nodeCount(snapshots[0]!); i++) firstIds.add(idOf(snapshots[0]!, i));
const lastSnapshot = snapshots.at(-1)!;
const retainers = shortestRetainers(lastSnapshot);
const byPath = new Map<string, { count: number; bytes: number }>();
for (let i = 0; i < nodeCount(lastSnapshot); i++) {
  if (firstIds.has(idOf(lastSnapshot, i))) continue;
  const type = typeOf(lastSnapshot, i);
  if (type === "code" || type === "hidden" || type === "synthetic") continue;
  const path = `${pathOf(lastSnapshot, retainers, i, 6)} ⇒ ${groupOf(lastSnapshot, i)}`;
  const entry = byPath.get(path) ?? { count: 0, bytes: 0 };
  entry.count++;
  entry.bytes += sizeOf(lastSnapshot, i);
  byPath.set(path, entry);
}
console.log("\nnew since the first snapshot and alive in the last, by retaining path (top 40 by bytes):");
for (const [path, { count, bytes }] of [...byPath.entries()].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 40))
  console.log(`  ${kb(bytes).padStart(9)} ${String(count).padStart(7)}  ${path}`);

// Collections that grow: every Map, Set and Array by its retaining path, with its entries (a Map's
// or Set's table slots in use, an Array's elements) in each snapshot.
function collections(s: Snapshot): Map<string, number> {
  const found = new Map<string, number>();
  const retainedBy = shortestRetainers(s);
  for (let i = 0; i < nodeCount(s); i++) {
    const name = nameOf(s, i);
    if (typeOf(s, i) !== "object" || (name !== "Map" && name !== "Set" && name !== "Array")) continue;
    let entries = 0;
    for (let edge = s.firstEdge[i]!; edge < s.firstEdge[i + 1]!; edge += s.edgeFields) {
      const edgeLabel = edgeName(s, edge);
      if (edgeLabel !== "table" && edgeLabel !== "elements") continue;
      const store = s.edges[edge + 2]! / s.nodeFields;
      for (let inner = s.firstEdge[store]!; inner < s.firstEdge[store + 1]!; inner += s.edgeFields)
        if (s.edgeTypes[s.edges[inner]!] !== "weak" && liveSlot(s, s.edges[inner + 2]! / s.nodeFields)) entries++;
    }
    const path = `${pathOf(s, retainedBy, i, 4)} ⇒ ${name}`;
    found.set(path, (found.get(path) ?? 0) + entries);
  }
  return found;
}
const counted = snapshots.map(collections);
const grown = [...counted.at(-1)!.entries()]
  .map(([path, entries]) => ({ path, entries, grew: entries - (counted[0]!.get(path) ?? 0) }))
  .filter((row) => row.grew > 0)
  .sort((a, b) => b.grew - a.grew);
console.log("\ncollections that grew, by retaining path (entries with references, first → last; top 40):");
for (const row of grown.slice(0, 40)) console.log(`  +${String(row.grew).padStart(7)}  ${counted.map((c) => c.get(row.path) ?? 0).join(" → ")}  ${row.path}`);

/** The bytes held only through `Owner.field` (every object of that constructor): reachable from those fields, not from the roots without them. */
function retainedBy(s: Snapshot, owner: string, field: string): { bytes: number; objects: number } {
  const holders: number[] = [];
  for (let i = 0; i < nodeCount(s); i++) {
    if (nameOf(s, i) !== owner) continue;
    for (let edge = s.firstEdge[i]!; edge < s.firstEdge[i + 1]!; edge += s.edgeFields)
      if (edgeName(s, edge) === field) holders.push(s.edges[edge + 2]! / s.nodeFields);
  }
  const reach = (start: number[], blocked: Set<number>): Uint8Array => {
    const seen = new Uint8Array(nodeCount(s));
    for (const node of start) seen[node] = 1;
    const stack = [...start];
    while (stack.length) {
      const node = stack.pop()!;
      if (blocked.has(node)) continue;
      for (let edge = s.firstEdge[node]!; edge < s.firstEdge[node + 1]!; edge += s.edgeFields) {
        const to = s.edges[edge + 2]! / s.nodeFields;
        if (s.edgeTypes[s.edges[edge]!] === "weak" || seen[to]) continue;
        seen[to] = 1;
        stack.push(to);
      }
    }
    return seen;
  };
  const held = reach(holders, new Set());
  const otherwise = reach([0], new Set(holders));
  let bytes = 0;
  let objects = 0;
  for (let i = 0; i < nodeCount(s); i++)
    if (held[i] && !otherwise[i]) {
      bytes += sizeOf(s, i);
      objects++;
    }
  return { bytes, objects };
}
/**
 * Each node's retained size in the dominator tree over strong edges (Cooper, Harvey and Kennedy's
 * iterative algorithm): what would be freed with it, shared parts counted at their common holder.
 */
function retainedSizes(s: Snapshot): Float64Array {
  const count = nodeCount(s);
  const strong = (edge: number) => s.edgeTypes[s.edges[edge]!] !== "weak";
  // Reverse postorder from the root, iteratively.
  const order = new Int32Array(count).fill(-1);
  const postorder: number[] = [];
  const visited = new Uint8Array(count);
  const stack: number[] = [0];
  const cursor = new Uint32Array(count);
  visited[0] = 1;
  for (let i = 0; i < count; i++) cursor[i] = s.firstEdge[i]!;
  while (stack.length) {
    const node = stack.at(-1)!;
    let pushed = false;
    while (cursor[node]! < s.firstEdge[node + 1]!) {
      const edge = cursor[node]!;
      cursor[node] = edge + s.edgeFields;
      const to = s.edges[edge + 2]! / s.nodeFields;
      if (!strong(edge) || visited[to]) continue;
      visited[to] = 1;
      stack.push(to);
      pushed = true;
      break;
    }
    if (!pushed) {
      stack.pop();
      order[node] = postorder.length;
      postorder.push(node);
    }
  }
  // Predecessors of each reached node (compressed rows).
  const predecessorCount = new Uint32Array(count + 1);
  for (let node = 0; node < count; node++) {
    if (!visited[node]) continue;
    for (let edge = s.firstEdge[node]!; edge < s.firstEdge[node + 1]!; edge += s.edgeFields)
      if (strong(edge)) predecessorCount[s.edges[edge + 2]! / s.nodeFields + 1]!++;
  }
  for (let i = 0; i < count; i++) predecessorCount[i + 1]! += predecessorCount[i]!;
  const predecessors = new Int32Array(predecessorCount[count]!);
  const fill = predecessorCount.slice(0, count);
  for (let node = 0; node < count; node++) {
    if (!visited[node]) continue;
    for (let edge = s.firstEdge[node]!; edge < s.firstEdge[node + 1]!; edge += s.edgeFields)
      if (strong(edge)) predecessors[fill[s.edges[edge + 2]! / s.nodeFields]!++] = node;
  }
  const dominator = new Int32Array(count).fill(-1);
  dominator[0] = 0;
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while (order[a]! < order[b]!) a = dominator[a]!;
      while (order[b]! < order[a]!) b = dominator[b]!;
    }
    return a;
  };
  for (let changed = true; changed;) {
    changed = false;
    for (let k = postorder.length - 2; k >= 0; k--) {
      const node = postorder[k]!;
      let candidate = -1;
      for (let p = predecessorCount[node]!; p < predecessorCount[node + 1]!; p++) {
        const from = predecessors[p]!;
        if (dominator[from] === -1) continue;
        candidate = candidate === -1 ? from : intersect(from, candidate);
      }
      if (candidate !== -1 && dominator[node] !== candidate) {
        dominator[node] = candidate;
        changed = true;
      }
    }
  }
  const retained = new Float64Array(count);
  for (const node of postorder) {
    retained[node]! += sizeOf(s, node);
    if (node !== 0) retained[dominator[node]!]! += retained[node]!;
  }
  return retained;
}

/** Every property (not element, not V8's internal) of the objects named `owner` in the last snapshot, as `owner.field`. */
function fieldsOf(s: Snapshot, owner: string): string[] {
  const fields = new Set<string>();
  for (let i = 0; i < nodeCount(s); i++) {
    if (nameOf(s, i) !== owner || typeOf(s, i) !== "object") continue;
    for (let edge = s.firstEdge[i]!; edge < s.firstEdge[i + 1]!; edge += s.edgeFields)
      if (s.edgeTypes[s.edges[edge]!] === "property") fields.add(`${owner}.${edgeName(s, edge)}`);
  }
  return [...fields];
}
const specs = [...(options.retained?.split(",") ?? []), ...(options["fields-of"]?.split(",").flatMap((owner) => fieldsOf(lastSnapshot, owner)) ?? [])];
/** What `Owner.field` holds in the dominator tree, summed over every object of that constructor. */
function dominatedBy(s: Snapshot, retained: Float64Array, owner: string, field: string): number {
  let bytes = 0;
  for (let i = 0; i < nodeCount(s); i++) {
    if (nameOf(s, i) !== owner) continue;
    for (let edge = s.firstEdge[i]!; edge < s.firstEdge[i + 1]!; edge += s.edgeFields)
      if (edgeName(s, edge) === field) bytes += retained[s.edges[edge + 2]! / s.nodeFields]!;
  }
  return bytes;
}
// The same objects (V8 keeps an object's id across one process's snapshots) whose dominator-tree size
// grew most, first to last, by their shortest retaining path: a container and those holding it show.
const trees = snapshots.map(retainedSizes);
const firstTree = new Map<number, number>();
for (let i = 0; i < nodeCount(snapshots[0]!); i++) firstTree.set(idOf(snapshots[0]!, i), trees[0]![i]!);
const lastTree = trees.at(-1)!;
const grewMost = [];
for (let i = 0; i < nodeCount(lastSnapshot); i++) {
  const before = firstTree.get(idOf(lastSnapshot, i));
  if (before !== undefined && lastTree[i]! - before > 8 * 1024) grewMost.push({ node: i, before, after: lastTree[i]! });
}
console.log("\nobjects in both whose dominator-tree size grew most, first → last (top 40):");
for (const { node, before, after } of grewMost.sort((a, b) => b.after - b.before - (a.after - a.before)).slice(0, 40))
  console.log(
    `  ${kb(after - before).padStart(9)}  ${kb(before)} → ${kb(after)}  ${pathOf(lastSnapshot, retainers, node, 6)} ⇒ ${groupOf(lastSnapshot, node)}`,
  );

if (specs.length > 0) {
  console.log("\nheld by each field, first → last (largest growth of its dominator-tree size first; `alone`: reachable only through it):");
  const rows = specs.map((spec) => {
    const [owner, field] = [spec.slice(0, spec.indexOf(".")), spec.slice(spec.indexOf(".") + 1)];
    const held = snapshots.map((s, k) => ({ tree: dominatedBy(s, trees[k]!, owner, field), ...retainedBy(s, owner, field) }));
    return { spec, held, grew: held.at(-1)!.tree - held[0]!.tree };
  });
  for (const { spec, held } of rows.sort((a, b) => b.grew - a.grew))
    console.log(`  ${spec}: ${held.map(({ tree, bytes, objects }) => `${kb(tree)} (alone ${kb(bytes)}, ${objects} objects)`).join(" → ")}`);
}
