// `npm run serve -- [options]`: the fleet service in Node, its UI and bridge on 127.0.0.1. Prints
// the single-use launch link to open. See USAGE, and README "Security".
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { DiscoveryReport } from "../../shared/bridge/contract";
import { describeError } from "../../shared/bridge/redact";
import { parsePairingInput } from "../../shared/t3/pairing";
import { quotedText } from "../../shared/t3/text";
import { DataFolderBusyError, lockDataFolder } from "../fleet/data-folder-lock";
import { discoveryReportText } from "../fleet/discovery/report-text";
import { ensurePrivateDir } from "../fleet/private-files";
import { FileSecretStore, KeytarSecretStore, MemorySecretStore, type SecretStore } from "../fleet/secrets";
import { FleetService } from "../fleet/service";
import { defaultDataDir } from "./data-dir";
import { installResourceReport } from "./resource-report";
import { type HeadlessShell, startHeadlessShell } from "./server";
import { sourceMapsAsAsked } from "./source-maps";
import { rateLimited, terminal } from "./terminal";

const USAGE = `Usage: ./fleet serve -- [options]

Runs T3 Fleet headless and prints a link to open in a browser on this machine. The link opens
once, within 10 minutes, in one tab (a reload of that tab keeps working); restart to get a new
one. The tab's session ends when T3 Fleet restarts, or after 12 hours with no tab connected.

Options:
  --port N              listen on 127.0.0.1:N (default: any free port)
  --data-dir DIR        where pairings are kept (default: $XDG_CONFIG_HOME/t3-fleet or ~/.config/t3-fleet);
                        one T3 Fleet at a time per folder
  --pair FILE           pair with every pairing link in FILE (one per line); "-" reads them from stdin.
                        Links are never taken on the command line, where every user could read them.
  --secrets WHERE       where tokens are kept: "keychain" (the system keychain; fails if none answers),
                        "file" (DIR/tokens.json, mode 0600 in a 0700 folder: protected by file
                        permissions only), "memory" (forgotten when T3 Fleet stops), or "auto"
                        (default: the keychain, else the file)
  --ephemeral-secrets   same as --secrets memory
  --discover            print the T3 servers Find machines sees: this machine, online Tailscale peers
                        and the --ssh hosts, on port 3773 and each --discover-port (pair them in the window)
  --discover-port N     also look on port N (repeatable)
  --ssh HOST            also look at this ssh host (repeatable; as you would type it for ssh)
  -h, --help            this text

Example:
  echo "http://100.101.102.103:3773/pair#token=…" | ./fleet serve -- --pair -`;

// Before anything can format a stack (./source-maps.ts says why).
sourceMapsAsAsked();

function fail(message: string): never {
  terminal.err(message, "", ...USAGE.split("\n"));
  process.exit(2);
}

