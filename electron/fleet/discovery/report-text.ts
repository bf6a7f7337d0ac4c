// Find machines as plain text, for `./fleet serve -- --discover`.
import type { DiscoveryReport, FoundServer } from "../../../shared/bridge/contract";

const SOURCE: Record<FoundServer["source"], string> = { local: "this machine", tailscale: "tailscale", ssh: "ssh" };

function state(server: FoundServer): string {
  if (server.pairVia === null) return `cannot pair: ${server.reason ?? "unknown"}`;
  if (server.alreadyPaired) return "already paired (Pair again from Find machines)";
  if (server.plainHttp) return `can pair over plain HTTP once you confirm it in Find machines: ${server.plainHttp}`;
  return server.pairVia === "t3-cli" ? "can pair (t3 on this machine)" : "can pair (t3 over ssh)";
}

export function discoveryReportText(report: DiscoveryReport): string {
  const lines = [`Find machines (${new Date(report.scannedAt).toISOString()}): ${report.servers.length} found`];
  for (const server of report.servers) {
    const t3 = server.serverVersion ? `T3 ${server.serverVersion}, protocol ${server.protocol ?? "?"}${server.label ? `, "${server.label}"` : ""}` : "no T3";
    lines.push(`  [${SOURCE[server.source]}] ${server.name}  ${server.baseUrl || "-"}  ${t3}  — ${state(server)}`);
  }
  for (const note of report.notes) lines.push(`  note: ${note}`);
  if (report.sshConfigHosts.length > 0) lines.push(`  ssh hosts in your ssh config (add with --ssh HOST): ${report.sshConfigHosts.join(", ")}`);
  return lines.join("\n");
}
