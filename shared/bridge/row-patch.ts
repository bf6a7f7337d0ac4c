// A row update as the page needs it: only the fields of an agent's view that changed since the view
// the page last got (issue 44: a row's every change re-sent its whole changes-and-usage summary).
// Applying the patch to that view gives the new view, field for field.
import type { AgentView } from "../fleet/types";

export interface AgentPatch {
  key: string;
  /** Fields with a new value (nested parts, e.g. `usage`, whole). */
  set: Partial<AgentView>;
  /** Optional fields the view no longer has. */
  unset?: (keyof AgentView)[];
}

/** What turns `before` into `after` (the same agent), or null when no field differs. */
export function rowPatch(before: AgentView, after: AgentView): AgentPatch | null {
  const set: Partial<Record<keyof AgentView, unknown>> = {};
  let changed = false;
  for (const field of Object.keys(after) as (keyof AgentView)[]) {
    if (field === "key" || sameValue(before[field], after[field])) continue;
    set[field] = after[field];
    changed = true;
  }
  const unset = (Object.keys(before) as (keyof AgentView)[]).filter((field) => !Object.hasOwn(after, field));
  if (!changed && unset.length === 0) return null;
  return { key: after.key, set: set as Partial<AgentView>, ...(unset.length > 0 && { unset }) };
}

/** The view after `patch`: a new object, `row` untouched. */
export function applyRowPatch(row: AgentView, patch: AgentPatch): AgentView {
  const next = { ...row, ...patch.set };
  for (const field of patch.unset ?? []) delete next[field];
  return next;
}

/** Views are plain data: nested parts (capabilities, pending requests, changes, usage) are compared by content. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}
