// One process per data folder: a live owner stops a second start and is named; a lock left by a
// process that is gone is taken over; releasing frees the folder.
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DataFolderBusyError, LOCK_FILE, lockDataFolder } from "./data-folder-lock";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "t3-fleet-lock-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The pid of a process that has exited (its lock is stale). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid!;
}

describe("data folder lock", () => {
  it("stops a second owner with a message naming the first", async () => {
    const dir = await tempDir();
    const lock = await lockDataFolder(dir, "t3-fleet serve");
    cleanups.push(() => lock.release());
    const second = lockDataFolder(dir, "T3 Fleet app");
    await expect(second).rejects.toBeInstanceOf(DataFolderBusyError);
    await expect(second).rejects.toThrow(`Another T3 Fleet (t3-fleet serve, process ${process.pid}, started `);
    await expect(second).rejects.toThrow(`is already using the data folder ${dir}`);
  });

  it("a live process of another pid holds the folder", async () => {
    const dir = await tempDir();
    const holder = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    cleanups.push(() => holder.kill());
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: holder.pid, app: "T3 Fleet app", host: hostname(), startedAt: "2026-12-01T12:00:00.000Z" }));
    await expect(lockDataFolder(dir, "t3-fleet serve")).rejects.toThrow(
      `Another T3 Fleet (T3 Fleet app, process ${holder.pid}, started 2026-12-01T12:00:00.000Z)`,
    );
  });

  it("takes over a lock whose process is gone, and an unreadable one", async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, LOCK_FILE),
      JSON.stringify({ pid: await deadPid(), app: "t3-fleet serve", host: hostname(), startedAt: "2026-12-01T11:00:00.000Z" }),
    );
    const lock = await lockDataFolder(dir, "t3-fleet serve");
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE), "utf8"))).toMatchObject({ pid: process.pid, app: "t3-fleet serve" });
    await lock.release();
    await writeFile(join(dir, LOCK_FILE), "garbage");
    const again = await lockDataFolder(dir, "T3 Fleet app");
    await again.release();
  });

  it("release frees the folder for the next owner", async () => {
    const dir = await tempDir();
    const first = await lockDataFolder(dir, "t3-fleet serve");
    await first.release();
    const second = await lockDataFolder(dir, "t3-fleet serve");
    await second.release();
    await expect(readFile(join(dir, LOCK_FILE))).rejects.toMatchObject({ code: "ENOENT" });
  });
});
