// Find machines end to end, offline: the real T3 0.0.42 as "this machine" on loopback, and test
// hosts in private network namespaces (tailnet.testkit.ts): two Tailscale peers and an ssh host
// running the real T3 and Debian's sshd, a peer that never answers, a peer that is not T3 and an
// offline peer, named by a stand-in `tailscale` printing the recorded status fixture. Runs only
// inside scripts/discovery-netns.sh (its own `unshare --net`); it fails, never skips, when a part
// cannot start.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiscoveryReport, FoundServer } from "../../../../shared/bridge/contract";
import { RealT3Server } from "../../realt3/harness.testkit";
import { MemorySecretStore } from "../../secrets";
import { FleetService } from "../../service";
import { until } from "../../service.testkit";
import { NamespaceHost, SshClient, t3Executable, tailscaleStandIn } from "./tailnet.testkit";

const run = promisify(execFile);
const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "../fixtures/tailscale-status.json");
const SSH_PORT = 2222;
const SSH_PORT_WITHOUT_T3 = 2223;
const SCAN = { ports: [], sshHosts: ["charlie", "charlie-no-t3", "charlie-rekeyed"], refresh: false };

let local: RealT3Server;
let hosts: NamespaceHost[] = [];
let client: SshClient;
let service: FleetService;
let scratch: string;
let report: DiscoveryReport;

function server(id: string): FoundServer {
  const found = report.servers.find((entry) => entry.id === id);
  if (!found) throw new Error(`${id} not found; found ${report.servers.map((entry) => entry.id).join(", ")}`);
  return found;
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "t3-discovery-test-"));
  client = await SshClient.create();
  const [alpha, bravo, slowpoke, printer, charlie] = await Promise.all([
    NamespaceHost.create("alpha", "100.101.1.2", "vt-alpha"),
    NamespaceHost.create("bravo", "100.101.2.2", "vt-bravo"),
    NamespaceHost.create("slowpoke", "100.101.3.2", "vt-slow"),
    NamespaceHost.create("printer", "100.101.4.2", "vt-printer"),
    NamespaceHost.create("charlie", "10.77.6.2", "vt-charlie"),
  ]);
  hosts = [alpha!, bravo!, slowpoke!, printer!, charlie!];
  // One at a time: four T3 servers starting at once starve a two-core machine.
  local = await RealT3Server.start();
  const t3 = { alpha: await alpha!.startT3(), bravo: await bravo!.startT3(), charlie: await charlie!.startT3() };
  const keys = {
    alpha: await alpha!.startSshd(SSH_PORT, client, t3.alpha, true),
    bravo: await bravo!.startSshd(SSH_PORT, client, t3.bravo, true),
    charlie: await charlie!.startSshd(SSH_PORT, client, t3.charlie, true),
    charlieWithoutT3: await charlie!.startSshd(SSH_PORT_WITHOUT_T3, client, t3.charlie, false),
  };
  await slowpoke!.startSilentServer();
  await printer!.startWebPage();
  // The key the user once accepted for "charlie-rekeyed"; the host now presents charlie's key.
  await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(scratch, "old_host_key")]);
  const oldKey = (await readFile(join(scratch, "old_host_key.pub"), "utf8")).split(" ").slice(0, 2).join(" ");
  await client.trust([
    { pattern: `[100.101.1.2]:${SSH_PORT}`, key: keys.alpha },
    { pattern: `[100.101.2.2]:${SSH_PORT}`, key: keys.bravo },
    { pattern: `[10.77.6.2]:${SSH_PORT}`, key: keys.charlie },
    { pattern: `[10.77.6.2]:${SSH_PORT_WITHOUT_T3}`, key: keys.charlieWithoutT3 },
    { pattern: "charlie-rekeyed", key: oldKey },
  ]);
  await client.writeConfig([
    { alias: "alpha.tail7f3a.ts.net", settings: { HostName: "100.101.1.2", Port: String(SSH_PORT) } },
    { alias: "bravo.tail7f3a.ts.net", settings: { HostName: "100.101.2.2", Port: String(SSH_PORT) } },
    { alias: "charlie", settings: { HostName: "10.77.6.2", Port: String(SSH_PORT) } },
    { alias: "charlie-no-t3", settings: { HostName: "10.77.6.2", Port: String(SSH_PORT_WITHOUT_T3) } },
    { alias: "charlie-rekeyed", settings: { HostName: "10.77.6.2", Port: String(SSH_PORT), HostKeyAlias: "charlie-rekeyed" } },
  ]);
  // This machine's `t3` on PATH, as an install puts it; T3CODE_HOME and T3CODE_PORT as T3 reads them.
  const localBin = join(scratch, "bin");
  await mkdir(localBin);
  await symlink(t3Executable(), join(localBin, "t3"));
  const tailscaleBin = await tailscaleStandIn(FIXTURE);
  service = await FleetService.start({
    dataDir: join(scratch, "data"),
    secrets: new MemorySecretStore(),
    discovery: {
      env: { ...process.env, PATH: `${tailscaleBin}:${localBin}:${process.env.PATH ?? "/usr/bin:/bin"}`, T3CODE_HOME: local.baseDir, T3CODE_PORT: String(local.port) },
      ssh: { configFile: client.config },
      probeTimeoutMs: 1_500,
    },
  });
  report = (await service.request("discovery.scan", SCAN)) as DiscoveryReport;
}, 240_000);

