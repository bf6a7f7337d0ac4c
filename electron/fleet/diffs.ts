// Diffs of an agent's turns, read from T3 only when a UI shows one (bridge `agent.diff`). Reads are
// bounded (a diff over DIFF_TEXT_LIMIT characters is described by its file list, never sent) and
// cached per (agent, first turn, last turn), a few at a time: a turn's diff never changes once its
// checkpoint is taken, and the whole thread's is keyed by its newest turn.
import { type AgentDiff, DIFF_TEXT_LIMIT } from "../../shared/bridge/contract";
import { filesOf } from "../../shared/fleet/changes-usage";
import type { TurnChanges } from "../../shared/fleet/facts";
import type { FleetModel } from "../../shared/fleet/model";
import { splitKey } from "../../shared/fleet/model";
import type { DiffScope } from "../../shared/t3/diff";
import { T3Error } from "../../shared/t3/errors";
import { BridgeError } from "./bridge-error";
import type { AdapterSession } from "./t3/adapter";

/** A diff read waits this long for T3 (it computes the diff from git on request). */
export const DIFF_READ_TIMEOUT_MS = 20_000;
/** Diffs kept, newest use first out last. */
export const DIFF_CACHE_ENTRIES = 24;

export type DiffRequestScope = { kind: "turn"; turnCount: number } | { kind: "thread" };

export interface AgentDiffsDeps {
  model: Pick<FleetModel, "agent">;
  /** The environment's live adapter session, or undefined while it is not online. */
  session: (environmentId: string) => Pick<AdapterSession, "readDiff"> | undefined;
  limit?: number;
  cacheEntries?: number;
}

const STATUS_WORDS: Record<Exclude<TurnChanges["status"], "ready">, string> = {
  missing: "T3 has no checkpoint for this turn (it was interrupted, or the workspace is not a git repository), so there is no diff to show.",
  error: "T3 could not capture this turn's checkpoint, so there is no diff to show.",
};

export { filesOf };

export class AgentDiffs {
  private readonly cache = new Map<string, Promise<AgentDiff>>();
  private readonly limit: number;
  private readonly entries: number;

  constructor(private readonly deps: AgentDiffsDeps) {
    this.limit = deps.limit ?? DIFF_TEXT_LIMIT;
    this.entries = deps.cacheEntries ?? DIFF_CACHE_ENTRIES;
  }

  read(key: string, requested: DiffRequestScope): Promise<AgentDiff> {
    const agent = this.deps.model.agent(key);
    if (!agent) return Promise.reject(new BridgeError("not-found", "This agent is no longer in the fleet."));
    const turns = agent.changes ?? [];
    const newest = turns.at(-1);
    if (!newest) return Promise.reject(new BridgeError("invalid", "T3 has reported no changes for this agent yet."));
    const turn = requested.kind === "turn" ? turns.find((candidate) => candidate.turnCount === requested.turnCount) : undefined;
    if (requested.kind === "turn" && !turn) return Promise.reject(new BridgeError("invalid", `T3 has reported no turn ${requested.turnCount} for this agent.`));
    const scope: DiffScope = turn ? { kind: "turn", turnCount: turn.turnCount } : { kind: "thread", toTurnCount: newest.turnCount };
    const fromTurnCount = turn ? turn.turnCount - 1 : 0;
    const toTurnCount = turn ? turn.turnCount : newest.turnCount;
    const base = { key, scope: requested.kind, fromTurnCount, toTurnCount, files: turn ? turn.files : filesOf(turns) };
    if (turn && turn.status !== "ready") return Promise.resolve({ ...base, state: "unavailable", reason: STATUS_WORDS[turn.status] });

    const cacheKey = `${key}\u0000${fromTurnCount}\u0000${toTurnCount}`;
    const cached = this.cache.get(cacheKey);
    if (cached) {
      // Most recently used goes last, so the oldest is dropped first.
      this.cache.delete(cacheKey);
      this.cache.set(cacheKey, cached);
      return cached;
    }
    const [environmentId, threadId] = splitKey(key);
    const session = this.deps.session(environmentId);
    if (!session)
      return Promise.resolve({ ...base, state: "unavailable", offline: true, reason: "The machine is not online; the diff can be read once it is back." });
    const reading = session.readDiff(threadId, scope, DIFF_READ_TIMEOUT_MS).then(
      (text): AgentDiff => (text.length > this.limit ? { ...base, state: "too-large", size: text.length } : { ...base, state: "ready", text }),
      (error: unknown): AgentDiff => {
        // A failed read is not kept: the next look asks T3 again.
        this.cache.delete(cacheKey);
        const message = error instanceof T3Error ? error.message : String(error);
        return { ...base, state: "unavailable", reason: `T3 could not give the diff: ${message}` };
      },
    );
    this.cache.set(cacheKey, reading);
    while (this.cache.size > this.entries) this.cache.delete(this.cache.keys().next().value!);
    return reading;
  }

  /** Forget an agent's diffs (removed agent or machine). */
  forget(keyPrefix: string): void {
    for (const cacheKey of [...this.cache.keys()]) if (cacheKey.startsWith(keyPrefix)) this.cache.delete(cacheKey);
  }
}
