// The discovery tests' whole world, shared by the vitest suite and the browser spec: the real T3
// 0.0.42 as "this machine" on loopback; Tailscale peers alpha and bravo (real T3 + sshd), slowpoke
// (accepts, never answers), printer (a web page, not T3) and old-desktop (offline, no namespace);
// an ssh host charlie (real T3, sshd with t3 on PATH on one port and without it on another), and
// an ssh alias whose recorded host key no longer matches. The stand-in `tailscale` prints the
// recorded status fixture naming those peers at the addresses assigned here.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { RealT3Server } from "../realt3/harness.testkit";
import type { DiscoveryOptions } from "../../electron/fleet/discovery/coordinator";
import { NamespaceHost, SshClient, t3Executable, tailscaleStandIn } from "./tailnet.testkit";

const run = promisify(execFile);
export const TAILSCALE_FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "../../electron/fleet/discovery/fixtures/tailscale-status.json");
const SSH_PORT = 2222;
const SSH_PORT_WITHOUT_T3 = 2223;
/** Generous: a real T3 on a busy two-core machine must never look like the peer that never answers. */
const PROBE_TIMEOUT_MS = 5_000;
/** T3 runs its migrations on first start: minutes, not seconds, on a two-core machine shared with other builds. */
const START_TIMEOUT_MS = 180_000;
/** The ssh hosts the user names in the tests (aliases in the test's ssh config). */
export const SSH_HOSTS = ["charlie", "charlie-no-t3", "charlie-rekeyed"];

export interface TestTailnet {
  local: RealT3Server;
  /** The environment a fleet process needs to see this world: PATH with `t3` and `tailscale`, T3CODE_HOME, T3CODE_PORT. */
  env: NodeJS.ProcessEnv;
  discovery: DiscoveryOptions;
  /** The world's name service: what Find machines' look-up answers for a name (none: it does not resolve). */
  names: Map<string, string[]>;
  stop(): Promise<void>;
}

export async function startTestTailnet(): Promise<TestTailnet> {
  const scratch = await mkdtemp(join(tmpdir(), "t3-discovery-world-"));
  const client = await SshClient.create();
  const hosts: NamespaceHost[] = [];
  let local: RealT3Server | undefined;
  const stop = async () => {
    await local?.stop();
    await Promise.all(hosts.map((host) => host.stop()));
    await client.stop();
    await rm(scratch, { recursive: true, force: true });
  };
  try {
    hosts.push(
      ...(await Promise.all([
        NamespaceHost.create("alpha", "100.101.1.2", "vt-alpha"),
        NamespaceHost.create("bravo", "100.101.2.2", "vt-bravo"),
        NamespaceHost.create("slowpoke", "100.101.3.2", "vt-slow"),
        NamespaceHost.create("printer", "100.101.4.2", "vt-printer"),
        NamespaceHost.create("charlie", "10.77.6.2", "vt-charlie"),
      ])),
    );
    const [alpha, bravo, slowpoke, printer, charlie] = hosts as [NamespaceHost, NamespaceHost, NamespaceHost, NamespaceHost, NamespaceHost];
    // One at a time: four T3 servers starting at once starve a two-core machine.
    local = await RealT3Server.start({ startTimeoutMs: START_TIMEOUT_MS });
    const t3 = { alpha: await alpha.startT3(), bravo: await bravo.startT3(), charlie: await charlie.startT3() };
    const keys = {
      alpha: await alpha.startSshd(SSH_PORT, client, t3.alpha, true),
      bravo: await bravo.startSshd(SSH_PORT, client, t3.bravo, true),
      charlie: await charlie.startSshd(SSH_PORT, client, t3.charlie, true),
      charlieWithoutT3: await charlie.startSshd(SSH_PORT_WITHOUT_T3, client, t3.charlie, false),
    };
    await slowpoke.startSilentServer();
    await printer.startWebPage();
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
      // A MagicDNS name that answers as `names` says (a split-horizon name, Tailscale up or down).
      { alias: "split-box", settings: { HostName: "split.tail7f3a.ts.net", Port: String(SSH_PORT) } },
    ]);
    // This machine's `t3` on PATH, as an install puts it; T3CODE_HOME and T3CODE_PORT as T3 reads them.
    const localBin = join(scratch, "bin");
    await mkdir(localBin);
    await symlink(t3Executable(), join(localBin, "t3"));
    const tailscaleBin = await tailscaleStandIn(TAILSCALE_FIXTURE, scratch);
    const env = {
      ...process.env,
      PATH: `${tailscaleBin}:${localBin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      T3CODE_HOME: local.baseDir,
      T3CODE_PORT: String(local.port),
    };
    // One search serves every pairing of a run (each runs T3's CLI: over 10 s on a busy machine), so it stays fresh for 15 minutes.
    const names = new Map<string, string[]>();
    const discovery: DiscoveryOptions = {
      env,
      ssh: { configFile: client.config },
      probeTimeoutMs: PROBE_TIMEOUT_MS,
      minRescanMs: 15 * 60_000,
      lookup: (hostname) => Promise.resolve(names.get(hostname) ?? []),
    };
    return { local, env, discovery, names, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
