import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SimServer } from "../../../sim/protocol1/server";
import { isTailnetAddress } from "./addresses";
import { Discovery, MAX_TAILSCALE_PEERS, SCAN_DEADLINE_MS } from "./coordinator";
import { standIns as makeStandIns, runningTailnet, t3At } from "./stand-ins.testkit";

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

async function standIns(status: unknown, resolved: Record<string, string>) {
  const kit = await makeStandIns(status, resolved);
  cleanups.push(kit.remove);
  return kit;
}

describe("Discovery bounds", () => {
  // Found by attacking it: 3,000 peers took 21.7 s, hanging ones 3 s each, and any other request scanned alongside.
  it("looks at a capped number of peers, in Tailscale's range only, and stops probing at its deadline", async () => {
    const peers = Object.fromEntries(
      Array.from({ length: 3_000 }, (_, i) => [
        `k${i}`,
        { HostName: `peer-${String(i).padStart(4, "0")}`, TailscaleIPs: [`100.${64 + (i >> 8)}.${i & 255}.1`], Online: true },
      ]),
    );
    const { env } = await standIns({ BackendState: "Running", Peer: peers }, {});
    let now = 1_000_000;
    const probed: string[] = [];
    const discovery = new Discovery(
      { pair: () => Promise.reject(new Error("not in this test")), isPaired: () => false, now: () => now },
      {
        env,
        local: { t3Command: "no-t3-here" },
        ssh: { configFile: join(tmpdir(), "no-such-ssh-config") },
        // Every peer hangs for the whole probe timeout: the clock moves 3 s per probe.
        probe: (baseUrl, timeoutMs) => {
          probed.push(baseUrl);
          now += timeoutMs;
          return Promise.resolve({ kind: "slow", baseUrl, reason: "no answer" });
        },
      },
    );
    const report = await discovery.scan({ ports: [], sshHosts: [], refresh: false });
    const listed = report.servers.filter((server) => server.source === "tailscale");
    expect(listed).toHaveLength(MAX_TAILSCALE_PEERS);
    expect(report.notes).toContainEqual(expect.stringMatching(/3,000 machines in the tailnet; only the first 64/));
    expect(probed.length).toBeLessThanOrEqual(Math.ceil(SCAN_DEADLINE_MS / 3_000));
    expect(probed.every((url) => url.includes("127.0.0.1") || isTailnetAddress(new URL(url).hostname))).toBe(true);
    expect(listed.filter((server) => /^Not looked at: one search stops after 20 s/.test(server.reason ?? "")).length).toBeGreaterThan(50);
  });

  it("runs one scan at a time: another request while one runs is told to wait, the same one shares it", async () => {
    const { env } = await standIns({ BackendState: "Stopped", Peer: null }, {});
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let probes = 0;
    const discovery = new Discovery(
      { pair: () => Promise.reject(new Error("not in this test")), isPaired: () => false, now: () => 1_000_000 },
      {
        env,
        local: { t3Command: "no-t3-here" },
        ssh: { configFile: join(tmpdir(), "no-such-ssh-config") },
        probe: async (baseUrl) => {
          probes++;
          await gate;
          return { kind: "nothing", baseUrl, reason: "nothing" };
        },
      },
    );
    const first = discovery.scan({ ports: [4001], sshHosts: [], refresh: false });
    const same = discovery.scan({ ports: [4001], sshHosts: [], refresh: true });
    await expect(discovery.scan({ ports: [4002], sshHosts: [], refresh: false })).rejects.toMatchObject({
      kind: "busy",
      message: expect.stringMatching(/still looking .* Look again once it has finished/),
    });
    release();
    expect((await first).scannedAt).toBe((await same).scannedAt);
    const probesOfFirst = probes;
    await discovery.scan({ ports: [4002], sshHosts: [], refresh: false });
    expect(probes).toBeGreaterThan(probesOfFirst);
  });
});

describe("Discovery over ssh", () => {
  // Found by attacking it: the code minted over ssh, and the token, went as plain HTTP to whatever `ssh -G` named.
  it("pairs an ssh host over plain HTTP off loopback and the tailnet only once the user says so, and says why", async () => {
    const { env, mints } = await standIns(
      // tail-box's address is a peer Tailscale here lists: only then is it the tailnet's (pair-recheck.test.ts).
      runningTailnet("100.101.9.9"),
      {
        "lan-box": "hostname 10.0.0.5\nport 22\n",
        "tail-box": "hostname 100.101.9.9\nport 22\n",
        "loop-box": "hostname 127.0.0.1\nport 2222\n",
        "jumped-box": "hostname 127.0.0.1\nproxyjump bastion\n",
        "commanded-box": "hostname 100.101.9.8\nproxycommand nc %h %p\n",
      },
    );
    const links: string[] = [];
    const discovery = new Discovery(
      {
        pair: (link) => {
          links.push(link);
          return Promise.resolve({ environmentId: "e", label: "box", readOnly: false, previousSession: { outcome: "none" as const, note: null } });
        },
        isPaired: () => false,
        now: () => 1_000_000,
      },
      {
        env,
        local: { t3Command: "no-t3-here" },
        ssh: { configFile: join(tmpdir(), "no-such-ssh-config") },
        probe: (baseUrl) => Promise.resolve(t3At(baseUrl)),
      },
    );
    const report = await discovery.scan({ ports: [], sshHosts: ["lan-box", "tail-box", "loop-box", "jumped-box", "commanded-box"], refresh: false });
    const row = (id: string) => report.servers.find((server) => server.id === id)!;
    expect(row("ssh:lan-box")).toMatchObject({
      pairVia: "ssh",
      plainHttp: expect.stringMatching(/^T3 at http:\/\/10\.0\.0\.5:3773 is reached over plain HTTP on your network/),
    });
    expect(row("ssh:tail-box").plainHttp).toBeNull();
    expect(row("ssh:loop-box").plainHttp).toBeNull();
    expect(row("ssh:jumped-box").plainHttp).toMatch(
      /^ssh reaches jumped-box through ProxyJump bastion, so 127\.0\.0\.1 as seen from here may not be the machine/,
    );
    expect(row("ssh:commanded-box").plainHttp).toMatch(/through a ProxyCommand/);

    // Unconfirmed: nothing is minted, nothing is sent, and the answer says why.
    await expect(discovery.pair("ssh:lan-box", undefined)).rejects.toMatchObject({
      kind: "plain-http",
      message: expect.stringMatching(/Nothing was minted or sent/),
    });
    await expect(discovery.pair("ssh:jumped-box", undefined)).rejects.toMatchObject({ kind: "plain-http" });
    expect(await mints()).toBe(0);
    expect(links).toEqual([]);

    await discovery.pair("ssh:lan-box", undefined, true);
    await discovery.pair("ssh:tail-box", undefined);
    expect(await mints()).toBe(2);
    expect(links).toEqual(["http://10.0.0.5:3773/pair#token=QKKAY73L3Y4A", "http://100.101.9.9:3773/pair#token=QKKAY73L3Y4A"]);
  });
});
