// `npm run demo:discovery`: Find machines on a fresh fleet, in a terminal. Builds the discovery
// tests' world inside a private network namespace (the real T3 0.0.42 here, Tailscale peers and an
// ssh host in namespaces of their own; see integration/discovery/topology.testkit.ts),
// prints what Find machines sees, pairs every machine it can with one action each, and shows the
// reason for each one it cannot. Run through scripts/discovery-netns.sh (root).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DiscoveryReport } from "../shared/bridge/contract";
import { describeError } from "../shared/bridge/redact";
import { discoveryReportText } from "../electron/fleet/discovery/report-text";
import { SSH_HOSTS, startTestTailnet } from "../integration/discovery/topology.testkit";
import { MemorySecretStore } from "../electron/fleet/secrets";
import { FleetService } from "../electron/fleet/service";

console.log("Starting this machine's T3 and the test tailnet (real T3 0.0.42 servers and sshd in network namespaces)…");
const world = await startTestTailnet();
const dataDir = await mkdtemp(join(tmpdir(), "t3-discovery-demo-"));
const service = await FleetService.start({ dataDir, secrets: new MemorySecretStore(), discovery: world.discovery });
try {
  const report = (await service.request("discovery.scan", { ports: [], sshHosts: SSH_HOSTS })) as DiscoveryReport;
  console.log(`\n${discoveryReportText(report)}\n`);
  for (const server of report.servers.filter((entry) => entry.pairVia !== null)) {
    const started = Date.now();
    try {
      const paired = (await service.request("discovery.pair", { id: server.id })) as { label: string };
      console.log(`Pair ${server.name}: paired as "${paired.label}" (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    } catch (error) {
      console.log(`Pair ${server.name}: not paired — ${describeError(error)}`);
    }
  }
  const environments = service.snapshot().environments;
  console.log(`\nThe fleet now has ${environments.length} machines: ${environments.map((env) => `${env.label} (${env.connection.phase})`).join(", ")}`);
} finally {
  await service.stop();
  await world.stop();
  await rm(dataDir, { recursive: true, force: true });
}
