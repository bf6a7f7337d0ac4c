// A small private network for the discovery tests: "hosts" are network namespaces this test
// creates (each held open by a shell in its own `unshare --net`), joined to the test's namespace
// by a veth pair with addresses assigned inside them. Each host can run the real T3 executable,
// Debian's sshd on a test port (generated host key, a test user key, a temporary authorized_keys),
// a server that accepts and never answers, or a web server that is not T3. Nothing here can reach
// an address outside these namespaces: the suite itself runs inside `unshare --net`
// (scripts/discovery-netns.sh).
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { sharedDir, t3InstallDir } from "../realt3/harness.testkit";

const run = promisify(execFile);
const SSHD = "/usr/sbin/sshd";

export function t3Executable(): string {
  const executable = join(t3InstallDir(), "package/t3");
  if (!existsSync(executable)) throw new Error(`The T3 executable is not installed at ${executable}: run \`npx tsx integration/realt3/install.ts\` first`);
  return executable;
}

/**
 * Spawns and waits until `marker` appears in its output; fails (never skips) when it exits or does
 * not get there in `timeoutMs` (T3's first start runs its migrations: slow on a busy two-core machine).
 */
async function startUntil(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  marker: RegExp,
  what: string,
  timeoutMs = 180_000,
): Promise<{ child: ChildProcess; log: () => string }> {
  const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const onData = (chunk: Buffer) => (output += chunk.toString("utf8"));
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => done(new Error(`${what} did not start within ${timeoutMs} ms:\n${output.slice(-3000)}`)), timeoutMs);
    const check = () => marker.test(output) && done();
    const onExit = (code: number | null, signal: string | null) =>
      done(new Error(`${what} exited (${code ?? signal}) before it was ready:\n${output.slice(-3000)}`));
    const onError = (error: Error) => done(new Error(`${what} could not be started: ${error.message}`));
    const done = (error?: Error) => {
      clearTimeout(timer);
      child.stdout!.off("data", check);
      child.stderr!.off("data", check);
      child.off("exit", onExit);
      child.off("error", onError);
      if (error) fail(error);
      else ready();
    };
    child.stdout!.on("data", check);
    child.stderr!.on("data", check);
    child.once("exit", onExit);
    child.once("error", onError);
  });
  return { child, log: () => output };
}

function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    child.once("exit", () => done());
    child.kill("SIGKILL");
  });
}

export class NamespaceHost {
  private readonly children: ChildProcess[] = [];
  private constructor(
    readonly name: string,
    /** This host's address inside its namespace. */
    readonly address: string,
    /** Working folder of this host (T3 base dir, sshd files). */
    readonly root: string,
    private readonly holder: ChildProcess,
  ) {}

  /** A new namespace holding `address`/24, with the test's side of the link at `.1` of that subnet. */
  static async create(name: string, address: string, link: string): Promise<NamespaceHost> {
    // Held by a shell waiting on a pipe from this process: if the test dies, the pipe closes and the namespace goes.
    const holder = spawn("unshare", ["--net", "sh", "-c", "read _"], { stdio: ["pipe", "ignore", "ignore"] });
    await new Promise<void>((ready, fail) => {
      holder.once("spawn", ready);
      holder.once("error", fail);
    });
    const root = await mkdtemp(join(tmpdir(), `t3-discovery-${name}-`));
    const host = new NamespaceHost(name, address, root, holder);
    const gateway = address.replace(/\.\d+$/, ".1");
    // The holder's namespace is new once `unshare` has exec'd the shell.
    await waitFor(async () => (await readlinkNs(holder.pid!)) !== (await readlinkNs(process.pid)), `the namespace of ${name}`);
    await run("ip", ["link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", String(holder.pid)]);
    await run("ip", ["addr", "add", `${gateway}/24`, "dev", link]);
    await run("ip", ["link", "set", link, "up"]);
    await host.exec("ip", ["link", "set", "lo", "up"]);
    await host.exec("ip", ["addr", "add", `${address}/24`, "dev", "eth0"]);
    await host.exec("ip", ["link", "set", "eth0", "up"]);
    return host;
  }

  private nsenter(command: string, args: string[]): [string, string[]] {
    return ["nsenter", [`--net=/proc/${this.holder.pid}/ns/net`, "--", command, ...args]];
  }

  exec(command: string, args: string[]): Promise<{ stdout: string }> {
    const [file, argv] = this.nsenter(command, args);
    return run(file, argv);
  }

  /** Starts a long-running process in this namespace and waits for its ready line. */
  async start(command: string, args: string[], env: NodeJS.ProcessEnv, marker: RegExp, what: string): Promise<() => string> {
    const [file, argv] = this.nsenter(command, args);
    const { child, log } = await startUntil(file, argv, env, marker, `${what} on ${this.name}`);
    this.children.push(child);
    return log;
  }

