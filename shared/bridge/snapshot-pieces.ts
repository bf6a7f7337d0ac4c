// A fleet snapshot in bounded pieces for any UI transport (the headless shell's socket, Electron's
// IPC): one flooded machine must not make the first message to a window hundreds of megabytes.
import type { AgentView } from "../fleet/types";
import type { FleetSnapshot } from "./contract";

/** A piece's size: small enough that no window waits on one message, large enough to be few. */
export const SNAPSHOT_PIECE_BYTES = 256 * 1024;

/** One piece: the first carries the snapshot's environments and settings, the rest add agents. */
export interface SnapshotPiece<Encoded> {
  first: boolean;
  agents: Encoded[];
}

/**
 * Groups the snapshot's agents into pieces of about `pieceBytes` each (`size` measures an encoded
 * agent), the agents of the smallest environments first so that ordinary machines show at once.
 * Each agent is encoded once; an empty fleet is one piece.
 */
export function* snapshotPieces<Encoded>(
  snapshot: FleetSnapshot,
  pieceBytes: number,
  encode: (agent: AgentView) => Encoded,
  size: (encoded: Encoded) => number,
): Generator<SnapshotPiece<Encoded>> {
  const byEnvironment = new Map<string, AgentView[]>();
  for (const agent of snapshot.agents) {
    let list = byEnvironment.get(agent.environmentId);
    if (!list) byEnvironment.set(agent.environmentId, (list = []));
    list.push(agent);
  }
  const ordered = [...byEnvironment.values()].sort((a, b) => a.length - b.length).flat();
  let first = true;
  let pending: Encoded | undefined;
  let index = 0;
  while (first || pending !== undefined || index < ordered.length) {
    const agents: Encoded[] = [];
    let bytes = 0;
    while (pending !== undefined || index < ordered.length) {
      const next = pending ?? encode(ordered[index++]!);
      pending = undefined;
      const nextBytes = size(next) + 1;
      // A piece holds at least one agent, however large; otherwise it stops before the bound.
      if (agents.length > 0 && bytes + nextBytes > pieceBytes) {
        pending = next;
        break;
      }
      agents.push(next);
      bytes += nextBytes;
    }
    yield { first, agents };
    first = false;
  }
}

/** The snapshot as bridge events: a `fleet.snapshot` with the first agents, then `fleet.delta`s adding the rest. */
export function* snapshotEvents(
  snapshot: FleetSnapshot,
  pieceBytes: number,
): Generator<
  | { type: "fleet.snapshot"; snapshot: FleetSnapshot }
  | { type: "fleet.delta"; agents: AgentView[]; removed: string[]; environments: []; removedEnvironments: string[] }
> {
  for (const piece of snapshotPieces(
    snapshot,
    pieceBytes,
    (agent) => agent,
    (agent) => JSON.stringify(agent).length,
  )) {
    if (piece.first) yield { type: "fleet.snapshot", snapshot: { ...snapshot, agents: piece.agents } };
    else yield { type: "fleet.delta", agents: piece.agents, removed: [], environments: [], removedEnvironments: [] };
  }
}
