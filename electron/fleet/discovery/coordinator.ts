// Find machines: runs the sources (this machine, Tailscale peers, the ssh hosts the user names),
// bounds their probes (concurrency, timeout, peers looked at, one scan at a time with an overall
// deadline, the same scan at most every few minutes), and pairs a found server with one action by
// minting a pairing code through T3's own CLI, locally or over ssh, and handing it to the fleet's
// pairing (electron/fleet/pairing.ts) in memory. The code and the token it is exchanged for go over
// plain HTTP: off loopback and the tailnet that happens only once the user has said so. An ssh
// host's address is looked up once per check and pinned into the URL, and Pair checks it again
// when pressed: a name may resolve elsewhere by then (Tailscale down, the laptop moved).
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { BridgeResults, DiscoveryReport, FoundServer } from "../../../shared/bridge/contract";
import { BridgeError } from "../bridge-error";
import { isLoopbackAddress, isTailnetAddress } from "./addresses";
import { saneLabel } from "../pairing";
import { byDeadline, mapBounded } from "./bounded";
import { LocalDiscovery, type LocalDiscoveryOptions } from "./local";
import { type PairingCredential, pairingLink } from "./pairing-credential";
import { type ProbeOutcome, T3_DEFAULT_PORT, httpBaseUrl, probeDescriptor } from "./probe";
import { type ResolvedSshHost, Ssh, type SshOptions } from "./ssh";
import { readTailscale } from "./tailscale";

export interface DiscoveryOptions {
  local?: LocalDiscoveryOptions;
  ssh?: SshOptions;
  /** The tailscale CLI (default "tailscale" on PATH). */
  tailscaleCommand?: string;
  /** Bound of one descriptor probe. */
  probeTimeoutMs?: number;
  /** Probes in flight at once. */
  concurrency?: number;
  /** The same scan is not run again within this long; its last report answers. */
  minRescanMs?: number;
  /** One scan's overall bound (SCAN_DEADLINE_MS). */
  scanDeadlineMs?: number;
  /** Tailscale peers looked at in one scan (MAX_TAILSCALE_PEERS). */
  maxTailscalePeers?: number;
  /** The descriptor probe (probe.ts); tests stand in for the network with it. */
  probe?: (baseUrl: string, timeoutMs: number) => Promise<ProbeOutcome>;
  /** Every address a host name resolves to here (default: the system's resolver); tests answer as a split-horizon DNS would. */
  lookup?: (hostname: string) => Promise<string[]>;
  env?: NodeJS.ProcessEnv;
}

export interface DiscoveryDeps {
  /** Pairs from a pairing link (the fleet's one pairing path). */
  pair: (link: string, label: string | undefined) => Promise<BridgeResults["pair.confirm"]>;
  isPaired: (environmentId: string) => boolean;
  now: () => number;
}

export interface ScanRequest {
  ports: number[];
  sshHosts: string[];
  refresh: boolean;
}

export const DEFAULT_PROBE_TIMEOUT_MS = 3_000;
export const DEFAULT_PROBE_CONCURRENCY = 4;
export const DEFAULT_MIN_RESCAN_MS = 2 * 60_000;
/** One scan's overall bound: what has not been probed by then is listed as not looked at (3,000 peers took 21.7 s unbounded). */
export const SCAN_DEADLINE_MS = 20_000;
/** Tailscale peers looked at per scan (online first, by name): a tailnet of thousands is not swept; others are added by ssh host. */
export const MAX_TAILSCALE_PEERS = 64;

/** Where an ssh host is reached: `ssh -G`'s answer and the one address, looked up here, that is probed and paired. */
type Located = { host: string; resolved: ResolvedSshHost; address: string } | { host: string; error: string };

/** A found server with what pairing it needs (never sent to the UI). */
interface Found {
  view: Omit<FoundServer, "alreadyPaired">;
  port: number;
  sshDestination: string | null;
}

interface Scan {
  key: string;
  scannedAt: number;
  found: Map<string, Found>;
  notes: string[];
  sshConfigHosts: string[];
}

export class Discovery {
  private readonly local: LocalDiscovery;
  private readonly ssh: Ssh;
  private last: Scan | undefined;
  private running: { key: string; scan: Promise<Scan> } | undefined;

  constructor(
    private readonly deps: DiscoveryDeps,
    private readonly options: DiscoveryOptions = {},
  ) {
    this.local = new LocalDiscovery({ ...options.local, ...(options.env && { env: options.env }) });
    this.ssh = new Ssh({ ...options.ssh, ...(options.env && { env: options.env }) });
  }

