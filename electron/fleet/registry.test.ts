import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type EnvironmentRecord, MAX_KEPT_REVIEWS, REGISTRY_FILE, Registry } from "./registry";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function tempDir() {
  const dir = await mkdtemp(join(tmpdir(), "t3-fleet-registry-"));
  dirs.push(dir);
  return dir;
}
const record = (id: string): EnvironmentRecord => ({
  environmentId: id,
  serverLabel: `machine ${id}`,
  customLabel: null,
  baseUrl: "http://127.0.0.1:3773",
  generation: "upstream",
  readOnly: false,
  serverVersion: "0.0.33",
  muted: false,
  pairedAt: "2026-11-29T10:00:00.000Z",
});

describe("environment registry", () => {
  it("round-trips records and settings, and never writes a token", async () => {
    const dir = await tempDir();
    const { registry } = await Registry.open(dir);
    await registry.upsert(record("a"));
    await registry.updateSettings({ stalledAfterMs: 90_000 });
    const reopened = (await Registry.open(dir)).registry;
    expect(reopened.environments).toEqual([record("a")]);
    expect(reopened.settings.stalledAfterMs).toBe(90_000);
    const text = await readFile(join(dir, REGISTRY_FILE), "utf8");
    expect(text).not.toMatch(/token/i);
  });

  it("keeps the changes and usage settings and the context notice's toggle across a restart", async () => {
    const dir = await tempDir();
    const { registry } = await Registry.open(dir);
    await registry.updateSettings({ contextWarningPercent: 80, finishedWithChangesInInbox: true });
    await registry.updateSettings({ notifications: { ...registry.settings.notifications, contextFull: false } });
    const reopened = (await Registry.open(dir)).registry;
    expect(reopened.settings).toMatchObject({
      contextWarningPercent: 80,
      finishedWithChangesInInbox: true,
      notifications: { contextFull: false, failed: true },
    });
  });

  it("a registry written before the changes and usage settings loads them with their defaults", async () => {
    const dir = await tempDir();
    const notifications = { needsApproval: false, needsInput: true, failed: true, stalled: true, heldUp: true, hostOffline: true };
    await writeFile(
      join(dir, REGISTRY_FILE),
      JSON.stringify({ version: 1, environments: [record("a")], settings: { notifications, notificationsPaused: false, stalledAfterMs: 60_000 } }),
    );
    const { registry, problems } = await Registry.open(dir);
    expect(problems).toEqual([]);
    expect(registry.settings).toEqual({
      notifications: { ...notifications, contextFull: true },
      notificationsPaused: false,
      stalledAfterMs: 60_000,
      contextWarningPercent: 90,
      finishedWithChangesInInbox: false,
    });
  });

  it("a context limit outside 1-100 % is not read: the settings are reported and the original kept", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, REGISTRY_FILE), JSON.stringify({ version: 1, environments: [record("a")], settings: { contextWarningPercent: 250 } }));
    const { registry, problems } = await Registry.open(dir);
    expect(problems).toEqual([expect.stringMatching(/^The settings in the fleet registry could not be read.*kept as .*corrupt/)]);
    expect(registry.settings.contextWarningPercent).toBe(90);
    expect(registry.environments).toEqual([record("a")]);
  });

  it("writes atomically: concurrent updates all land and no temporary file is left", async () => {
    const dir = await tempDir();
    const { registry } = await Registry.open(dir);
    await Promise.all(["a", "b", "c", "d"].map((id) => registry.upsert(record(id))));
    expect((await Registry.open(dir)).registry.environments.map((r) => r.environmentId).sort()).toEqual(["a", "b", "c", "d"]);
    expect(await readdir(dir)).toEqual([REGISTRY_FILE]);
  });

  it("a corrupt file gives a clear problem, is kept as a backup, and the next save does not lose it", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, REGISTRY_FILE), '{"version":1,"environments":[{"environmentId":"a"');
    const { registry, problems } = await Registry.open(dir);
    expect(problems).toEqual([expect.stringMatching(/not valid.*kept as .*corrupt/)]);
    expect(registry.environments).toEqual([]);
    await registry.upsert(record("b"));
    const files = await readdir(dir);
    const backup = files.find((name) => name.includes(".corrupt-"))!;
    expect(await readFile(join(dir, backup), "utf8")).toContain('"environmentId":"a"');
  });

  it("keeps every record that still decodes when one does not", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, REGISTRY_FILE), JSON.stringify({ version: 1, environments: [record("good"), { environmentId: "bad", baseUrl: "not a url" }] }));
    const { registry, problems } = await Registry.open(dir);
    expect(registry.environments.map((r) => r.environmentId)).toEqual(["good"]);
    expect(problems).toEqual([expect.stringContaining("1 environment record(s)")]);
  });

  it("leaves an unreadable registry untouched", async () => {
    const dir = await tempDir();
    // A directory where the file should be: unreadable as a file, even for root.
    await mkdir(join(dir, REGISTRY_FILE));
    const { registry, problems } = await Registry.open(dir);
    expect(problems[0]).toMatch(/could not be read/);
    await expect(registry.upsert(record("b"))).rejects.toThrow(/not overwriting/);
  });

  it("keeps reviewed turns across a restart, decoded when read: a mangled set is dropped, the rest of the file kept", async () => {
    const dir = await tempDir();
    const { registry } = await Registry.open(dir);
    await registry.upsert(record("a"));
    await registry.setReviewed("a/thread-1", 3);
    await registry.setReviewed("a/thread-2", 1);
    await registry.setReviewed("a/thread-2", null);
    expect([...(await Registry.open(dir)).registry.reviews]).toEqual([["a/thread-1", 3]]);

    const file = JSON.parse(await readFile(join(dir, REGISTRY_FILE), "utf8")) as Record<string, unknown>;
    await writeFile(join(dir, REGISTRY_FILE), JSON.stringify({ ...file, reviews: { "a/thread-1": "three" } }));
    const mangled = await Registry.open(dir);
    expect(mangled.problems).toEqual([]);
    expect(mangled.registry.reviews.size).toBe(0);
    expect(mangled.registry.environments).toEqual([record("a")]);

    // Removing the machine forgets its agents' marks.
    await mangled.registry.setReviewed("a/thread-3", 2);
    await mangled.registry.remove("a");
    expect((await Registry.open(dir)).registry.reviews.size).toBe(0);
  });

  it("keeps at most MAX_KEPT_REVIEWS reviewed turns, forgetting the oldest marks first", async () => {
    const dir = await tempDir();
    const reviews = Object.fromEntries(Array.from({ length: MAX_KEPT_REVIEWS + 10 }, (_, i) => [`a/thread-${i}`, 1]));
    await writeFile(join(dir, REGISTRY_FILE), JSON.stringify({ version: 1, environments: [record("a")], reviews }));
    const { registry } = await Registry.open(dir);
    expect(registry.reviews.size).toBe(MAX_KEPT_REVIEWS);
    expect(registry.reviews.has("a/thread-9")).toBe(false);
    expect(registry.reviews.has("a/thread-10")).toBe(true);
    // A new mark goes in and the oldest kept one goes out; marking a kept one again makes it the newest.
    await registry.setReviewed("a/thread-10", 2);
    await registry.setReviewed("a/new", 1);
    const reopened = (await Registry.open(dir)).registry;
    expect(reopened.reviews.size).toBe(MAX_KEPT_REVIEWS);
    expect(reopened.reviews.get("a/thread-10")).toBe(2);
    expect(reopened.reviews.has("a/thread-11")).toBe(false);
    expect(reopened.reviews.get("a/new")).toBe(1);
  });
});
