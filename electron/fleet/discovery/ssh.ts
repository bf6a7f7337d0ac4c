// SSH: pairs a machine the user reaches with their own `ssh` (their keys, agent and config) by
// running `t3 auth pairing create --json` there. BatchMode: ssh never prompts for a password or a
// host key on the fleet's behalf. The pairing code arrives on ssh's stdout, stays in memory and
// goes straight to pairing; it never touches disk or a command line.
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { SshDestination } from "../../../shared/bridge/contract";
import { BridgeError } from "../bridge-error";
import { type PairingCredential, decodePairingCredential } from "./pairing-credential";
import { CommandMissingError, lastLine, runCommand } from "./run-command";

export interface SshOptions {
  /** The ssh client (default "ssh" on PATH). */
  command?: string;
  /** An ssh config file to use instead of ~/.ssh/config (`ssh -F`); tests use their own. */
  configFile?: string;
  connectTimeoutS?: number;
  env?: NodeJS.ProcessEnv;
}

/** Marker the remote command prints when `t3` is not on the remote PATH. */
const NO_T3_MARKER = "t3-fleet: no t3 on PATH";
// Run by the remote user's shell; `sh -c` so fish or other login shells run it the same way.
const REMOTE_MINT = `sh -c 'command -v t3 >/dev/null 2>&1 || { echo "${NO_T3_MARKER}" >&2; exit 127; }; exec t3 auth pairing create --json --label "T3 Fleet"'`;
/** ssh plus T3's CLI, which opens T3's state on each run (over 10 s on a busy machine). */
const MINT_TIMEOUT_MS = 90_000;

export interface ResolvedSshHost {
  destination: string;
  hostname: string;
  /** How ssh reaches the host when not directly ("ProxyJump bastion", "a ProxyCommand"): then `hostname` is as seen from there. */
  proxy: string | null;
}

export class Ssh {
  constructor(private readonly options: SshOptions = {}) {}

  private baseArgs(): string[] {
    return this.options.configFile ? ["-F", this.options.configFile] : [];
  }

  /** Concrete `Host` names in the ssh config (no patterns), to offer in the window. */
  async configHosts(): Promise<string[]> {
    const file = this.options.configFile ?? join(homedir(), ".ssh/config");
    const text = await readFile(file, "utf8").catch(() => "");
    const hosts = new Set<string>();
    for (const line of text.slice(0, 1 << 20).split(/\r?\n/)) {
      const match = /^\s*host\s+(.+)$/i.exec(line);
      if (!match) continue;
      for (const name of match[1]!.split(/\s+/)) {
        if (!/[*?!]/.test(name) && SshDestination.safeParse(name).success) hosts.add(name);
      }
    }
    return [...hosts].slice(0, 200);
  }

  /** The address ssh would connect to for this destination (`ssh -G`: reads the config, connects nowhere). */
  async resolve(destination: string, timeoutMs = 10_000): Promise<ResolvedSshHost> {
    const checked = checkedDestination(destination);
    let result;
    try {
      result = await runCommand(this.options.command ?? "ssh", [...this.baseArgs(), "-G", "--", checked], {
        timeoutMs,
        ...(this.options.env && { env: this.options.env }),
      });
    } catch (error) {
      if (error instanceof CommandMissingError) throw new BridgeError("unavailable", "The ssh command is not installed on this machine.");
      throw error;
    }
    const hostname = /^hostname (\S+)$/m.exec(result.stdout)?.[1];
    if (result.code !== 0 || !hostname) throw new BridgeError("invalid", `ssh cannot use the host ${checked}: ${lastLine(result.stderr) || "no hostname"}`);
    const jump = /^proxyjump (\S+)$/m.exec(result.stdout)?.[1];
    const command = /^proxycommand (.+)$/m.exec(result.stdout)?.[1];
    const proxy = jump && jump !== "none" ? `ProxyJump ${jump}` : command && command !== "none" ? "a ProxyCommand" : null;
    return { destination: checked, hostname, proxy };
  }

  /** `t3 auth pairing create --json` on the remote machine, over the user's ssh. */
  async mint(destination: string): Promise<PairingCredential> {
    const checked = checkedDestination(destination);
    const args = [...this.baseArgs(), "-T", "-o", "BatchMode=yes", "-o", `ConnectTimeout=${this.options.connectTimeoutS ?? 10}`, "--", checked, REMOTE_MINT];
    let result;
    try {
      result = await runCommand(this.options.command ?? "ssh", args, { timeoutMs: MINT_TIMEOUT_MS, ...(this.options.env && { env: this.options.env }) });
    } catch (error) {
      if (error instanceof CommandMissingError) throw new BridgeError("unavailable", "The ssh command is not installed on this machine.");
      throw error;
    }
    if (result.timedOut) throw new BridgeError("timeout", `ssh ${checked} did not finish within ${MINT_TIMEOUT_MS / 1000} s.`);
    if (result.code !== 0) throw sshFailure(checked, result.code, result.stderr);
    const credential = decodePairingCredential(result.stdout);
    if (!credential)
      throw new BridgeError(
        "not-t3",
        `\`t3 auth pairing create --json\` on ${checked} printed something that is not a pairing code (is its t3 older than 0.0.20?).`,
      );
    return credential;
  }
}

function checkedDestination(destination: string): string {
  const parsed = SshDestination.safeParse(destination);
  if (!parsed.success) throw new BridgeError("invalid", parsed.error.issues[0]?.message ?? "Not an ssh host.");
  return parsed.data;
}

/** ssh's and the remote command's failures in words a user can act on. */
export function sshFailure(destination: string, code: number | null, stderr: string): BridgeError {
  if (stderr.includes(NO_T3_MARKER)) {
    return new BridgeError(
      "unavailable",
      `t3 is not on the PATH of ${destination} for ssh sessions: install T3 there, or add its folder to PATH in the remote shell's non-interactive start-up file.`,
    );
  }
  if (/REMOTE HOST IDENTIFICATION HAS CHANGED/.test(stderr)) {
    return new BridgeError(
      "host-key-changed",
      `The host key of ${destination} has changed since you last connected, so ssh refused it (this can mean someone is intercepting the connection). T3 Fleet did not pair. Check the new key with its owner, then fix known_hosts (ssh-keygen -R) yourself.`,
    );
  }
  if (/Host key verification failed|No .* host key is known/i.test(stderr)) {
    return new BridgeError(
      "host-key-unknown",
      `ssh does not know the host key of ${destination} yet. Connect once with ssh in a terminal to check and accept it, then pair again.`,
    );
  }
  if (/Permission denied/i.test(stderr)) {
    return new BridgeError(
      "unauthorized",
      `ssh could not log in to ${destination} with your keys or agent (T3 Fleet never asks for a password). Check \`ssh ${destination}\` works without a prompt.`,
    );
  }
  if (/Could not resolve hostname|Connection refused|timed out|No route to host|Network is unreachable/i.test(stderr)) {
    return new BridgeError("unreachable", `ssh could not reach ${destination}: ${lastLine(stderr)}`);
  }
  return new BridgeError("server", `Running t3 over ssh on ${destination} failed (exit ${code ?? "signal"}): ${lastLine(stderr) || "no message"}`);
}