  private get minRescanMs(): number {
    return this.options.minRescanMs ?? DEFAULT_MIN_RESCAN_MS;
  }

  private get scanDeadlineMs(): number {
    return this.options.scanDeadlineMs ?? SCAN_DEADLINE_MS;
  }

  /** What asking the CLIs and the resolver may take of a scan's deadline: the rest is left to the probes. */
  private get lookMs(): number {
    return this.scanDeadlineMs / 2;
  }

  async scan(request: ScanRequest): Promise<DiscoveryReport> {
    const ports = [...new Set(request.ports)].sort((a, b) => a - b);
    const sshHosts = [...new Set(request.sshHosts)].sort();
    const key = JSON.stringify({ ports, sshHosts });
    const fresh = this.last && this.last.key === key && this.deps.now() < this.last.scannedAt + this.minRescanMs;
    if (!fresh) {
      if (this.running && this.running.key !== key) {
        throw new BridgeError(
          "busy",
          `Find machines is still looking with other ports or hosts (it stops within ${Math.round(this.scanDeadlineMs / 1000)} s). Look again once it has finished.`,
        );
      }
      if (!this.running) {
        const scan = this.run(key, ports, sshHosts);
        this.running = { key, scan };
        void scan.then(
          () => this.running?.scan === scan && (this.running = undefined),
          () => this.running?.scan === scan && (this.running = undefined),
        );
      }
      this.last = await this.running!.scan;
    }
    return this.report(this.last!);
  }

  /** `plainHttp`: the user's go-ahead where the found server's `plainHttp` says why plain HTTP is a risk there. */
  async pair(id: string, label: string | undefined, plainHttp = false): Promise<BridgeResults["pair.confirm"]> {
    const found = this.last?.found.get(id);
    if (!found) throw new BridgeError("invalid", "That machine is not in the last scan. Find machines again.");
    const { view } = found;
    if (!view.pairVia) throw new BridgeError("unavailable", view.reason ?? `${view.name} cannot be paired from here.`);
    const age = this.deps.now() - this.last!.scannedAt;
    if (age >= this.minRescanMs)
      throw new BridgeError(
        "stale",
        `Find machines looked ${ago(age)} ago; ${view.name} may be elsewhere now. Nothing was minted or sent. Look again, then pair.`,
      );
    // Before anything is minted: an unconfirmed pairing spends nothing and sends nothing.
    const baseUrl = view.source === "local" ? view.baseUrl : await this.recheck(found, plainHttp);
    if (view.plainHttp && !plainHttp) throw plainHttpRefusal(view.plainHttp);
    let credential: PairingCredential;
    if (view.pairVia === "t3-cli") credential = await this.local.mint(found.port);
    else credential = await this.ssh.mint(found.sshDestination ?? view.name);
    try {
      return await this.deps.pair(pairingLink(baseUrl, credential), label);
    } catch (error) {
      if (view.pairVia === "t3-cli" && error instanceof BridgeError && error.kind === "unauthorized") {
        throw new BridgeError(
          "unauthorized",
          `T3 at ${view.baseUrl} did not accept the pairing code minted for the base directory ${this.local.baseDir}: it serves another one. Start T3 Fleet with T3CODE_HOME set to that server's base directory, or pair with a link from T3.`,
        );
      }
      throw error;
    }
  }

  /**
   * The plain-HTTP check again, as Pair is pressed, on what ssh's config and the resolver say now:
   * the base URL the code goes to, pinned to the address just checked. A go-ahead covers only the
   * risk the user was shown; a host that moved since the scan is looked for again first.
   */
  private async recheck(found: Found, plainHttp: boolean): Promise<string> {
    const { view } = found;
    const deadline = this.deps.now() + this.lookMs;
    let baseUrl = view.baseUrl;
    let risk: string | null;
    if (view.source === "ssh") {
      const located = await this.locate(found.sshDestination ?? view.name, deadline);
      if ("error" in located) throw new BridgeError("unreachable", `${located.error} Nothing was minted or sent.`);
      baseUrl = httpBaseUrl(located.address, found.port);
      risk = sshRisk(located.host, located.resolved, located.address, baseUrl, await this.tailnetNow(located.address, deadline));
    } else {
      // A Tailscale peer's own address: private only while Tailscale here still runs and lists it.
      const address = new URL(view.baseUrl).hostname;
      risk = addressRisk(address, baseUrl, await this.tailnetNow(address, deadline));
    }
    if (risk && (!plainHttp || risk !== view.plainHttp)) throw plainHttpRefusal(risk);
    if (baseUrl !== view.baseUrl)
      throw new BridgeError(
        "stale",
        `${view.name} is now at ${baseUrl}, not at ${view.baseUrl} where Find machines found it. Nothing was minted or sent. Look again, then pair.`,
      );
    return baseUrl;
  }

