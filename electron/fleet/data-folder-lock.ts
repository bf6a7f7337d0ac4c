// One process per data folder: two fleets on one folder would each save their own view of the
// machine list over the other's, dropping pairings and leaving T3 sessions whose tokens nothing
// lists. The owner writes its pid into a lock file created exclusively; a lock whose process is
// gone (a crash, a kill -9) is stale and taken over; a live one stops the start, naming its owner.
import { hostname } from "node:os";
import { join } from "node:path";
import { readFile, rm } from "node:fs/promises";
import { unlinkSync } from "node:fs";
import { z } from "zod";
import { parseJson } from "../../shared/t3/decode";
import { createPrivateFile } from "./private-files";

export const LOCK_FILE = "fleet.lock";

const LockOwner = z.object({ pid: z.number().int().positive(), app: z.string().max(200), host: z.string().max(300), startedAt: z.string().max(100) });
type LockOwner = z.infer<typeof LockOwner>;

/** The data folder is in use by another live T3 Fleet process. */
export class DataFolderBusyError extends Error {
  constructor(
    readonly folder: string,
    readonly owner: LockOwner,
  ) {
    super(
      `Another T3 Fleet (${owner.app}, process ${owner.pid}, started ${owner.startedAt}) is already using the data folder ${folder}. Stop that one first, or give this one its own folder (--data-dir).`,
    );
    this.name = "DataFolderBusyError";
  }
}

export interface DataFolderLock {
  readonly path: string;
  /** Removes the lock file if it is still this process's. */
  release(): Promise<void>;
}

/** Whether a process with this pid exists on this machine (EPERM: it exists, owned by someone else). */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Takes the data folder for this process (`app` names it in the message another start shows).
 * Rejects with DataFolderBusyError while another live process holds it.
 */
export async function lockDataFolder(folder: string, app: string): Promise<DataFolderLock> {
  const path = join(folder, LOCK_FILE);
  const owner: LockOwner = { pid: process.pid, app, host: hostname(), startedAt: new Date().toISOString() };
  const text = `${JSON.stringify(owner)}\n`;
  // Two attempts: the second follows the removal of a stale lock (another starter may win that race).
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await createPrivateFile(path, text);
      return ownLock(path, text);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw new Error(`The data folder ${folder} could not be locked: ${(error as Error).message}`);
    }
    const holder = await readOwner(path);
    if (holder && holder.pid !== process.pid && holder.host === owner.host && processIsAlive(holder.pid)) throw new DataFolderBusyError(folder, holder);
    if (holder && holder.pid === process.pid) throw new DataFolderBusyError(folder, holder);
    // Stale (its process is gone), unreadable, or written on another host (a synced folder): taken over.
    await rm(path, { force: true });
  }
  const holder = await readOwner(path);
  throw holder ? new DataFolderBusyError(folder, holder) : new Error(`The data folder ${folder} could not be locked: another T3 Fleet is starting on it.`);
}

async function readOwner(path: string): Promise<LockOwner | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return undefined;
  }
  const json = parseJson(text);
  const owner = json.ok ? LockOwner.safeParse(json.value) : undefined;
  return owner?.success ? owner.data : undefined;
}

function ownLock(path: string, text: string): DataFolderLock {
  const stillOurs = async () => (await readFile(path, "utf8").catch(() => "")) === text;
  // An exit without release (process.exit after a failure) still frees the folder for the next start.
  const onExit = () => {
    try {
      unlinkSync(path);
    } catch {
      // already gone
    }
  };
  process.once("exit", onExit);
  return {
    path,
    release: async () => {
      process.off("exit", onExit);
      if (await stillOurs()) await rm(path, { force: true });
    },
  };
}
