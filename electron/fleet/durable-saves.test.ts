// Saves that the disk refused: nothing changes in memory, nothing is left behind, the reason is in
// words, and a later unrelated save never writes the refused change. A real full disk (a small
// tmpfs mounted for the test, where this user may mount) and a target the rename cannot replace.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type EnvironmentRecord, REGISTRY_FILE, Registry } from "./registry";
import { FileSecretStore, OriginBoundSecrets } from "./secrets";
import { OriginToken } from "./t3/origin-token";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "t3-fleet-durable-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const record: EnvironmentRecord = {
  environmentId: "studio-mac",
  serverLabel: "studio-mac",
  customLabel: null,
  baseUrl: "http://127.0.0.1:3773",
  generation: "upstream",
  readOnly: false,
  serverVersion: "0.0.42",
  muted: false,
  pairedAt: "2026-11-29T10:00:00.000Z",
};

/** Mounts a 64 KiB tmpfs on `dir` (unmounted after the test); false if the mount failed. */
function smallDisk(dir: string): boolean {
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", dir], { stdio: "ignore" });
  } catch {
    return false;
  }
  cleanups.push(() => execFileSync("umount", ["-l", dir], { stdio: "ignore" }));
  return true;
}

/** Writes a filler file until the disk refuses more; returns a function that frees the space. */
async function fillDisk(dir: string): Promise<() => Promise<void>> {
  const filler = join(dir, "filler");
  const chunk = Buffer.alloc(4096, 1);
  const { open } = await import("node:fs/promises");
  const handle = await open(filler, "w");
  try {
    for (;;) await handle.write(chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    await handle.close();
  }
  return () => rm(filler, { force: true });
}

const leftovers = async (dir: string) => (await readdir(dir)).filter((name) => name.endsWith(".tmp"));

/** Whether this process may mount a tmpfs (root, outside an unprivileged container); the file-system refusal below runs everywhere. */
function mountAllowed(): boolean {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return false;
  const probe = mkdtempSync(join(tmpdir(), "t3-fleet-mount-probe-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=4k", "tmpfs", probe], { stdio: "ignore" });
    execFileSync("umount", [probe], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}
const canMount = mountAllowed();

/** A registry holding `record` in a small disk that is then filled; `free` makes room again. */
async function fullDiskWithMachine() {
  const dir = await tempDir();
  expect(smallDisk(dir)).toBe(true);
  const { registry } = await Registry.open(dir);
  await registry.upsert(record);
  const free = await fillDisk(dir);
  return { dir, registry, free };
}

describe.runIf(canMount)("a full disk", () => {
  it("refuses a rename in words, keeps the old name in memory and on disk, leaves no temporary file", async () => {
    const { dir, registry, free } = await fullDiskWithMachine();
    await expect(registry.update("studio-mac", { customLabel: "build box" })).rejects.toThrow("the disk is full: the rename was not saved.");
    expect(registry.get("studio-mac")?.customLabel).toBeNull();
    expect(await leftovers(dir)).toEqual([]);
    // The refused rename is not written by the next, unrelated save.
    await free();
    await registry.updateSettings({ stalledAfterMs: 60_000 });
    const reopened = (await Registry.open(dir)).registry;
    expect(reopened.get("studio-mac")?.customLabel).toBeNull();
    expect(reopened.settings.stalledAfterMs).toBe(60_000);
  });

  it("a refused “pause notifications” does not come back after a restart", async () => {
    const { dir, registry, free } = await fullDiskWithMachine();
    await expect(registry.updateSettings({ notificationsPaused: true })).rejects.toThrow("the disk is full: pausing notifications was not saved.");
    expect(registry.settings.notificationsPaused).toBe(false);
    await free();
    await registry.update("studio-mac", { muted: true });
    const reopened = (await Registry.open(dir)).registry;
    expect(reopened.settings.notificationsPaused).toBe(false);
    expect(reopened.get("studio-mac")?.muted).toBe(true);
    expect(await leftovers(dir)).toEqual([]);
  });

  it("a token that could not be stored is not half-stored", async () => {
    const dir = await tempDir();
    expect(smallDisk(dir)).toBe(true);
    const secrets = new OriginBoundSecrets(new FileSecretStore(join(dir, "tokens.json")), () => undefined);
    await secrets.set("studio-mac", OriginToken.issuedBy("http://127.0.0.1:3773", "first-token"));
    const free = await fillDisk(dir);
    await expect(secrets.set("studio-mac", OriginToken.issuedBy("http://127.0.0.1:3773", `second-${"x".repeat(8_000)}`))).rejects.toThrow("the disk is full");
    await free();
    expect((await secrets.get("studio-mac", "http://127.0.0.1:3773"))?.secretFor("http://127.0.0.1:3773")).toBe("first-token");
    expect(await leftovers(dir)).toEqual([]);
  });
});

describe("a save the file system refuses", () => {
  it("changes nothing in memory, leaves no temporary file, and says what was not saved", async () => {
    const dir = await tempDir();
    const { registry } = await Registry.open(dir);
    await registry.upsert(record);
    // A folder where the file was: the rename over it fails whatever the disk or the user's rights.
    await rm(join(dir, REGISTRY_FILE));
    await mkdir(join(dir, REGISTRY_FILE));
    await writeFile(join(dir, REGISTRY_FILE, "keep"), "x");
    await expect(registry.remove("studio-mac")).rejects.toThrow(/: removing the machine was not saved\.$/);
    expect(registry.get("studio-mac")).toEqual(record);
    await expect(registry.updateSettings({ notificationsPaused: true })).rejects.toThrow("pausing notifications was not saved");
    expect(registry.settings.notificationsPaused).toBe(false);
    expect(await leftovers(dir)).toEqual([]);
    expect(await readFile(join(dir, REGISTRY_FILE, "keep"), "utf8")).toBe("x");
  });
});

describe("the file token store", () => {
  it("never answers for ids that are object properties, and refuses to store under them", async () => {
    const dir = await tempDir();
    const store = new FileSecretStore(join(dir, "tokens.json"));
    await store.set("studio-mac", "real-token");
    for (const id of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"]) {
      expect(await store.get(id)).toBeUndefined();
      await expect(store.set(id, "x")).rejects.toThrow("Refusing to store a token");
    }
    const bound = new OriginBoundSecrets(store, () => "http://127.0.0.1:3773");
    expect(await bound.get("constructor", "http://127.0.0.1:3773")).toBeUndefined();
    expect(await bound.get("__proto__", "http://127.0.0.1:3773")).toBeUndefined();
    expect(await store.get("studio-mac")).toBe("real-token");
  });

  it("ignores hostile keys in a file it did not write", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "tokens.json"), '{"__proto__":"bogus","constructor":"bogus","studio-mac":"real-token"}', { mode: 0o600 });
    const store = new FileSecretStore(join(dir, "tokens.json"));
    expect(await store.get("constructor")).toBeUndefined();
    expect(await store.get("studio-mac")).toBe("real-token");
    await store.set("build-box", "other-token");
    expect(JSON.parse(await readFile(join(dir, "tokens.json"), "utf8"))).toEqual({ "studio-mac": "real-token", "build-box": "other-token" });
  });
});
