// Whether anything in this network namespace tried to reach an address outside it. The real-server
// suites run with only loopback up (scripts/realt3.sh), so any connection or datagram to another
// address (a telemetry host, an update check, a DNS server from /etc/resolv.conf) fails in the kernel
// with "network unreachable", which the namespace's own IP counters record as OutNoRoutes. Reading
// them sends nothing anywhere.
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
  const ipv4Routes = routes.split("\n").slice(1).filter((line) => line.trim() !== "");
  const ipv6NonLoopback = route6.split("\n").filter((line) => line.trim() !== "" && !/\blo$/.test(line.trim()));
  return ipv4Routes.length === 0 && ipv6NonLoopback.length === 0;
}