  /** The real T3 server on 0.0.0.0:3773 of this host, with its own HOME and base directory. */
  async startT3(): Promise<{ baseDir: string; bin: string }> {
    const bin = join(this.root, "bin");
    const codexBin = join(this.root, "codex-bin");
    for (const folder of [bin, codexBin, join(this.root, "home"), join(this.root, "work")]) await mkdir(folder, { recursive: true });
    await symlink(t3Executable(), join(bin, "t3"));
    await writeFile(
      join(codexBin, "codex"),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(sharedDir(), "tools/fake-codex.mjs"))} "$@"\n`,
    );
    await chmod(join(codexBin, "codex"), 0o755);
    const baseDir = join(this.root, "base");
    await this.start(
      t3Executable(),
      ["serve", "--host", "0.0.0.0", "--port", "3773", "--base-dir", baseDir, join(this.root, "work")],
      { PATH: `${codexBin}:${process.env.PATH ?? "/usr/bin:/bin"}`, HOME: join(this.root, "home"), T3CODE_TELEMETRY_ENABLED: "false", LANG: "C.UTF-8" },
      /Listening on http:\/\/\S+:3773/,
      "t3 serve",
    );
    return { baseDir, bin };
  }

  /**
   * Debian's sshd on `port` with a host key of its own. Sessions get T3CODE_HOME (so `t3` finds this
   * host's base directory) and a PATH with `t3` on it, or without it (`withT3: false`).
   */
  async startSshd(port: number, client: SshClient, t3: { baseDir: string; bin: string }, withT3: boolean): Promise<string> {
    const dir = join(this.root, `sshd-${port}`);
    await mkdir(dir, { recursive: true });
    await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", `${this.name}-${port}`, "-f", join(dir, "host_ed25519")]);
    await writeFile(join(dir, "authorized_keys"), await readFile(`${client.identity}.pub`, "utf8"), { mode: 0o600 });
    await mkdir("/run/sshd", { recursive: true, mode: 0o755 });
    const path = `${withT3 ? `${t3.bin}:` : ""}/usr/local/bin:/usr/bin:/bin`;
    await writeFile(
      join(dir, "sshd_config"),
      [
        `Port ${port}`,
        `ListenAddress ${this.address}`,
        `HostKey ${join(dir, "host_ed25519")}`,
        "PidFile none",
        "UsePAM no",
        // Temp folders are not owned the way StrictModes wants.
        "StrictModes no",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PubkeyAuthentication yes",
        `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
        "PermitRootLogin prohibit-password",
        `SetEnv PATH=${path} T3CODE_HOME=${t3.baseDir} T3CODE_TELEMETRY_ENABLED=false`,
        "",
      ].join("\n"),
    );
    await this.start(SSHD, ["-D", "-e", "-f", join(dir, "sshd_config")], process.env, /Server listening on/, `sshd :${port}`);
    return (await readFile(join(dir, "host_ed25519.pub"), "utf8")).split(" ").slice(0, 2).join(" ");
  }

  /** Accepts connections on :3773 and never answers (a hung or overloaded service). */
  async startSilentServer(): Promise<void> {
    await this.start(
      process.execPath,
      ["-e", `require("node:net").createServer(() => {}).listen(3773, ${JSON.stringify(this.address)}, () => console.log("ready"))`],
      process.env,
      /ready/,
      "silent server",
    );
  }

  /** A web server on :3773 that is not T3 (a router's admin page, say). */
  async startWebPage(): Promise<void> {
    const script = `require("node:http").createServer((q, s) => { s.writeHead(200, { "content-type": "text/html" }); s.end("<html><body>Printer admin</body></html>"); }).listen(3773, ${JSON.stringify(this.address)}, () => console.log("ready"))`;
    await this.start(process.execPath, ["-e", script], process.env, /ready/, "web page");
  }

  async stop(): Promise<void> {
    await Promise.all(this.children.map(stopChild));
    await stopChild(this.holder);
    await rm(this.root, { recursive: true, force: true });
  }
}

/** The test user's side of ssh: a key, a known_hosts file and an ssh config naming the hosts. */
export class SshClient {
  readonly identity: string;
  readonly knownHosts: string;
  readonly config: string;
  private constructor(readonly root: string) {
    this.identity = join(root, "id_ed25519");
    this.knownHosts = join(root, "known_hosts");
    this.config = join(root, "ssh_config");
  }

  static async create(): Promise<SshClient> {
    const client = new SshClient(await mkdtemp(join(tmpdir(), "t3-discovery-ssh-")));
    await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "t3-fleet-test", "-f", client.identity]);
    await writeFile(client.knownHosts, "");
    return client;
  }

  async trust(entries: { pattern: string; key: string }[]): Promise<void> {
    await writeFile(this.knownHosts, entries.map((entry) => `${entry.pattern} ${entry.key}`).join("\n") + "\n");
  }

  /** `hosts`: each alias with its settings; the rest is the user's usual defaults for the test. */
  async writeConfig(hosts: { alias: string; settings: Record<string, string> }[]): Promise<void> {
    const blocks = hosts.map((host) => [`Host ${host.alias}`, ...Object.entries(host.settings).map(([key, value]) => `  ${key} ${value}`)].join("\n"));
    const defaults = [
      "Host *",
      "  User root",
      `  IdentityFile ${this.identity}`,
      "  IdentitiesOnly yes",
      "  IdentityAgent none",
      `  UserKnownHostsFile ${this.knownHosts}`,
      "  GlobalKnownHostsFile /dev/null",
      "  StrictHostKeyChecking yes",
    ].join("\n");
    await writeFile(this.config, `${blocks.join("\n\n")}\n\n${defaults}\n`);
  }

  async stop(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}

/** A folder for PATH with a stand-in `tailscale` that prints `statusFile` for `status --json`. */
export async function tailscaleStandIn(statusFile: string, root: string): Promise<string> {
  const bin = join(root, "tailscale-bin");
  await mkdir(bin);
  await writeFile(
    join(bin, "tailscale"),
    `#!/bin/sh\nif [ "$1" = status ] && [ "$2" = --json ]; then exec cat ${JSON.stringify(statusFile)}; fi\necho "stand-in tailscale: only status --json" >&2\nexit 2\n`,
  );
  await chmod(join(bin, "tailscale"), 0o755);
  return bin;
}

function readlinkNs(pid: number): Promise<string> {
  return readlink(`/proc/${pid}/ns/net`);
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((next) => setTimeout(next, 20));
  }
}