  /** The tailnet addresses Tailscale here lists now, read only when `address` is in its range. */
  private async tailnetNow(address: string, deadline: number): Promise<Set<string>> {
    if (!isTailnetAddress(address)) return new Set();
    const left = deadline - this.deps.now();
    const look = await byDeadline(readTailscale(this.options.tailscaleCommand, this.options.env, Math.max(1, left) + 500), left, () => null);
    return new Set(look?.ok ? look.addresses : []);
  }

  /** `ssh -G` for the host, then its HostName looked up here, both within the deadline. */
  private async locate(host: string, deadline: number): Promise<Located> {
    const left = () => deadline - this.deps.now();
    const within = `within ${Math.round(this.lookMs / 1000)} s`;
    let resolved: ResolvedSshHost | null;
    try {
      // The command's own bound is a little later, so the deadline answers first and the command is killed.
      resolved = await byDeadline(this.ssh.resolve(host, Math.max(1, left()) + 500), left(), () => null);
    } catch (error) {
      return { host, error: error instanceof Error ? error.message : String(error) };
    }
    if (!resolved) return { host, error: `ssh -G ${host} did not answer ${within}.` };
    const { hostname } = resolved;
    const lookup = this.options.lookup ?? systemLookup;
    const addresses = isIP(hostname)
      ? [hostname]
      : await byDeadline(
          lookup(hostname).catch(() => []),
          left(),
          () => null,
        );
    if (!addresses) return { host, error: `${hostname} (the HostName of ${host}) did not resolve ${within}.` };
    const usable = addresses.filter((address) => isIP(address) !== 0).sort();
    // A name with a private and a public answer is reached at the private one: only that one is ever used.
    const address = usable.find((entry) => isLoopbackAddress(entry) || isTailnetAddress(entry)) ?? usable[0];
    if (!address) return { host, error: `${hostname} (the HostName of ${host}) does not resolve here.` };
    return { host, resolved, address };
  }

  private report(scan: Scan): DiscoveryReport {
    return {
      scannedAt: scan.scannedAt,
      nextScanAt: scan.scannedAt + this.minRescanMs,
      servers: [...scan.found.values()].map(({ view }) => ({ ...view, alreadyPaired: view.environmentId !== null && this.deps.isPaired(view.environmentId) })),
      notes: [...scan.notes],
      sshConfigHosts: [...scan.sshConfigHosts],
    };
  }

