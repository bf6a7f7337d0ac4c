// Whether anything in this network namespace tried to reach an address outside it. The real-server
// suites run with only loopback up (scripts/realt3.sh), so any connection or datagram to another
// address (a telemetry host, an update check, a DNS server from /etc/resolv.conf) fails in the kernel
// with "network unreachable", which the namespace's own IP counters record as OutNoRoutes; name
// lookups go to a recorder on loopback (`LookupRecorder`). Neither sends anything anywhere.
import { type Socket, createSocket } from "node:dgram";
import { readFile } from "node:fs/promises";

export interface OutsideAttempts {
  ipv4: number;
  ipv6: number;
}

/** The value of `field` in the `prefix` rows of a /proc/net/snmp-style table (header row, then values). */
function snmpField(text: string, prefix: string, field: string): number {
  const rows = text.split("\n").filter((line) => line.startsWith(`${prefix}:`));
  const [header, values] = rows.map((line) => line.split(/\s+/).slice(1));
  const index = header?.indexOf(field) ?? -1;
  if (!header || !values || index === -1) throw new Error(`/proc/net/snmp has no ${prefix} ${field}`);
  return Number(values[index]);
}

/** Packets this namespace could not route (attempts to reach an address outside it), so far. */
export async function outsideAttempts(): Promise<OutsideAttempts> {
  const ipv4 = snmpField(await readFile("/proc/net/snmp", "utf8"), "Ip", "OutNoRoutes");
  const snmp6 = await readFile("/proc/net/snmp6", "utf8").catch(() => "");
  const ipv6 = Number(/^Ip6OutNoRoutes\s+(\d+)/m.exec(snmp6)?.[1] ?? 0);
  return { ipv4, ipv6 };
}

/** Whether this process runs in a namespace with loopback only (the suites refuse to run elsewhere). */
export async function onlyLoopback(): Promise<boolean> {
  const routes = await readFile("/proc/net/route", "utf8");
  const route6 = await readFile("/proc/net/ipv6_route", "utf8").catch(() => "");
  const ipv4Routes = routes
    .split("\n")
    .slice(1)
    .filter((line) => line.trim() !== "");
  const ipv6NonLoopback = route6.split("\n").filter((line) => line.trim() !== "" && !/\blo$/.test(line.trim()));
  return ipv4Routes.length === 0 && ipv6NonLoopback.length === 0;
}

/**
 * A name server on 127.0.0.1:53 that records every name asked of it and answers "no such name".
 * scripts/realt3.sh points the namespace's /etc/resolv.conf here, so a lookup of an outside host
 * (the first step of reaching it) is recorded by name instead of failing unseen.
 */
export class LookupRecorder {
  readonly names: string[] = [];

  private constructor(private readonly socket: Socket) {}

  static async start(): Promise<LookupRecorder> {
    const socket = createSocket("udp4");
    const recorder = new LookupRecorder(socket);
    socket.on("message", (query, peer) => {
      const name = questionName(query);
      if (name === null) return;
      recorder.names.push(name);
      // The query echoed back as a response (QR), recursion available, NXDOMAIN.
      const answer = Buffer.from(query);
      answer[2] = 0x80 | (query[2]! & 0x01);
      answer[3] = 0x83;
      socket.send(answer, peer.port, peer.address);
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(53, "127.0.0.1", () => resolve());
    });
    return recorder;
  }

  /** Names other than this machine's own (localhost and the like). */
  outsideNames(): string[] {
    return [...new Set(this.names.filter((name) => !/^(localhost|ip6-localhost|ip6-loopback)(\.|$)/i.test(name)))];
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

/** The question's name of a DNS query (RFC 1035 §4.1.2), or null for a malformed one. */
function questionName(query: Buffer): string | null {
  const labels: string[] = [];
  let offset = 12;
  while (offset < query.length) {
    const length = query[offset]!;
    if (length === 0) return labels.join(".");
    if (length > 63 || offset + 1 + length > query.length) return null;
    labels.push(query.subarray(offset + 1, offset + 1 + length).toString("ascii"));
    offset += 1 + length;
  }
  return null;
}