let parsed: ReturnType<typeof parse>;
function parse() {
  return parseArgs({
    options: {
      port: { type: "string", default: "0" },
      "data-dir": { type: "string" },
      "renderer-dir": { type: "string" },
      secrets: { type: "string", default: "auto" },
      "ephemeral-secrets": { type: "boolean", default: false },
      pair: { type: "string", multiple: true, default: [] },
      discover: { type: "boolean", default: false },
      "discover-port": { type: "string", multiple: true, default: [] },
      ssh: { type: "string", multiple: true, default: [] },
      help: { type: "boolean", short: "h", default: false },
    },
  });
}
try {
  parsed = parse();
} catch (error) {
  fail(describeError(error));
}
const { values } = parsed;
if (values.help) {
  terminal.out(...USAGE.split("\n"));
  process.exit(0);
}
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) fail(`--port must be a port number, not ${values.port}.`);
const where = values["ephemeral-secrets"] ? "memory" : values.secrets;
if (!["auto", "keychain", "file", "memory"].includes(where)) fail(`--secrets must be auto, keychain, file or memory, not ${where}.`);
for (const source of values.pair) {
  if (/:\/\/|token=|#/.test(source))
    fail("--pair takes a file of pairing links, or - for stdin: a link on the command line is visible to every user of this machine.");
}

// Last resort: a bug in one handler is logged (without secrets) and the shell keeps serving.
const reportUnexpected = rateLimited((line) => terminal.err(line));
process.on("uncaughtException", (error) => reportUnexpected(`t3-fleet serve: unexpected error: ${describeError(error)}`));
process.on("unhandledRejection", (error) => reportUnexpected(`t3-fleet serve: unexpected error: ${describeError(error)}`));

// Off unless T3_FLEET_RESOURCE_REPORT names a file (bench/soak.ts reads it).
const resourceWatch = installResourceReport(process.env);

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const dataDir = values["data-dir"] ?? defaultDataDir(process.env, homedir());

/** A start that cannot go on: said in words, and a non-zero exit a script or service manager sees. */
class StartFailure extends Error {}

async function openSecrets(): Promise<{ secrets: SecretStore; notices: string[] }> {
  const file = () => new FileSecretStore(join(dataDir, "tokens.json"));
  if (where === "memory") return { secrets: new MemorySecretStore(), notices: ["Tokens are kept in memory only for this run (--secrets memory)."] };
  if (where === "file") return { secrets: file(), notices: [] };
  try {
    return { secrets: await KeytarSecretStore.open(), notices: [] };
  } catch (error) {
    if (where === "keychain") throw new StartFailure(`${describeError(error)}\nStart with --secrets file or --secrets memory to keep tokens elsewhere.`);
    const secrets = file();
    return { secrets, notices: [`${describeError(error)} Tokens are kept ${secrets.description}.`] };
  }
}

async function pairingLinks(source: string): Promise<string[]> {
  const text = source === "-" ? await readStdin() : await readFile(source, "utf8");
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"));
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

async function pairFrom(service: FleetService, source: string): Promise<void> {
  let links: string[];
  try {
    links = await pairingLinks(source);
  } catch (error) {
    terminal.err(`could not read pairing links from ${source === "-" ? "stdin" : source}: ${describeError(error)}`);
    return;
  }
  for (const [index, link] of links.entries()) {
    // Whose words follow: the server's origin (never the link, which carries its code).
    const parsed = parsePairingInput(link);
    const origin = parsed.ok ? parsed.target.baseUrl : "an unreadable link";
    try {
      const paired = await service.request("pair.confirm", { input: link });
      // The label is the server's (or the link's) text: quoted, so it cannot pass for a line of ours.
      terminal.out(`paired ${origin}, which calls itself ${quotedText((paired as { label: string }).label)}`);
    } catch (error) {
      // Neither the link nor the error may carry its code into the terminal or a log; the error may carry the server's words.
      terminal.err(`could not pair link ${index + 1} of ${source === "-" ? "stdin" : source} (${origin}): ${quotedText(describeError(error))}`);
    }
  }
}

async function listen(service: FleetService): Promise<HeadlessShell> {
  try {
    return await startHeadlessShell({ service, rendererDir: values["renderer-dir"] ?? join(repoRoot, "out/renderer"), port });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE")
      throw new StartFailure(
        `Port ${port} on 127.0.0.1 is already taken by another program. Choose another with --port, or leave it out to use any free port.`,
      );
    throw error;
  }
}

/** `--discover`: what Find machines sees, printed once (the window pairs them). */
async function printDiscovery(service: FleetService): Promise<void> {
  try {
    const ports = values["discover-port"].map(Number);
    const report = await service.request("discovery.scan", { ports, sshHosts: values.ssh });
    terminal.out(...discoveryReportText(report as DiscoveryReport).split("\n"));
  } catch (error) {
    terminal.err(`could not look for machines: ${quotedText(describeError(error))}`);
  }
}

/** Order matters: the folder is ours, the port is ours, and only then is any T3 server contacted. */
async function start(): Promise<void> {
  await ensurePrivateDir(dataDir);
  const lock = await lockDataFolder(dataDir, "t3-fleet serve");
  const { secrets, notices } = await openSecrets();
  for (const notice of notices) terminal.out(notice);
  const service = await FleetService.start({ dataDir, secrets, notices, connectOnStart: false });
  resourceWatch?.hold("service", service);
  const shell = await listen(service);
  service.connectAll();
  for (const source of values.pair) await pairFrom(service, source);
  if (values.discover) await printDiscovery(service);
  // A stop that fails still ends the process: Ctrl-C must never leave the shell hanging.
  const shutdown = () => {
    shell
      .close()
      .then(() => service.stop())
      .then(() => lock.release())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          terminal.err(`t3-fleet serve: could not stop cleanly: ${describeError(error)}`);
          process.exit(1);
        },
      );
  };
  // Before the link is printed: whoever reads it may stop us at once.
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
  terminal.out(`T3 Fleet is running. Open this link once, within ${shell.launchCodeMinutes} minutes, in one browser tab on this machine:`, shell.url);
}

try {
  await start();
} catch (error) {
  // Our own start messages may span lines; anything else is one line of (possibly server) text.
  const lines = error instanceof StartFailure || error instanceof DataFolderBusyError ? error.message.split("\n") : [describeError(error)];
  terminal.err(`t3-fleet serve could not start: ${lines[0]}`, ...lines.slice(1));
  process.exit(1);
}
