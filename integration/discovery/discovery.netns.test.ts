// Find machines end to end, offline: the real T3 0.0.42 as "this machine" on loopback, and test
// hosts in private network namespaces (tailnet.testkit.ts): two Tailscale peers and an ssh host
// running the real T3 and Debian's sshd, a peer that never answers, a peer that is not T3 and an
// offline peer, named by a stand-in `tailscale` printing the recorded status fixture. Runs only
// inside scripts/discovery-netns.sh (its own `unshare --net`); it fails, never skips, when a part
// cannot start.
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiscoveryReport, FoundServer } from "../../shared/bridge/contract";
import { MemorySecretStore } from "../../electron/fleet/secrets";
import { FleetService } from "../../electron/fleet/service";
import { until } from "../../electron/fleet/service.testkit";
import { SSH_HOSTS, type TestTailnet, startTestTailnet } from "./topology.testkit";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SCAN = { ports: [], sshHosts: SSH_HOSTS, refresh: false };

let world: TestTailnet;
let service: FleetService;
let dataDir: string;
let report: DiscoveryReport;

function server(id: string): FoundServer {
  const found = report.servers.find((entry) => entry.id === id);
  if (!found) throw new Error(`${id} not found; found ${report.servers.map((entry) => entry.id).join(", ")}`);
  return found;
}

beforeAll(async () => {
  world = await startTestTailnet();
  dataDir = await mkdtemp(join(tmpdir(), "t3-discovery-fleet-"));
  service = await FleetService.start({ dataDir, secrets: new MemorySecretStore(), discovery: world.discovery });
  report = (await service.request("discovery.scan", SCAN)) as DiscoveryReport;
}, 900_000);

