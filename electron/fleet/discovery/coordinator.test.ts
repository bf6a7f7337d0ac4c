import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SimServer } from "../../../sim/protocol1/server";
import { Discovery } from "./coordinator";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A PATH with a stand-in `tailscale` that counts its runs and reports a stopped tailnet; no `t3`. */
async function pathWithTailscale(): Promise<{ path: string; runs: () => Promise<number> }> {
  const dir = await mkdtemp(join(tmpdir(), "t3-discovery-coord-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, "tailscale"), `#!/bin/sh\necho run >> ${JSON.stringify(join(dir, "runs"))}\necho '{"BackendState":"Stopped","Peer":null}'\n`);
  await chmod(join(dir, "tailscale"), 0o755);
  return { path: dir, runs: async () => (await readFile(join(dir, "runs"), "utf8").catch(() => "")).split("\n").filter(Boolean).length };
}

describe("Discovery", () => {
  it("lists this machine's T3 on an added port, says why it cannot mint a code without t3, and rescans the same set only after the interval", async () => {
    const sim = await new SimServer({ generation: "upstream" }).start();
    cleanups.push(() => sim.stop());
    const port = Number(new URL(sim.baseUrl).port);
    const tailscale = await pathWithTailscale();
    let now = 1_000_000;
    const discovery = new Discovery(
      { pair: () => Promise.reject(new Error("not in this test")), isPaired: () => false, now: () => now },
      { env: { PATH: tailscale.path, HOME: tmpdir() }, ssh: { configFile: join(tailscale.path, "no-ssh-config") }, probeTimeoutMs: 5_000, minRescanMs: 60_000 },
    );
    const first = await discovery.scan({ ports: [port], sshHosts: [], refresh: false });
    expect(first.servers.find((server) => server.id === `local:${port}`)).toMatchObject({
      source: "local",
      name: `This machine (port ${port})`,
      baseUrl: sim.baseUrl,
      protocol: 1,
      pairVia: null,
      reason: expect.stringMatching(/t3 command is not on this machine's PATH/),
    });
    expect(first.notes).toEqual([expect.stringMatching(/Tailscale is not connected here \(state Stopped\)/)]);
    await expect(discovery.pair(`local:${port}`, undefined)).rejects.toThrow(/t3 command is not on this machine's PATH/);

    now += 30_000;
    const repeat = await discovery.scan({ ports: [port], sshHosts: [], refresh: true });
    expect(repeat.scannedAt).toBe(first.scannedAt);
    expect(await tailscale.runs()).toBe(1);

    now += 31_000;
    const later = await discovery.scan({ ports: [port], sshHosts: [], refresh: false });
    expect(later.scannedAt).toBe(now);
    expect(await tailscale.runs()).toBe(2);
  });
});
