// Files only this user may read: the data folder is 0700 and every file T3 Fleet writes that holds a
// secret is 0600, written atomically (a crash leaves the old file or the new one, never half of one).
import { randomBytes } from "node:crypto";
import { chmod, lstat, mkdir, open, rename, rm } from "node:fs/promises";

/** Creates the folder 0700, or narrows an existing one to 0700; refuses a symlink or a non-folder. */
export async function ensurePrivateDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  const info = await lstat(path);
  if (!info.isDirectory()) throw new Error(`${path} is not a folder, so T3 Fleet cannot keep its data there.`);
  if (typeof process.getuid === "function" && info.uid !== process.getuid()) throw new Error(`${path} belongs to another user, so T3 Fleet will not keep its data there.`);
  if ((info.mode & 0o077) !== 0) await chmod(path, 0o700);
}

/** Replaces a file with `text`, mode 0600, through a temporary file in the same folder. */
export async function writePrivateFile(path: string, text: string): Promise<void> {
  const temporary = `${path}.${randomBytes(4).toString("hex")}.tmp`;
  const handle = await open(temporary, "wx", 0o600);
  try {
    await handle.writeFile(text, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path).catch(async (error: unknown) => {
    await rm(temporary, { force: true });
    throw error;
  });
}
