import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { TailscaleStatus, readTailscale, tailscalePeers } from "./tailscale";

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "fixtures/tailscale-status.json");
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A stand-in `tailscale` printing `stdout` for `status --json`. */
async function standIn(stdout: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "t3-tailscale-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, "status.json"), stdout);
  await writeFile(join(dir, "tailscale"), `#!/bin/sh\n[ "$1 $2" = "status --json" ] && exec cat ${JSON.stringify(join(dir, "status.json"))}\nexit 2\n`);
  await chmod(join(dir, "tailscale"), 0o755);
  return join(dir, "tailscale");
}

describe("tailscale status --json", () => {
  it("decodes the recorded shape: every peer with its MagicDNS name, IPv4 address and online state", async () => {
    const status = TailscaleStatus.parse(JSON.parse(await readFile(FIXTURE, "utf8")));
    const peer = (name: string, address: string, online: boolean) => ({ name, address, online, sshDestination: name });
    expect(tailscalePeers(status)).toEqual([
      peer("alpha.tail7f3a.ts.net", "100.101.1.2", true),
      peer("bravo.tail7f3a.ts.net", "100.101.2.2", true),
      peer("slowpoke.tail7f3a.ts.net", "100.101.3.2", true),
      peer("printer.tail7f3a.ts.net", "100.101.4.2", true),
      peer("old-desktop.tail7f3a.ts.net", "100.101.5.2", false),
    ]);
  });

  it("reads the CLI and lists its peers", async () => {
    const look = await readTailscale(await standIn(await readFile(FIXTURE, "utf8")));
    expect(look.ok && look.peers.map((peer) => peer.name)).toContain("bravo.tail7f3a.ts.net");
  });

  it("says why it found nothing: no CLI, Tailscale stopped, output that is not the status", async () => {
    expect(await readTailscale(join(tmpdir(), "no-such-dir", "tailscale"))).toEqual({ ok: false, note: expect.stringMatching(/not installed/) });
    expect(await readTailscale(await standIn(JSON.stringify({ BackendState: "Stopped", Peer: null })))).toEqual({
      ok: false,
      note: expect.stringMatching(/not connected here \(state Stopped\)/),
    });
    expect(await readTailscale(await standIn("tailscaled is not running"))).toEqual({ ok: false, note: expect.stringMatching(/printed no JSON/) });
    expect(await readTailscale(await standIn(JSON.stringify({ BackendState: "Running", Peer: { k: { DNSName: 7 } } })))).toEqual({
      ok: false,
      note: expect.stringMatching(/shape T3 Fleet does not know/),
    });
  });

  it("never takes a peer's IPv6 or a non-address as the address to probe", () => {
    const status = TailscaleStatus.parse({
      BackendState: "Running",
      Peer: { k: { HostName: "v6only", DNSName: "", TailscaleIPs: ["fd7a:115c:a1e0::9", "not-an-ip"], Online: true } },
    });
    expect(tailscalePeers(status)).toEqual([{ name: "v6only", address: null, online: true, sshDestination: "v6only" }]);
  });

  // Found by attacking it: peer names went raw into machine names, ids and ssh; any IPv4 was probed.
  it("cleans a hostile peer's name like server text, never hands ssh an option, and probes only Tailscale's range", () => {
    const status = TailscaleStatus.parse({
      BackendState: "Running",
      Peer: {
        a: { HostName: "x", DNSName: "\x1b]0;pwned\x07build\x1b[2J-box \u202egnp.ts.net.", TailscaleIPs: ["127.0.0.2", "100.100.1.1"], Online: true },
        b: { HostName: "-oProxyCommand=touch /tmp/owned", DNSName: "", TailscaleIPs: ["169.254.169.254"], Online: true },
        c: { HostName: "-oProxyCommand=sh", DNSName: "", TailscaleIPs: ["10.0.0.1", "100.64.0.7"], Online: true },
        d: { HostName: "metadata", DNSName: "metadata.tail7f3a.ts.net.", TailscaleIPs: ["169.254.169.254", "127.0.0.1", "10.0.0.1"], Online: true },
      },
    });
    expect(tailscalePeers(status)).toEqual([
      { name: "build-box gnp.ts.net", address: "100.100.1.1", online: true, sshDestination: "100.100.1.1" },
      { name: "-oProxyCommand=touch /tmp/owned", address: null, online: true, sshDestination: null },
      { name: "-oProxyCommand=sh", address: "100.64.0.7", online: true, sshDestination: "100.64.0.7" },
      { name: "metadata.tail7f3a.ts.net", address: null, online: true, sshDestination: "metadata.tail7f3a.ts.net" },
    ]);
  });
});
