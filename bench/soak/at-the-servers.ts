// The soak's count at the servers once the run has settled: each message sent, counted in what
// its server stored (delivered once, duplicated, misdirected, …: messages.ts judges), and the
// fleet's rows against each server's own list (agents lost or invented).
import type { FleetState } from "./bridge-client";
import { SimulatedMachine, type SoakMachine } from "./machines";
import { type MessageTally, type SentMessage, fleetDeliveryOf, tally } from "./messages";

export interface MessagesAtServers {
  counts: MessageTally;
  /** How many copies of a message its server holds. */
  atServer: (message: SentMessage) => number;
  /** Copies found in a thread other than the one it was sent to. */
  misdirected: number;
  /** For each message stored more than once: both copies' ids and times beside the fleet's own ids. */
  duplicateStories: string[];
}

export async function countMessages(targets: SoakMachine[], messages: SentMessage[], state: FleetState): Promise<MessagesAtServers> {
  const atServers = new Map<string, Record<string, string[]>>();
  for (const machine of targets) atServers.set(machine.label, await machine.userMessages());
  const atServer = (message: SentMessage) => (atServers.get(message.machine)?.[message.threadId] ?? []).filter((text) => text.includes(message.tag)).length;
  const counts = tally(messages, atServer, state.deliveries, state.history);
  // A message counted twice at its server: what the server stored, to tell two sends from one stored twice.
  const duplicateStories: string[] = [];
  for (const message of messages.filter((candidate) => atServer(candidate) > 1)) {
    const machine = targets.find((candidate) => candidate.label === message.machine);
    const stored = machine instanceof SimulatedMachine ? await machine.storedUserMessages(message.threadId) : null;
    const copies = stored?.filter((text) => text.text.includes(message.tag)).map((copy) => `${copy.id} at ${copy.createdAt}`);
    const sent = fleetDeliveryOf(message, state.deliveries);
    duplicateStories.push(
      `${message.tag} sent as ${sent?.messageId ?? "?"} (command ${sent?.commandId ?? "?"}), stored as ${copies?.join(", ") ?? "(not readable here)"}`,
    );
  }
  let misdirected = 0;
  for (const message of messages) {
    for (const [threadId, texts] of Object.entries(atServers.get(message.machine) ?? {}))
      if (threadId !== message.threadId && texts.some((text) => text.includes(message.tag))) misdirected++;
  }
  return { counts, atServer, misdirected, duplicateStories };
}

export interface AgentsAtServers {
  lost: number;
  invented: number;
  /** Deleted on the server and still shown as ended (rows stay a while). */
  shownEnded: number;
  /** In T3's archive and not shown: archived before the fleet saw them, or more than five minutes ago (archived threads are not agents). */
  archivedUnseen: number;
  examples: string[];
}

/** The fleet's rows against each server's own list; `createdAt`/`deletedAt`: when the soak made or removed a thread (ms into the run), by "label/threadId". */
export async function countAgents(
  machines: SoakMachine[],
  state: FleetState,
  createdAt: Map<string, number>,
  deletedAt: Map<string, number>,
): Promise<AgentsAtServers> {
  const out: AgentsAtServers = { lost: 0, invented: 0, shownEnded: 0, archivedUnseen: 0, examples: [] };
  const inventedExamples: string[] = [];
  const seconds = (ms: number | undefined, what: string) => (ms === undefined ? "" : ` (${what} at ${(ms / 1000).toFixed(1)} s)`);
  for (const machine of machines) {
    const listed = await machine.threadList();
    const live = new Set(listed.live);
    const archived = new Set(listed.archived);
    const rows = new Set(
      [...state.agents.values()]
        .filter((agent) => agent.environmentId === machine.environmentId && agent.lifecycle !== "deleted")
        .map((agent) => agent.threadId),
    );
    for (const threadId of live) {
      if (rows.has(threadId)) continue;
      // T3 lists archived threads in its archive, not its thread list; the fleet shows one only for a few
      // minutes after it saw it archived (shared/fleet/model.ts LEFT_ROWS_KEPT_MS), on both protocols.
      if (archived.has(threadId)) {
        out.archivedUnseen++;
        continue;
      }
      out.lost++;
      out.examples.push(`lost ${machine.label}/${threadId}${seconds(createdAt.get(`${machine.label}/${threadId}`), "created")}`);
    }
    for (const threadId of rows) {
      if (live.has(threadId)) continue;
      const gone = deletedAt.get(`${machine.label}/${threadId}`);
      const shown = state.agents.get(`${machine.environmentId}/${threadId}`);
      // A thread that left the server's stream without saying whether it was archived or deleted stays
      // a while as "ended" (shared/fleet/model.ts, LEFT_ROWS_KEPT_MS): shown as gone, not invented.
      if (shown?.status === "ended" && gone !== undefined) {
        out.shownEnded++;
        continue;
      }
      out.invented++;
      const when = `${seconds(createdAt.get(`${machine.label}/${threadId}`), "created")}${seconds(gone, "deleted")}`;
      inventedExamples.push(`invented ${machine.label}/${threadId}${when}, shown ${shown?.status} (${shown?.lifecycle})`);
    }
  }
  out.examples = [...out.examples.slice(0, 8), ...inventedExamples.slice(0, 8)];
  return out;
}
