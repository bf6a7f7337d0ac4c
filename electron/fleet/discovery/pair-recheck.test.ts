// Pair decides on what is true when it is pressed, not on what the scan saw (issue 43): the
// plain-HTTP check runs again on the address the pairing code will go to, a scan too old to trust
// is refused, and a scan's deadline bounds every step of it.
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Discovery, type DiscoveryOptions } from "./coordinator";
import { type StandIns, runningTailnet, standIns, t3At } from "./stand-ins.testkit";

const kits: StandIns[] = [];
afterEach(async () => {
  while (kits.length) await kits.pop()!.remove();
});

const PAIRED = { environmentId: "e", label: "box", readOnly: false, previousSession: { outcome: "none" as const, note: null } };

async function world(resolved: Record<string, string>, options: Partial<DiscoveryOptions> = {}, clock = { now: 1_000_000 }) {
  const kit = await standIns(runningTailnet("100.101.9.9"), resolved);
  kits.push(kit);
  const links: string[] = [];
  const discovery = new Discovery(
    {
      pair: (link) => {
        links.push(link);
        return Promise.resolve(PAIRED);
      },
      isPaired: () => false,
      now: () => clock.now,
    },
    {
      env: kit.env,
      local: { t3Command: "no-t3-here" },
      ssh: { configFile: join(tmpdir(), "no-such-ssh-config") },
      probe: (baseUrl) => Promise.resolve(t3At(baseUrl)),
      minRescanMs: 120_000,
      ...options,
    },
  );
  return { kit, links, discovery, clock };
}

describe("Pair checks plain HTTP again, on the address it sends to", () => {
  // Found by attacking it: a MagicDNS or split-horizon name answered the tailnet while Find machines
  // looked and a LAN address when Pair was pressed (Tailscale down, the laptop moved); the code was
  // minted there and handed to http://<name>:3773 with no confirmation.
  it("refuses a name that resolved into the tailnet at scan time and to the LAN at Pair: nothing is minted or sent", async () => {
    let answer = ["100.101.9.9"];
    const { kit, links, discovery, clock } = await world(
      { "split-box": "hostname split-box.tail7f3a.ts.net\nport 22\n" },
      { lookup: () => Promise.resolve(answer) },
    );
    const report = await discovery.scan({ ports: [], sshHosts: ["split-box"], refresh: false });
    expect(report.servers.find((server) => server.id === "ssh:split-box")).toMatchObject({ pairVia: "ssh", plainHttp: null });

    answer = ["192.168.1.20"];
    clock.now += 30_000;
    await expect(discovery.pair("ssh:split-box", undefined)).rejects.toMatchObject({
      kind: "plain-http",
      message: expect.stringMatching(/^T3 at http:\/\/192\.168\.1\.20:3773 is reached over plain HTTP on your network.* Nothing was minted or sent/),
    });
    // A go-ahead is for the risk the user was shown; the scan showed none.
    await expect(discovery.pair("ssh:split-box", undefined, true)).rejects.toMatchObject({ kind: "plain-http" });
    expect(await kit.mints()).toBe(0);
    expect(links).toEqual([]);

    // Back on the tailnet: the code goes to the address just checked, never to the name.
    answer = ["100.101.9.9"];
    await discovery.pair("ssh:split-box", undefined);
    expect(links).toEqual(["http://100.101.9.9:3773/pair#token=QKKAY73L3Y4A"]);
  });

  it("takes a go-ahead only for the address it was given for, and re-reads ssh's config at Pair", async () => {
    let answer = ["192.168.1.20"];
    const { kit, links, discovery } = await world({ "lan-name": "hostname box.lan\nport 22\n" }, { lookup: () => Promise.resolve(answer) });
    const report = await discovery.scan({ ports: [], sshHosts: ["lan-name"], refresh: false });
    expect(report.servers.find((server) => server.id === "ssh:lan-name")?.plainHttp).toMatch(/^T3 at http:\/\/192\.168\.1\.20:3773 is reached/);

    answer = ["192.168.7.7"];
    await expect(discovery.pair("ssh:lan-name", undefined, true)).rejects.toMatchObject({
      kind: "plain-http",
      message: expect.stringMatching(/^T3 at http:\/\/192\.168\.7\.7:3773 is reached over plain HTTP.* Nothing was minted or sent/),
    });
    // The config now sends the alias through a jump host: the address may not be the machine ssh logs into.
    answer = ["192.168.1.20"];
    await kit.resolveAs("lan-name", "hostname box.lan\nport 22\nproxyjump bastion\n");
    await expect(discovery.pair("ssh:lan-name", undefined, true)).rejects.toMatchObject({
      kind: "plain-http",
      message: expect.stringMatching(/^ssh reaches lan-name through ProxyJump bastion/),
    });
    expect(await kit.mints()).toBe(0);

    await kit.resolveAs("lan-name", "hostname box.lan\nport 22\n");
    await discovery.pair("ssh:lan-name", undefined, true);
    expect(links).toEqual(["http://192.168.1.20:3773/pair#token=QKKAY73L3Y4A"]);
  });

  // Found by attacking it: a tailnet address was trusted for its range alone. With Tailscale down
  // here, plain HTTP to 100.101.9.9 leaves by the default route, unencrypted, to whoever answers.
  it("trusts a tailnet address only while Tailscale here runs and lists it, at scan time and again at Pair", async () => {
    const { kit, links, discovery } = await world({ "tail-box": "hostname 100.101.9.9\nport 22\n", "stray-box": "hostname 100.99.1.1\nport 22\n" });
    const report = await discovery.scan({ ports: [], sshHosts: ["tail-box", "stray-box"], refresh: false });
    const row = (id: string) => report.servers.find((server) => server.id === id);
    expect(row("ssh:tail-box")?.plainHttp).toBeNull();
    expect(row("tailscale:box.tail7f3a.ts.net")).toMatchObject({ pairVia: "ssh", plainHttp: null });
    // An address in the range that Tailscale does not list is not the tailnet's.
    expect(row("ssh:stray-box")?.plainHttp).toMatch(
      /^T3 at http:\/\/100\.99\.1\.1:3773 is in Tailscale's range, but Tailscale here is not running or does not list it/,
    );

    await kit.statusAs({ BackendState: "Stopped", Peer: null });
    for (const id of ["ssh:tail-box", "tailscale:box.tail7f3a.ts.net"]) {
      await expect(discovery.pair(id, undefined, true), id).rejects.toMatchObject({
        kind: "plain-http",
        message: expect.stringMatching(
          /^T3 at http:\/\/100\.101\.9\.9:3773 is in Tailscale's range, but Tailscale here is not running.* Nothing was minted or sent/,
        ),
      });
    }
    expect(await kit.mints()).toBe(0);
    expect(links).toEqual([]);
  });

  it("refuses to pair from a scan older than the rescan interval, minting nothing", async () => {
    const { kit, links, discovery, clock } = await world({ "tail-box": "hostname 100.101.9.9\nport 22\n" });
    await discovery.scan({ ports: [], sshHosts: ["tail-box"], refresh: false });
    clock.now += 120_000;
    await expect(discovery.pair("ssh:tail-box", undefined)).rejects.toMatchObject({
      kind: "stale",
      message: expect.stringMatching(/^Find machines looked 2 minutes ago.* Look again, then pair/),
    });
    expect(await kit.mints()).toBe(0);
    expect(links).toEqual([]);
  });
});

