// "This machine": a T3 server on loopback (T3's default port, T3CODE_PORT, the ports the user
// adds; T3's desktop app serves on 3773 too), paired by minting a pairing code with T3's own CLI,
// `t3 auth pairing create --json`, for the base directory it serves. T3's database and files are
// never read: the CLI is T3's supported way in.
import { accessSync, constants } from "node:fs";
import { homedir } from "node:os";
import { delimiter, isAbsolute, join } from "node:path";
import { BridgeError } from "../bridge-error";
import { type PairingCredential, decodePairingCredential } from "./pairing-credential";
import { type ProbeOutcome, T3_DEFAULT_PORT, httpBaseUrl, probeDescriptor } from "./probe";
import { CommandMissingError, lastLine, runCommand } from "./run-command";

export interface LocalDiscoveryOptions {
  /** The `t3` executable: a path, or a name looked up on PATH (default "t3"). */
  t3Command?: string;
  /** T3's base directory (default: T3CODE_HOME, else ~/.t3, as T3 itself resolves it). */
  baseDir?: string;
  /** Ports T3 serves on here besides the default (T3CODE_PORT is added when set). */
  ports?: number[];
  env?: NodeJS.ProcessEnv;
}

/** The CLI opens T3's state on each run: over 10 s on a busy two-core machine. */
const MINT_TIMEOUT_MS = 60_000;

export class LocalDiscovery {
  private readonly env: NodeJS.ProcessEnv;
  constructor(private readonly options: LocalDiscoveryOptions = {}) {
    this.env = options.env ?? process.env;
  }

  get baseDir(): string {
    return this.options.baseDir ?? this.env.T3CODE_HOME ?? join(homedir(), ".t3");
  }

  /** The ports to look at on loopback, in order, without repeats. */
  ports(extra: readonly number[]): number[] {
    const fromEnv = Number(this.env.T3CODE_PORT);
    const candidates = [
      ...(Number.isInteger(fromEnv) && fromEnv > 0 && fromEnv < 65_536 ? [fromEnv] : []),
      T3_DEFAULT_PORT,
      ...(this.options.ports ?? []),
      ...extra,
    ];
    return [...new Set(candidates)];
  }

  probe(extraPorts: readonly number[], timeoutMs: number): Promise<ProbeOutcome[]> {
    return Promise.all(this.ports(extraPorts).map((port) => probeDescriptor(httpBaseUrl("127.0.0.1", port), timeoutMs)));
  }

  /** The `t3` executable this machine has, or null (a reason to show instead of a Pair button). */
  t3Executable(): string | null {
    const command = this.options.t3Command ?? "t3";
    if (isAbsolute(command)) return isExecutable(command) ? command : null;
    for (const dir of (this.env.PATH ?? "").split(delimiter).filter(Boolean)) {
      const candidate = join(dir, command);
      if (isExecutable(candidate)) return candidate;
    }
    return null;
  }

  /** `t3 auth pairing create --json` for the base directory and port the server serves. */
  async mint(port: number): Promise<PairingCredential> {
    const executable = this.t3Executable();
    if (!executable)
      throw new BridgeError(
        "unavailable",
        "The t3 command is not on this machine's PATH, so T3 Fleet cannot mint a pairing code here. Pair with a link from T3 instead.",
      );
    let result;
    try {
      result = await runCommand(executable, ["auth", "pairing", "create", "--json", "--base-dir", this.baseDir], {
        timeoutMs: MINT_TIMEOUT_MS,
        env: { ...this.env, T3CODE_PORT: String(port), T3CODE_TELEMETRY_ENABLED: "false" },
      });
    } catch (error) {
      if (error instanceof CommandMissingError) throw new BridgeError("unavailable", `The t3 command at ${executable} could not be run.`);
      throw error;
    }
    if (result.timedOut) throw new BridgeError("timeout", `\`t3 auth pairing create\` did not finish within ${MINT_TIMEOUT_MS / 1000} s.`);
    if (result.code !== 0)
      throw new BridgeError("server", `\`t3 auth pairing create\` failed (exit ${result.code}): ${lastLine(result.stderr) || "no message"}`);
    const credential = decodePairingCredential(result.stdout);
    if (!credential) throw new BridgeError("not-t3", "`t3 auth pairing create --json` printed something that is not a pairing code.");
    return credential;
  }
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