afterAll(async () => {
  await service?.stop();
  await local?.stop();
  await Promise.all(hosts.map((host) => host.stop()));
  await client?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe("Find machines", () => {
  it("finds this machine's T3, both Tailscale peers running T3 and the ssh host, each pairable", () => {
    const expected = [
      [`local:${local.port}`, "t3-cli"],
      ["tailscale:alpha.tail7f3a.ts.net", "ssh"],
      ["tailscale:bravo.tail7f3a.ts.net", "ssh"],
      ["ssh:charlie", "ssh"],
    ] as const;
    for (const [id, pairVia] of expected) {
      expect(server(id), id).toMatchObject({ serverVersion: "0.0.42", protocol: 1, alreadyPaired: false, pairVia, reason: null });
    }
    expect(server("tailscale:alpha.tail7f3a.ts.net").baseUrl).toBe("http://100.101.1.2:3773");
    expect(server("ssh:charlie").baseUrl).toBe("http://10.77.6.2:3773");
  });

  it("lists a peer that never answers, a peer that is not T3 and an offline peer, each with its reason and no Pair", () => {
    expect(server("tailscale:slowpoke.tail7f3a.ts.net")).toMatchObject({ pairVia: null, serverVersion: null, reason: expect.stringMatching(/did not answer within/) });
    expect(server("tailscale:printer.tail7f3a.ts.net")).toMatchObject({ pairVia: null, reason: expect.stringMatching(/not as a T3 server/) });
    expect(server("tailscale:old-desktop.tail7f3a.ts.net")).toMatchObject({ pairVia: null, reason: "Offline in Tailscale; not probed." });
    expect(report.sshConfigHosts).toEqual(expect.arrayContaining(["charlie", "charlie-no-t3", "charlie-rekeyed", "alpha.tail7f3a.ts.net"]));
  });

  it("answers the same scan from the last report instead of probing again", async () => {
    const again = (await service.request("discovery.scan", { ...SCAN, refresh: true })) as DiscoveryReport;
    expect(again.scannedAt).toBe(report.scannedAt);
    expect(again.nextScanAt).toBeGreaterThan(again.scannedAt);
  });

  it("refuses to pair what is not T3, saying why", async () => {
    await expect(service.request("discovery.pair", { id: "tailscale:printer.tail7f3a.ts.net" })).rejects.toThrow(/not as a T3 server/);
  });

  it("says when t3 is not on the ssh host's PATH", async () => {
    await expect(service.request("discovery.pair", { id: "ssh:charlie-no-t3" })).rejects.toMatchObject({ kind: "unavailable", message: expect.stringMatching(/t3 is not on the PATH of charlie-no-t3/) });
  });

  it("refuses a host whose key changed, and says so", async () => {
    await expect(service.request("discovery.pair", { id: "ssh:charlie-rekeyed" })).rejects.toMatchObject({ kind: "host-key-changed", message: expect.stringMatching(/host key of charlie-rekeyed has changed/) });
  });

  it("pairs this machine, both Tailscale peers and the ssh host with one action each; they come online", async () => {
    const ids = [`local:${local.port}`, "tailscale:alpha.tail7f3a.ts.net", "tailscale:bravo.tail7f3a.ts.net", "ssh:charlie"];
    const paired: string[] = [];
    for (const id of ids) {
      const result = (await service.request("discovery.pair", { id })) as { environmentId: string; readOnly: boolean };
      expect(result.environmentId).toBe(server(id).environmentId);
      expect(result.readOnly).toBe(false);
      paired.push(result.environmentId);
    }
    const online = () => paired.every((environmentId) => service.snapshot().environments.find((env) => env.environmentId === environmentId)?.connection.phase === "online");
    await until(service, online, "all four paired machines online");
    const after = (await service.request("discovery.scan", SCAN)) as DiscoveryReport;
    for (const id of ids) expect(after.servers.find((entry) => entry.id === id)?.alreadyPaired, id).toBe(true);
    // The pairing code came from T3's own CLI on each machine: each T3 lists T3 Fleet's session.
    expect(JSON.parse(await local.cli(["auth", "session", "list", "--json"]))).toEqual([
      expect.objectContaining({ subject: "one-time-token", client: expect.objectContaining({ label: expect.stringMatching(/^T3 Fleet on /) }) }),
    ]);
  }, 240_000);
});