  private async run(key: string, extraPorts: number[], sshHosts: string[]): Promise<Scan> {
    const timeoutMs = this.options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
    const deadline = this.deps.now() + this.scanDeadlineMs;
    const remotePorts = [...new Set([T3_DEFAULT_PORT, ...extraPorts])];
    const notes: string[] = [];
    const found = new Map<string, Found>();
    const add = (entry: Found) => found.set(entry.view.id, entry);

    // Addresses come only from the sources: loopback, the tailnet's own list, the hosts the user named.
    // Every step answers by the deadline: a hung CLI or resolver is a note, not a hung search.
    const lookUntil = this.deps.now() + this.lookMs;
    const left = () => lookUntil - this.deps.now();
    const within = `within ${Math.round(this.lookMs / 1000)} s`;
    const [tailscale, resolvedSsh, sshConfigHosts] = await Promise.all([
      byDeadline(readTailscale(this.options.tailscaleCommand, this.options.env, Math.max(1, left()) + 500), left(), () => ({
        ok: false as const,
        note: `Tailscale: tailscale status did not answer ${within}.`,
      })),
      Promise.all(sshHosts.map((host) => this.locate(host, lookUntil))),
      byDeadline(this.ssh.configHosts(), left(), () => []),
    ]);
    type Job = { group: string; url: string; port: number };
    const jobs: Job[] = this.local.ports(extraPorts).map((port) => ({ group: "local", url: httpBaseUrl("127.0.0.1", port), port }));
    if (!tailscale.ok) notes.push(tailscale.note);
    const maxPeers = this.options.maxTailscalePeers ?? MAX_TAILSCALE_PEERS;
    const allPeers = tailscale.ok ? tailscale.peers : [];
    const tailnet = new Set(tailscale.ok ? tailscale.addresses : []);
    const peers = [...allPeers].sort((a, b) => Number(b.online) - Number(a.online) || a.name.localeCompare(b.name)).slice(0, maxPeers);
    if (allPeers.length > peers.length)
      notes.push(
        `Tailscale: ${allPeers.length.toLocaleString("en-US")} machines in the tailnet; only the first ${peers.length} (online first, by name) were looked at. Add another by its ssh host.`,
      );
    const peerIds = uniqueIds(peers.map((peer) => `tailscale:${peer.name}`));
    for (const [index, peer] of peers.entries()) {
      if (peer.online && peer.address) for (const port of remotePorts) jobs.push({ group: peerIds[index]!, url: httpBaseUrl(peer.address, port), port });
    }
    for (const entry of resolvedSsh) {
      if ("address" in entry) for (const port of remotePorts) jobs.push({ group: `ssh:${entry.host}`, url: httpBaseUrl(entry.address, port), port });
    }
    const probe = this.options.probe ?? probeDescriptor;
    const outcomes = await mapBounded(jobs, this.options.concurrency ?? DEFAULT_PROBE_CONCURRENCY, async (job) => {
      const remaining = deadline - this.deps.now();
      const outcome: ProbeOutcome =
        remaining > 0
          ? await probe(job.url, Math.min(timeoutMs, remaining))
          : {
              kind: "unprobed",
              baseUrl: job.url,
              reason: `Not looked at: one search stops after ${Math.round(this.scanDeadlineMs / 1000)} s. Add it by its ssh host, or pair it with a link from T3.`,
            };
      return { job, outcome };
    });
    const byGroup = new Map<string, { job: Job; outcome: ProbeOutcome }[]>();
    for (const result of outcomes) byGroup.set(result.job.group, [...(byGroup.get(result.job.group) ?? []), result]);

    // This machine: every port where something answers is listed; nothing is listed where nothing answers.
    const t3 = this.local.t3Executable();
    for (const { job, outcome } of byGroup.get("local") ?? []) {
      if (outcome.kind === "nothing" || outcome.kind === "unprobed") continue;
      const name = job.port === T3_DEFAULT_PORT ? "This machine" : `This machine (port ${job.port})`;
      add(
        foundFrom(
          `local:${job.port}`,
          "local",
          name,
          job.port,
          outcome,
          null,
          t3 ? "t3-cli" : null,
          t3 ? null : "The t3 command is not on this machine's PATH, so a pairing code cannot be minted here. Pair with a link from T3 instead.",
        ),
      );
    }
    if (![...found.values()].some((entry) => entry.view.source === "local"))
      notes.push(`This machine: no T3 server answers on port ${this.local.ports(extraPorts).join(", ")}.`);

    for (const [index, peer] of peers.entries()) {
      const id = peerIds[index]!;
      if (!peer.online || !peer.address) {
        add({
          view: {
            id,
            source: "tailscale",
            name: peer.name,
            baseUrl: httpBaseUrl(peer.address ?? peer.name, T3_DEFAULT_PORT),
            label: null,
            serverVersion: null,
            protocol: null,
            environmentId: null,
            pairVia: null,
            reason: peer.online ? "No Tailscale IPv4 address (100.64.0.0/10); not probed." : "Offline in Tailscale; not probed.",
            plainHttp: null,
          },
          port: T3_DEFAULT_PORT,
          sshDestination: null,
        });
        continue;
      }
      const best = bestOutcome(byGroup.get(id) ?? []);
      // The Tailscale address is WireGuard-encrypted end to end: plain HTTP over it stays private.
      add(
        foundFrom(
          id,
          "tailscale",
          peer.name,
          best.job.port,
          best.outcome,
          peer.sshDestination,
          peer.sshDestination ? "ssh" : null,
          peer.sshDestination ? null : "This peer's name is not one ssh can be given safely.",
        ),
      );
    }
    for (const entry of resolvedSsh) {
      const id = `ssh:${entry.host}`;
      if ("error" in entry) {
        add({
          view: {
            id,
            source: "ssh",
            name: entry.host,
            baseUrl: "",
            label: null,
            serverVersion: null,
            protocol: null,
            environmentId: null,
            pairVia: null,
            reason: entry.error,
            plainHttp: null,
          },
          port: T3_DEFAULT_PORT,
          sshDestination: entry.host,
        });
        continue;
      }
      const best = bestOutcome(byGroup.get(id) ?? []);
      const risk = sshRisk(entry.host, entry.resolved, entry.address, best.outcome.baseUrl, tailnet);
      add(foundFrom(id, "ssh", entry.host, best.job.port, best.outcome, entry.host, "ssh", null, risk));
    }
    return { key, scannedAt: this.deps.now(), found, notes, sshConfigHosts };
  }
}