afterAll(async () => {
  await service?.stop();
  await world?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe("Find machines", () => {
  it("finds this machine's T3, both Tailscale peers running T3 and the ssh host, each pairable", () => {
    const expected = [
      [`local:${world.local.port}`, "t3-cli"],
      ["tailscale:alpha.tail7f3a.ts.net", "ssh"],
      ["tailscale:bravo.tail7f3a.ts.net", "ssh"],
      ["ssh:charlie", "ssh"],
    ] as const;
    for (const [id, pairVia] of expected) {
      expect(server(id), id).toMatchObject({ serverVersion: "0.0.42", protocol: 1, alreadyPaired: false, pairVia, reason: null });
    }
    expect(server("tailscale:alpha.tail7f3a.ts.net").baseUrl).toBe("http://100.101.1.2:3773");
    expect(server("ssh:charlie").baseUrl).toBe("http://10.77.6.2:3773");
    // Loopback and the tailnet keep the pairing code private; charlie's LAN address would not.
    for (const id of [`local:${world.local.port}`, "tailscale:alpha.tail7f3a.ts.net", "tailscale:bravo.tail7f3a.ts.net"])
      expect(server(id).plainHttp, id).toBeNull();
    expect(server("ssh:charlie").plainHttp).toMatch(/^T3 at http:\/\/10\.77\.6\.2:3773 is reached over plain HTTP on your network/);
  });

  it("does not mint a code for a LAN address over plain HTTP until the user says so", async () => {
    await expect(service.request("discovery.pair", { id: "ssh:charlie" })).rejects.toMatchObject({
      kind: "plain-http",
      message: expect.stringMatching(/Nothing was minted or sent/),
    });
  });

  it("lists a peer that never answers, a peer that is not T3 and an offline peer, each with its reason and no Pair", () => {
    expect(server("tailscale:slowpoke.tail7f3a.ts.net")).toMatchObject({
      pairVia: null,
      serverVersion: null,
      reason: expect.stringMatching(/did not answer within/),
    });
    expect(server("tailscale:printer.tail7f3a.ts.net")).toMatchObject({ pairVia: null, reason: expect.stringMatching(/not as a T3 server/) });
    expect(server("tailscale:old-desktop.tail7f3a.ts.net")).toMatchObject({ pairVia: null, reason: "Offline in Tailscale; not probed." });
    expect(report.sshConfigHosts).toEqual(expect.arrayContaining(["charlie", "charlie-no-t3", "charlie-rekeyed", "alpha.tail7f3a.ts.net"]));
  });

  it("./fleet serve --discover prints what it found, before its launch link", async () => {
    const dir = await mkdtemp(join(tmpdir(), "t3-discovery-cli-"));
    await mkdir(join(dir, "renderer"));
    const child = spawn(
      process.execPath,
      [
        join(root, "node_modules/tsx/dist/cli.mjs"),
        join(root, "electron/serve/cli.ts"),
        "--discover",
        "--secrets",
        "memory",
        "--data-dir",
        join(dir, "data"),
        "--renderer-dir",
        join(dir, "renderer"),
      ],
      { env: world.env, stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    try {
      await new Promise<void>((ready, fail) => {
        const onData = (chunk: Buffer) => {
          output += chunk.toString("utf8");
          if (/#code=/.test(output)) ready();
        };
        child.stdout.on("data", onData);
        child.stderr.on("data", onData);
        child.once("exit", (code) => fail(new Error(`serve exited (${code}):\n${output}`)));
      });
    } finally {
      child.kill("SIGTERM");
      await rm(dir, { recursive: true, force: true });
    }
    const found = output.slice(0, output.indexOf("T3 Fleet is running"));
    expect(found).toMatch(
      new RegExp(
        `\\[this machine\\] This machine \\(port ${world.local.port}\\)  http://127\\.0\\.0\\.1:${world.local.port}  T3 0\\.0\\.42, protocol 1.*can pair \\(t3 on this machine\\)`,
      ),
    );
    expect(found).toMatch(/\[tailscale\] alpha\.tail7f3a\.ts\.net {2}http:\/\/100\.101\.1\.2:3773 {2}T3 0\.0\.42, protocol 1.*can pair \(t3 over ssh\)/);
    expect(found).toMatch(/\[tailscale\] bravo\.tail7f3a\.ts\.net .*can pair/);
    expect(found).toMatch(/\[tailscale\] printer\.tail7f3a\.ts\.net .*cannot pair: "Something answers at http:\/\/100\.101\.4\.2:3773, but not as a T3 server/);
    expect(found).toMatch(/\[tailscale\] slowpoke\.tail7f3a\.ts\.net .*cannot pair: .*did not answer within/);
  }, 120_000);

  it("answers the same scan from the last report instead of probing again", async () => {
    const again = (await service.request("discovery.scan", { ...SCAN, refresh: true })) as DiscoveryReport;
    expect(again.scannedAt).toBe(report.scannedAt);
    expect(again.nextScanAt).toBeGreaterThan(again.scannedAt);
  });

  it("refuses to pair what is not T3, saying why", async () => {
    await expect(service.request("discovery.pair", { id: "tailscale:printer.tail7f3a.ts.net" })).rejects.toThrow(/not as a T3 server/);
  });

  it("says when t3 is not on the ssh host's PATH", async () => {
    await expect(service.request("discovery.pair", { id: "ssh:charlie-no-t3", plainHttp: true })).rejects.toMatchObject({
      kind: "unavailable",
      message: expect.stringMatching(/t3 is not on the PATH of charlie-no-t3/),
    });
  });

  it("refuses a host whose key changed, and says so", async () => {
    await expect(service.request("discovery.pair", { id: "ssh:charlie-rekeyed", plainHttp: true })).rejects.toMatchObject({
      kind: "host-key-changed",
      message: expect.stringMatching(/host key of charlie-rekeyed has changed/),
    });
  });

  // Each pairing runs T3's CLI (over 10 s each on a busy two-core machine) and connects.
  it("pairs this machine, both Tailscale peers and the ssh host with one action each; they come online", async () => {
    const ids = [`local:${world.local.port}`, "tailscale:alpha.tail7f3a.ts.net", "tailscale:bravo.tail7f3a.ts.net", "ssh:charlie"];
    const paired: string[] = [];
    for (const id of ids) {
      const result = (await service.request("discovery.pair", { id, ...(id === "ssh:charlie" && { plainHttp: true }) })) as {
        environmentId: string;
        readOnly: boolean;
      };
      expect(result.environmentId).toBe(server(id).environmentId);
      expect(result.readOnly).toBe(false);
      paired.push(result.environmentId);
    }
    const online = () =>
      paired.every((environmentId) => service.snapshot().environments.find((env) => env.environmentId === environmentId)?.connection.phase === "online");
    await until(service, online, "all four paired machines online");
    const after = (await service.request("discovery.scan", SCAN)) as DiscoveryReport;
    for (const id of ids) expect(after.servers.find((entry) => entry.id === id)?.alreadyPaired, id).toBe(true);
    // The pairing code came from T3's own CLI on each machine: each T3 lists T3 Fleet's session.
    expect(JSON.parse(await world.local.cli(["auth", "session", "list", "--json"]))).toEqual([
      expect.objectContaining({ subject: "one-time-token", client: expect.objectContaining({ label: expect.stringMatching(/^T3 Fleet on /) }) }),
    ]);
  }, 480_000);

  // Found by attacking it: the check was made at scan time only, so a name that answered the tailnet
  // then and a LAN address at Pair had a code minted and sent to http://<name>:3773 unconfirmed.
  it("asks again before pairing a name that answered the tailnet at scan time and a LAN address at Pair", async () => {
    world.names.set("split.tail7f3a.ts.net", ["100.101.1.2"]);
    const scan = (await service.request("discovery.scan", { ...SCAN, sshHosts: [...SSH_HOSTS, "split-box"] })) as DiscoveryReport;
    expect(scan.servers.find((entry) => entry.id === "ssh:split-box")).toMatchObject({
      baseUrl: "http://100.101.1.2:3773",
      serverVersion: "0.0.42",
      pairVia: "ssh",
      plainHttp: null,
    });
    // Tailscale went down: the same name now answers charlie's LAN address.
    world.names.set("split.tail7f3a.ts.net", ["10.77.6.2"]);
    await expect(service.request("discovery.pair", { id: "ssh:split-box" })).rejects.toMatchObject({
      kind: "plain-http",
      message: expect.stringMatching(/^T3 at http:\/\/10\.77\.6\.2:3773 is reached over plain HTTP on your network.* Nothing was minted or sent/),
    });
  });
});
