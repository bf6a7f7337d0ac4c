// Find machines: what the last scan found, the ports and ssh hosts the user added, and each
// pairing's outcome. Changed only through these actions; the bridge calls are in
// discovery-commands.ts.
import { create } from "zustand";
import type { DiscoveryReport } from "../../../shared/bridge/contract";

export interface DiscoveryState {
  open: boolean;
  report: DiscoveryReport | null;
  /** Extra ports to look on, besides T3's default 3773. */
  ports: number[];
  /** ssh hosts the user named. */
  sshHosts: string[];
  /** Servers paired from this view, by found-server id: the fleet's label for them. */
  paired: Record<string, string>;
  pairing: string | null;
  show(open: boolean): void;
  scanned(report: DiscoveryReport): void;
  addPort(port: number): void;
  removePort(port: number): void;
  addSshHost(host: string): void;
  removeSshHost(host: string): void;
  pairingStarted(id: string | null): void;
  pairedAs(id: string, label: string): void;
}

export const useDiscovery = create<DiscoveryState>()((set) => ({
  open: false,
  report: null,
  ports: [],
  sshHosts: [],
  paired: {},
  pairing: null,
  show: (open) => set({ open }),
  scanned: (report) => set({ report }),
  addPort: (port) => set((state) => (state.ports.includes(port) ? state : { ports: [...state.ports, port] })),
  removePort: (port) => set((state) => ({ ports: state.ports.filter((entry) => entry !== port) })),
  addSshHost: (host) => set((state) => (state.sshHosts.includes(host) ? state : { sshHosts: [...state.sshHosts, host] })),
  removeSshHost: (host) => set((state) => ({ sshHosts: state.sshHosts.filter((entry) => entry !== host) })),
  pairingStarted: (id) => set({ pairing: id }),
  pairedAs: (id, label) => set((state) => ({ paired: { ...state.paired, [id]: label } })),
}));
