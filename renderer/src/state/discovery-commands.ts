// Find machines (the store is discovery.ts): scans and the one-action pairing of a found server.
import { useDiscovery } from "./discovery";
import { requireBridge, run } from "./requests";

export const discoveryCommands = {
  /** Looks again with the ports and ssh hosts the user added; the service answers a repeat within minutes from its last scan. */
  async scan(refresh = false): Promise<void> {
    const { ports, sshHosts } = useDiscovery.getState();
    const report = await run("discovery", () => requireBridge().request("discovery.scan", { ports, sshHosts, refresh }));
    if (report) useDiscovery.getState().scanned(report);
  },
  /** One action: the service mints a pairing code with T3's CLI (here or over ssh) and pairs. `plainHttp`: the user accepted the risk the row states. */
  async pair(id: string, plainHttp = false): Promise<void> {
    useDiscovery.getState().pairingStarted(id);
    try {
      const paired = await run(`discovery:${id}`, () => requireBridge().request("discovery.pair", { id, ...(plainHttp && { plainHttp }) }));
      if (paired) useDiscovery.getState().pairedAs(id, paired.label);
    } finally {
      useDiscovery.getState().pairingStarted(null);
    }
  },
};
