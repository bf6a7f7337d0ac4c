// What the soak benchmark (bench/soak.ts) asks the simulated machines, over the control API: the
// user messages each thread holds (read-only, counted at the server rather than in the fleet), the
// threads each server lists, thread churn (archive, delete) and renames, on both protocols.
import { randomUUID } from "node:crypto";
import type { SimServer } from "./protocol1/server";
import type { V2SimServer } from "./protocol2/server";

/** One server's threads as it lists them itself: live ids and which of them are archived. */
export interface ServerThreadList {
  live: string[];
  archived: string[];
}

/** Every user message's text per thread id, including threads deleted since. */
export function userMessages(server: SimServer | V2SimServer): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [threadId, state] of server.engine.threads as Map<string, { messages: { role: string; text: string }[] }>) {
    const texts = state.messages.filter((message) => message.role === "user").map((message) => message.text);
    if (texts.length) out[threadId] = texts;
  }
  return out;
}

/**
 * A machine's messages across an in-place upgrade: a thread the upgrade imported holds its earlier
 * messages itself (sim/upgrade.ts), so the current ones are all; a thread
 * it did not import (deleted before) keeps what its earlier incarnation stored.
 */
export function mergeMessages(earlier: Record<string, string[]> | undefined, current: Record<string, string[]>): Record<string, string[]> {
  return { ...earlier, ...current };
}

export function threadList(server: SimServer | V2SimServer): ServerThreadList {
  const live: string[] = [];
  const archived: string[] = [];
  if (isV2(server)) {
    for (const [threadId, state] of server.engine.threads) {
      // Deleted threads and those its shell never lists (a delegated task's child).
      if (!server.engine.isShellVisible(state)) continue;
      live.push(threadId);
      if (state.thread.archivedAt) archived.push(threadId);
    }
  } else {
    for (const [threadId, thread] of server.engine.threads) {
      if (thread.deletedAt) continue;
      live.push(threadId);
      if (thread.archivedAt) archived.push(threadId);
    }
  }
  return { live, archived };
}

/** Archives, deletes or renames a thread as another T3 client would; T3's refusal is thrown. */
export function changeThread(server: SimServer | V2SimServer, threadId: string, change: "archive" | "delete" | { title: string }): void {
  const commandId = `sim:${randomUUID()}`;
  if (isV2(server)) {
    if (change === "archive") server.engine.dispatch({ type: "thread.archive", commandId, threadId });
    else if (change === "delete") server.engine.dispatch({ type: "thread.delete", commandId, threadId });
    else server.engine.dispatch({ type: "thread.metadata.update", commandId, threadId, title: change.title });
    return;
  }
  if (change === "archive") server.engine.dispatch({ type: "thread.archive", commandId, threadId });
  else if (change === "delete") server.engine.dispatch({ type: "thread.delete", commandId, threadId });
  else server.engine.dispatch({ type: "thread.meta.update", commandId, threadId, title: change.title });
}

function isV2(server: SimServer | V2SimServer): server is V2SimServer {
  return server.generation === "v2";
}
