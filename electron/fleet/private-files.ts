// Files only this user may read: the data folder is 0700 and every file T3 Fleet writes that holds a
// secret is 0600, written durably: a temporary file in the same folder, flushed to disk, renamed
// over the old one, then the folder flushed, so a crash or power loss leaves the old file or the new
// one, never half of one, and a save that returned is on disk. A save that fails leaves no
// temporary file behind and says why in words.
import { randomBytes } from "node:crypto";
import { chmod, lstat, mkdir, open, rename, rm } from "node:fs/promises";
import { basename, dirname } from "node:path";

/** Creates the folder 0700, or narrows an existing one to 0700; refuses a symlink or a non-folder. */
export async function ensurePrivateDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  const info = await lstat(path);
  if (!info.isDirectory()) throw new Error(`${path} is not a folder, so T3 Fleet cannot keep its data there.`);
  if (typeof process.getuid === "function" && info.uid !== process.getuid())
    throw new Error(`${path} belongs to another user, so T3 Fleet will not keep its data there.`);
  if ((info.mode & 0o077) !== 0) await chmod(path, 0o700);
}

/** A save that did not reach the disk; the message names the cause and what was lost, in words. */
export class SaveError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = "SaveError";
  }
}

/** The cause of a failed file operation as a user would say it. */
export function describeFileError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  switch (code) {
    case "ENOSPC":
      return "the disk is full";
    case "EDQUOT":
      return "the disk quota is used up";
    case "EROFS":
      return "the disk is read-only";
    case "EACCES":
    case "EPERM":
      return "T3 Fleet may not write to its data folder";
    case "EIO":
      return "the disk reported a read or write error";
    case "ENOENT":
      return "the data folder was removed";
    case "EMFILE":
    case "ENFILE":
      return "too many files are open";
    default:
      return `the file could not be written (${error instanceof Error ? error.message : String(error)})`;
  }
}

/** Creates `path` (failing with EEXIST if it exists) holding `text`, mode 0600, flushed to disk before it resolves. */
export async function createPrivateFile(path: string, text: string): Promise<void> {
  const handle = await open(path, "wx", 0o600);
  try {
    await handle.writeFile(text, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Replaces a file with `text`, mode 0600, durably (see above). `what` names the change for the
 * error, e.g. "the rename": "the disk is full: the rename was not saved".
 */
export async function writePrivateFile(path: string, text: string, what = "the change"): Promise<void> {
  const temporary = `${dirname(path)}/.${basename(path)}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await createPrivateFile(temporary, text);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    const code = (error as NodeJS.ErrnoException | null)?.code;
    throw new SaveError(`${describeFileError(error)}: ${what} was not saved.`, code);
  }
  // The new file is already what every reader sees, so the change counts as saved even if this
  // flush fails: memory must match the file, and only a power cut in the next moments could undo it.
  await syncFolder(dirname(path)).catch(() => {});
}

/** Flushes a folder's entries (the rename) to disk; platforms that cannot open a folder skip it. */
async function syncFolder(path: string): Promise<void> {
  let handle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if (process.platform === "win32") return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    // Some file systems refuse fsync on a folder (EINVAL): the rename itself is still atomic there.
    if ((error as NodeJS.ErrnoException).code !== "EINVAL") throw error;
  } finally {
    await handle.close();
  }
}
