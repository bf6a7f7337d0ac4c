// The deliveries' write-ahead journal: every message is on disk before it is dispatched to T3, and
// so are its later states and the messages held back from T3 (interrupt-hold.ts), so a restart of
// the fleet (even a kill) loses none of them (docs/architecture.md, "The fleet service"). One file in
// the data folder, written as the registry is (private-files.ts: temporary file, fsync, rename,
// fsync of the folder), decoded with a schema when read: a corrupt file is kept aside and reported,
// entries that still decode are kept, and nothing else in the data folder is touched.
import { EventEmitter } from "node:events";
import { copyFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { Delivery } from "../../shared/fleet/delivery";
import { parseJson } from "../../shared/t3/decode";
import { writePrivateFile } from "./private-files";

export const JOURNAL_FILE = "deliveries.json";
/** Receipts of messages T3 has (or refused, or that were discarded) are kept across restarts: at most this many, the newest … */
export const JOURNAL_SETTLED_LIMIT = 200;
/** … and none older than this. Messages T3 has not confirmed and held messages are never dropped. */
export const JOURNAL_SETTLED_RETENTION_MS = 24 * 60 * 60_000;

const Text = z.string().max(200_000);
const Id = z.string().min(1).max(2_000);
const Time = z.string().max(100);

const DeliveryRecord = z.object({
  commandId: Id,
  agentKey: Id,
  kind: z.literal("message"),
  state: z.enum(["sending", "accepted", "delivered", "answered", "refused", "uncertain", "held", "discarded"]),
  text: Text.nullable(),
  messageId: Id.nullable(),
  requestId: Id.nullable(),
  intent: z.enum(["steer", "queue", "new-turn", "refused"]).nullable(),
  observed: z
    .object({
      outcome: z.enum(["steered", "new-turn", "queued", "cancelled"]),
      turnId: Id,
      queuePosition: z.number().int().nullable().optional(),
    })
    .nullable(),
  reason: Text.nullable(),
  warning: Text.optional(),
  sendAgain: z.boolean().optional(),
  createdAt: Time,
  updatedAt: Time,
});

/** The exact command a message was (or will be) dispatched with: a resend must be identical for T3 to recognise it. */
const SendRecord = z.object({
  type: z.literal("send"),
  commandId: Id,
  threadId: Id,
  messageId: Id,
  text: Text,
  mode: z.enum(["start", "steer", "queue"]),
  runId: Id.nullable(),
});

const JournalEntry = z.object({
  delivery: DeliveryRecord,
  environmentId: Id,
  threadId: Id,
  /** Null for a held message: it has no command until the user releases it. */
  command: SendRecord.nullable(),
  turnBefore: Id.nullable(),
  expectSteer: z.boolean(),
});
export type JournalEntry = z.infer<typeof JournalEntry>;

/** `creations`: agents being started from the fleet (creations.ts decodes its own records), absent in older files. */
const JournalFile = z.object({ version: z.literal(1), entries: z.array(z.unknown()), creations: z.array(z.unknown()).optional() });

/** Whether T3 has not yet been seen to have the message (it may or may not): such entries are never dropped. */
export function awaitsConfirmation(delivery: Pick<Delivery, "state">): boolean {
  return delivery.state === "sending" || delivery.state === "accepted" || delivery.state === "uncertain";
}

/** Which entries to keep: unconfirmed and held ones all, the rest bounded by count and age (see above). */
export function boundedEntries(entries: JournalEntry[], now: number): JournalEntry[] {
  const open = (entry: JournalEntry) => awaitsConfirmation(entry.delivery) || entry.delivery.state === "held";
  const recent = entries
    .filter((entry) => !open(entry) && now - Date.parse(entry.delivery.updatedAt) < JOURNAL_SETTLED_RETENTION_MS)
    .slice(-JOURNAL_SETTLED_LIMIT);
  const kept = new Set(recent);
  return entries.filter((entry) => open(entry) || kept.has(entry));
}

export interface DeliveryJournalEvents {
  /** These entries are on disk now. */
  written: [JournalEntry[]];
}

export class DeliveryJournal extends EventEmitter<DeliveryJournalEvents> {
  private requested = 0;
  private written = 0;
  private writing: Promise<void> | undefined;
  private halted = false;
  private entries: () => JournalEntry[] = () => [];
  private creations: () => unknown[] = () => [];
  /** The creations the file held when it was opened, for creations.ts to decode. */
  restoredCreations: unknown[] = [];

  private constructor(readonly path: string) {
    super();
  }

  /** Reads the journal in `directory` (the registry created it); `problems` says, in words, what could not be read. */
  static async open(directory: string): Promise<{ journal: DeliveryJournal; restored: JournalEntry[]; problems: string[] }> {
    const journal = new DeliveryJournal(join(directory, JOURNAL_FILE));
    const { restored, problems } = await journal.read();
    return { journal, restored, problems };
  }

  private async read(): Promise<{ restored: JournalEntry[]; problems: string[] }> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { restored: [], problems: [] };
      // Unreadable (not corrupt): never overwrite what could not be read.
      this.halted = true;
      return {
        restored: [],
        problems: [
          `T3 Fleet could not read its record of sent messages ${this.path} (${(error as Error).message}). It was left untouched; messages sent now are not recorded, so a restart would forget them.`,
        ],
      };
    }
    const json = parseJson(text);
    const file = json.ok ? JournalFile.safeParse(json.value) : undefined;
    if (!file?.success) {
      const kept = await this.keepAside();
      return {
        restored: [],
        problems: [
          `T3 Fleet's record of sent messages was not valid (${json.ok ? "unexpected structure" : json.message}). It was kept as ${kept}; messages sent before the restart are not shown, and T3 itself still has every message it received.`,
        ],
      };
    }
    this.restoredCreations = file.data.creations ?? [];
    const restored: JournalEntry[] = [];
    let skipped = 0;
    for (const raw of file.data.entries) {
      const entry = JournalEntry.safeParse(raw);
      if (entry.success) restored.push(entry.data);
      else skipped++;
    }
    // Until each owner saves, a write by the other keeps what was restored for it.
    this.entries = () => restored;
    const creations = this.restoredCreations;
    this.creations = () => creations;
    if (skipped === 0) return { restored, problems: [] };
    const kept = await this.keepAside();
    return {
      restored,
      problems: [`${skipped} message record(s) in T3 Fleet's record of sent messages could not be read and are not shown; the original was kept as ${kept}.`],
    };
  }

  private async keepAside(): Promise<string> {
    const target = `${this.path}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`;
    await copyFile(this.path, target);
    return target;
  }

  /**
   * Writes what `entries` gives (read when the write starts); resolves once that is on disk. Saves
   * requested while one is being written are gathered into the next write, so a burst of changes
   * costs two writes, not one per change. A failed write rejects every save it carried; the next
   * save tries again.
   */
  async save(entries: () => JournalEntry[]): Promise<void> {
    if (this.halted) return;
    this.entries = entries;
    return this.write();
  }

  /** As `save`, for the creations in flight (creations.ts): the same file, so one write carries both. */
  async saveCreations(creations: () => unknown[]): Promise<void> {
    if (this.halted) return;
    this.creations = creations;
    return this.write();
  }

  private async write(): Promise<void> {
    const ticket = ++this.requested;
    while (this.written < ticket && !this.halted) {
      this.writing ??= this.writeOnce().finally(() => (this.writing = undefined));
      await this.writing;
    }
  }

  /** Writes nothing more: the process is going away (tests emulate a kill with it). */
  halt(): void {
    this.halted = true;
  }

  /** Resolves when no write is under way. */
  async idle(): Promise<void> {
    await this.writing?.catch(() => undefined);
  }

  private async writeOnce(): Promise<void> {
    const upTo = this.requested;
    const entries = this.entries();
    const creations = this.creations();
    await writePrivateFile(this.path, `${JSON.stringify({ version: 1, entries, creations })}\n`, "the record of your message");
    this.written = Math.max(this.written, upTo);
    this.emit("written", entries);
  }
}
