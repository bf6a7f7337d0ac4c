// What T3 0.0.42 stored, for the truth oracle (electron/fleet/truth-oracle.testkit.ts): its shell rows
// and each thread's detail (`/api/orchestration/threads/:id`), read by T3's own rules
// (electron/fleet/t3/protocol1/truth-reader.testkit.ts).
import {
  CHILD_THREAD_ID,
  type Protocol1Activity,
  type Protocol1Row,
  deletedThreadTruth,
  protocol1ThreadTruth,
} from "../../electron/fleet/t3/protocol1/truth-reader.testkit";
import type { ServerTruth, StoredThreadTruth } from "../../electron/fleet/truth-oracle.testkit";
import type { StoredThread, T3Operator } from "./operator.testkit";

async function truthOf(operator: T3Operator, row: Protocol1Row): Promise<StoredThreadTruth> {
  const detail = (await operator.thread(row.id)) as StoredThread & { activities: Protocol1Activity[] };
  return protocol1ThreadTruth(row, detail);
}

/**
 * What T3 stored: every thread its shell lists, or only `threadIds` and their child threads, and each
 * of `alsoRead`; a thread the shell no longer lists is read on its own (archived, deleted, or gone).
 */
export async function readT3Truth(
  operator: T3Operator,
  environmentId: string,
  threadIds?: Iterable<string>,
  alsoRead: Iterable<string> = [],
): Promise<ServerTruth> {
  const shell = (await operator.shell()).threads as unknown as Protocol1Row[];
  const wanted = new Set([...(threadIds ?? shell.map((row) => row.id)), ...alsoRead]);
  // A scenario's threads with their descendants.
  for (let grew = true; grew;) {
    grew = false;
    for (const row of shell) {
      const parent = CHILD_THREAD_ID.exec(row.id)?.[1];
      if (parent && wanted.has(parent) && !wanted.has(row.id)) grew = wanted.add(row.id) !== undefined;
    }
  }
  const threads: StoredThreadTruth[] = [];
  for (const threadId of wanted) {
    const listed = shell.find((row) => row.id === threadId);
    if (listed) {
      threads.push(await truthOf(operator, listed));
      continue;
    }
    const detail = (await operator.thread(threadId).catch(() => null)) as (StoredThread & Protocol1Row) | null;
    if (detail) threads.push(await truthOf(operator, detail));
    else threads.push(deletedThreadTruth(threadId));
  }
  return { environmentId, threads };
}
