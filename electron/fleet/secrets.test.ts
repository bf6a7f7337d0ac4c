// The keytar backend against a real Secret Service: gnome-keyring in the private D-Bus session that
// `npm test` starts (scripts/with-keyring.sh). No mock stands in for the keychain here.
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SimServer } from "../../sim/protocol1/server";
import { KeytarSecretStore } from "./secrets";
import { FleetService } from "./service";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function requireSecretService(): void {
  if (!process.env.DBUS_SESSION_BUS_ADDRESS) {
    throw new Error("No D-Bus session: run the tests through `npm test` (scripts/with-keyring.sh starts gnome-keyring).");
  }
}

describe("keytar secret store (real gnome-keyring)", () => {
  it("stores, replaces and deletes tokens per environment", async () => {
    requireSecretService();
    const store = await KeytarSecretStore.open(`T3 Fleet test ${randomUUID()}`);
    await store.set("env-a", "token-a1");
    await store.set("env-b", "token-b");
    await store.set("env-a", "token-a2"); // re-pairing replaces
    expect(await store.get("env-a")).toBe("token-a2");
    expect(await store.get("env-b")).toBe("token-b");
    await store.delete("env-a");
    expect(await store.get("env-a")).toBeUndefined();
    expect(await store.get("env-b")).toBe("token-b");
    await store.delete("env-b");
  });

  it("pairing keeps the token in the keychain and nowhere in the data directory", async () => {
    requireSecretService();
    const sim = await new SimServer({ generation: "upstream", tickMs: 5 }).start();
    cleanups.push(() => sim.stop());
    const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-keyring-"));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const secrets = await KeytarSecretStore.open(`T3 Fleet test ${randomUUID()}`);
    const service = await FleetService.start({ dataDir, secrets });
    cleanups.push(() => service.stop());
    const { environmentId } = (await service.request("pair.confirm", { input: sim.pairingUrl() })) as { environmentId: string };
    // Kept with the origin that issued it (OriginBoundSecrets in electron/fleet/secrets.ts).
    const stored = JSON.parse((await secrets.get(environmentId))!) as { origin: string; token: string };
    expect(stored.origin).toBe(new URL(sim.baseUrl).origin);
    const token = stored.token;
    expect(sim.auth.verify(token)).toBeDefined();
    for (const name of await readdir(dataDir)) expect(await readFile(join(dataDir, name), "utf8")).not.toContain(token!);
    expect(JSON.stringify(service.snapshot())).not.toContain(token!);
    await service.request("environment.remove", { environmentId });
    expect(await secrets.get(environmentId)).toBeUndefined();
  });
});