/** The most useful answer among one host's ports: T3 first, then what answered instead. */
function bestOutcome<T extends { outcome: ProbeOutcome }>(results: T[]): T {
  const rank: Record<ProbeOutcome["kind"], number> = { t3: 0, incompatible: 1, "not-t3": 2, slow: 3, unprobed: 4, nothing: 5 };
  return [...results].sort((a, b) => rank[a.outcome.kind] - rank[b.outcome.kind])[0]!;
}

function foundFrom(
  id: string,
  source: FoundServer["source"],
  name: string,
  port: number,
  outcome: ProbeOutcome,
  sshDestination: string | null,
  pairVia: FoundServer["pairVia"],
  cannotMint: string | null,
  plainHttp: string | null = null,
): Found {
  const base = { id, source, name, baseUrl: outcome.baseUrl, label: null, serverVersion: null, protocol: null, environmentId: null, plainHttp: null };
  if (outcome.kind === "t3") {
    const { descriptor } = outcome;
    return {
      view: {
        ...base,
        label: saneLabel(descriptor.label, outcome.baseUrl),
        serverVersion: saneLabel(descriptor.serverVersion, outcome.baseUrl),
        protocol: outcome.protocol,
        environmentId: descriptor.environmentId,
        pairVia: cannotMint ? null : pairVia,
        reason: cannotMint,
        plainHttp: cannotMint ? null : plainHttp,
      },
      port,
      sshDestination,
    };
  }
  return { view: { ...base, pairVia: null, reason: outcome.reason }, port, sshDestination };
}

/** Ids unique within a scan: two peers may clean to the same name. */
function uniqueIds(ids: string[]): string[] {
  const seen = new Map<string, number>();
  return ids.map((id) => {
    const count = (seen.get(id) ?? 0) + 1;
    seen.set(id, count);
    return count === 1 ? id : `${id} (${count})`;
  });
}

/**
 * Why pairing an ssh host at `address` (its `ssh -G` HostName, looked up here) would put the pairing
 * code and the token on plain HTTP others may read; null when that is loopback or the tailnet, reached directly.
 */
export function sshRisk(host: string, resolved: ResolvedSshHost, address: string, baseUrl: string, tailnet: ReadonlySet<string>): string | null {
  if (resolved.proxy)
    return `ssh reaches ${host} through ${resolved.proxy}, so ${resolved.hostname} as seen from here may not be the machine ssh logs into, and the pairing code and the token would go to it over plain HTTP.`;
  return addressRisk(address, baseUrl, tailnet);
}

/**
 * The same for an address reached directly. `tailnet`: the addresses Tailscale here lists; one in
 * Tailscale's range that it does not list (Tailscale down, another network's CGNAT) leaves by the
 * default route, unencrypted.
 */
function addressRisk(address: string, baseUrl: string, tailnet: ReadonlySet<string>): string | null {
  if (isLoopbackAddress(address) || tailnet.has(address)) return null;
  if (isTailnetAddress(address))
    return `T3 at ${baseUrl} is in Tailscale's range, but Tailscale here is not running or does not list it, so the pairing code and the token would not go through Tailscale: they would cross your network over plain HTTP, unencrypted.`;
  return `T3 at ${baseUrl} is reached over plain HTTP on your network, not through ssh or Tailscale: the pairing code and the token it is exchanged for would cross it unencrypted, readable by anyone on it.`;
}

function plainHttpRefusal(risk: string): BridgeError {
  return new BridgeError(
    "plain-http",
    `${risk} Nothing was minted or sent. Pair over plain HTTP only if you trust that network, or pair with a link from T3 over Tailscale or HTTPS.`,
  );
}

/** "90 s", "3 minutes". */
function ago(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} minutes`;
}

async function systemLookup(hostname: string): Promise<string[]> {
  return (await lookup(hostname, { all: true })).map((entry) => entry.address);
}
