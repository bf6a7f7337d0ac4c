import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type EnvironmentRecord, REGISTRY_FILE, Registry } from "./registry";

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
});
