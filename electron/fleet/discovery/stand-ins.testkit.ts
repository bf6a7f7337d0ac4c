// Stand-ins for the discovery tests that run no network: a `tailscale` printing a status, an `ssh`
// answering `-G HOST` from files the test may rewrite between calls (or hanging, for a host with a
// `hang-HOST` file) and counting each other run (a mint) before printing a pairing credential, and
// the probe's answer for a T3 server.
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProbeOutcome } from "./probe";

export interface StandIns {
  env: NodeJS.ProcessEnv;
  mints: () => Promise<number>;
  /** What `tailscale status --json` prints from now on. */
  statusAs: (status: unknown) => Promise<void>;
  /** What `ssh -G host` prints from now on (its config lines). */
  resolveAs: (host: string, lines: string) => Promise<void>;
  remove: () => Promise<void>;
}

/** `status` "hang": the stand-in `tailscale` never answers. */
export async function standIns(status: unknown, resolved: Record<string, string>, hanging: string[] = []): Promise<StandIns> {
  const dir = await mkdtemp(join(tmpdir(), "t3-discovery-standins-"));
  await writeFile(join(dir, "status.json"), JSON.stringify(status));
  const tailscale = status === "hang" ? "exec sleep 60" : `exec cat ${JSON.stringify(join(dir, "status.json"))}`;
  await writeFile(join(dir, "tailscale"), `#!/bin/sh\n${tailscale}\n`);
  const resolveAs = (host: string, lines: string) => writeFile(join(dir, `G-${host}`), lines);
  for (const [host, lines] of Object.entries(resolved)) await resolveAs(host, lines);
  for (const host of hanging) await writeFile(join(dir, `hang-${host}`), "");
  const credential = JSON.stringify({ id: "pairing-1", credential: "QKKAY73L3Y4A" });
  const at = JSON.stringify(dir);
  await writeFile(
    join(dir, "ssh"),
    [
      "#!/bin/sh",
      'for arg; do last="$arg"; done',
      `if [ "$1" = "-G" ] || [ "$3" = "-G" ]; then [ -e ${at}/hang-"$last" ] && exec sleep 60; exec cat ${at}/G-"$last"; fi`,
      `echo mint >> ${JSON.stringify(join(dir, "mints"))}`,
      `echo '${credential}'`,
      "",
    ].join("\n"),
  );
  await chmod(join(dir, "tailscale"), 0o755);
  await chmod(join(dir, "ssh"), 0o755);
  return {
    env: { PATH: `${dir}:/usr/bin:/bin`, HOME: dir },
    mints: async () => (await readFile(join(dir, "mints"), "utf8").catch(() => "")).split("\n").filter(Boolean).length,
    statusAs: (next) => writeFile(join(dir, "status.json"), JSON.stringify(next)),
    resolveAs,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A T3 descriptor answer for `baseUrl`, as the real probe would return it (no network here). */
export function t3At(baseUrl: string): ProbeOutcome {
  return {
    kind: "t3",
    baseUrl,
    protocol: 1,
    descriptor: { environmentId: `env-${new URL(baseUrl).hostname}`, label: "box", serverVersion: "0.0.42", capabilities: {} },
  };
}

/** A running tailnet whose one peer, `box`, has the tailnet address `address`. */
export function runningTailnet(address: string): unknown {
  return { BackendState: "Running", Peer: { k: { HostName: "box", DNSName: "box.tail7f3a.ts.net.", TailscaleIPs: [address], Online: true } } };
}