describe("A scan's deadline", () => {
  // Found by attacking it: the 20 s bound covered the probes only; a hung `tailscale status`,
  // `ssh -G` or DNS look-up held Find machines (and every scan behind it) for as long as it hung.
  it("bounds tailscale status, ssh -G and the DNS look-up as well as the probes", async () => {
    const kit = await standIns("hang", { "slow-dns": "hostname slow.example\nport 22\n", "quick-box": "hostname 100.101.9.9\nport 22\n" }, ["slow-config"]);
    kits.push(kit);
    const discovery = new Discovery(
      { pair: () => Promise.reject(new Error("not in this test")), isPaired: () => false, now: () => Date.now() },
      {
        env: kit.env,
        local: { t3Command: "no-t3-here" },
        ssh: { configFile: join(tmpdir(), "no-such-ssh-config") },
        probe: (baseUrl) => Promise.resolve(t3At(baseUrl)),
        lookup: (hostname) => (hostname === "slow.example" ? new Promise<string[]>(() => undefined) : Promise.resolve([])),
        scanDeadlineMs: 2_000,
      },
    );
    const started = performance.now();
    const report = await discovery.scan({ ports: [], sshHosts: ["slow-config", "slow-dns", "quick-box"], refresh: false });
    expect(performance.now() - started).toBeLessThan(8_000);
    expect(report.notes).toContainEqual(expect.stringMatching(/^Tailscale: tailscale status did not answer within 1 s/));
    const row = (id: string) => report.servers.find((server) => server.id === id);
    expect(row("ssh:slow-config")).toMatchObject({
      pairVia: null,
      reason: expect.stringMatching(/^ssh -G slow-config did not answer within 1 s/),
    });
    expect(row("ssh:slow-dns")).toMatchObject({
      pairVia: null,
      reason: expect.stringMatching(/^slow\.example \(the HostName of slow-dns\) did not resolve within 1 s/),
    });
    // Probed in the time left; with Tailscale silent, its tailnet address is not taken as private.
    expect(row("ssh:quick-box")).toMatchObject({
      pairVia: "ssh",
      baseUrl: "http://100.101.9.9:3773",
      plainHttp: expect.stringMatching(/is in Tailscale's range, but Tailscale here is not running/),
    });
  });
});
