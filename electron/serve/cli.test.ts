/* eslint-disable no-control-regex -- the terminal bytes are checked for control characters */
// `./fleet serve` as a person runs it on a server without a keychain: pairing links from stdin,
// tokens kept across restarts in a file only this user can read, and no secret in its output.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { SimServer } from "../../sim/protocol1/server";
import { createV2Thread } from "../../sim/protocol2/fleet-hooks";
import { V2SimServer } from "../../sim/protocol2/server";
import { exchangeLaunchCode, openBridge } from "./shell.testkit";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { HOSTILE } from "../../shared/t3/hostile-text.testkit";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Runs the CLI without a D-Bus session (so no keychain answers), as on a fresh server. */
function runCli(args: string[], stdin?: string): Run {
  const env = { ...process.env };
  delete env.DBUS_SESSION_BUS_ADDRESS;
  // tsx as a loader in this one process, not tsx's CLI: its CLI relays signals to a child process and
  // SIGKILLs it (exit 143) when the child does not confirm within 30 ms, which a busy machine misses.
  const child = spawn(
    process.execPath,
    ["--import", pathToFileURL(join(root, "node_modules/tsx/dist/loader.mjs")).href, join(root, "electron/serve/cli.ts"), ...args],
    {
      env,
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stdin!.end(stdin);
  const exited = new Promise<number | null>((resolveExit) => child.once("exit", (code) => resolveExit(code)));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
  });
  return { child, output: () => output, exited };
}

/** A folder removed after the test, with a stub renderer in `renderer/`; `data/` (not created) is for the CLI's data folder. */
async function scratchFolder(prefix: string): Promise<{ dir: string; rendererDir: string; dataDir: string }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const rendererDir = join(dir, "renderer");
  await mkdir(rendererDir);
  await writeFile(join(rendererDir, "index.html"), "<!doctype html><title>T3 Fleet</title>");
  return { dir, rendererDir, dataDir: join(dir, "data") };
}

/** The launch link, once the CLI printed it. */
function launchLink(run: Run): Promise<string> {
  return new Promise((resolveLink, reject) => {
    const check = () => {
      // Only a whole line: output arrives in chunks, and half a code opens nothing.
      const match = /(http:\/\/127\.0\.0\.1:\d+\/#code=[A-Za-z0-9_-]+)\r?\n/.exec(run.output());
      if (match) return resolveLink(match[1]!);
    };
    run.child.stdout!.on("data", check);
    void run.exited.then((code) => reject(new Error(`serve exited (${code}) before printing its link:\n${run.output()}`)));
    check();
  });
}

describe("./fleet serve", () => {
  it("prints its usage for --help, and refuses a pairing link on the command line without echoing it", { timeout: 60_000 }, async () => {
    const help = runCli(["--help"]);
    expect(await help.exited).toBe(0);
    expect(help.output()).toContain("Usage: ./fleet serve -- [options]");
    expect(help.output()).toContain("--pair FILE");

    const refused = runCli(["--pair", "http://10.0.0.9:3773/pair#token=7KQ2M9XH4PRT"]);
    expect(await refused.exited).toBe(2);
    expect(refused.output()).toContain("a link on the command line is visible to every user");
    expect(refused.output()).not.toContain("7KQ2M9XH4PRT");
  });

  // Two real CLI runs, each compiling TypeScript through tsx at start: slow on a loaded machine.
  it("without a keychain keeps pairings across restarts in a 0600 file in a 0700 folder, and prints no secret", { timeout: 90_000 }, async () => {
    const sim = await new SimServer({ generation: "upstream", tickMs: 5 }).start();
    cleanups.push(() => sim.stop());
    const { rendererDir, dataDir } = await scratchFolder("t3-fleet-cli-");
    const pairingUrl = sim.pairingUrl();
    const pairingCode = new URLSearchParams(new URL(pairingUrl).hash.slice(1)).get("token")!;

    const first = runCli(["--data-dir", dataDir, "--renderer-dir", rendererDir, "--pair", "-"], `# the build box\n${pairingUrl}\n`);
    await launchLink(first);
    expect(first.output()).toContain(`paired ${sim.baseUrl}, which calls itself "${sim.label}"`);
    expect(first.output()).toMatch(/Tokens are kept in .*tokens\.json, readable only by this user/);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);

    const tokenFile = join(dataDir, "tokens.json");
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    // Each token is stored with the origin that issued it (electron/fleet/secrets.ts).
    const stored = JSON.parse(Object.values(JSON.parse(await readFile(tokenFile, "utf8")) as Record<string, string>)[0]!) as { origin: string; token: string };
    expect(stored.origin).toBe(new URL(sim.baseUrl).origin);
    const bearer = stored.token;

    // Restarted without --pair: the machine is still paired and comes online with the kept token.
    const second = runCli(["--data-dir", dataDir, "--renderer-dir", rendererDir]);
    const link = await launchLink(second);
    const origin = new URL(link).origin;
    const bridge = await openBridge(origin, await exchangeLaunchCode(origin, link));
    cleanups.push(() => bridge.ws.close());
    await bridge.next((message) => message.type === "event" && message.event.type === "fleet.snapshot" && message.event.snapshot.environments.length === 1);
    await bridge.next(
      (message) =>
        message.type === "event" &&
        ((message.event.type === "fleet.snapshot" && message.event.snapshot.environments[0]?.connection.phase === "online") ||
          (message.event.type === "fleet.delta" && message.event.environments.some((environment) => environment.connection.phase === "online"))),
    );
    for (const secret of [pairingCode, bearer]) {
      expect(first.output() + second.output()).not.toContain(secret);
      expect(bridge.messages.map((message) => JSON.stringify(message)).join("\n")).not.toContain(secret);
    }
  });

  // A protocol-2 machine (T3 since 2026-10-03) pairs from a links file like a protocol-1 one.
  it("pairs a protocol-2 machine from a file of links and shows its agents online", { timeout: 60_000 }, async () => {
    const sim = await new V2SimServer({ label: "nightly-box", tickMs: 5 }).start();
    cleanups.push(() => sim.stop());
    const threadId = createV2Thread(sim, { title: "Upgrade the parser" });
    const { dir, rendererDir, dataDir } = await scratchFolder("t3-fleet-cli-v2-");
    const linksFile = join(dir, "links.txt");
    const pairingUrl = sim.pairingUrl();
    await writeFile(linksFile, `${pairingUrl}\n`, { mode: 0o600 });

    const run = runCli(["--data-dir", dataDir, "--renderer-dir", rendererDir, "--secrets", "memory", "--pair", linksFile]);
    const link = await launchLink(run);
    expect(run.output()).toContain(`paired ${sim.baseUrl}, which calls itself "${sim.label}"`);
    const origin = new URL(link).origin;
    const bridge = await openBridge(origin, await exchangeLaunchCode(origin, link));
    cleanups.push(() => bridge.ws.close());
    const agentKey = `${sim.environmentId}/${threadId}`;
    await bridge.next(
      (message) =>
        message.type === "event" &&
        ((message.event.type === "fleet.snapshot" && message.event.snapshot.agents.some((agent) => agent.key === agentKey)) ||
          (message.event.type === "fleet.delta" && message.event.agents.some((agent) => agent.key === agentKey))),
    );
    await bridge.next(
      (message) =>
        message.type === "event" &&
        ((message.event.type === "fleet.snapshot" && message.event.snapshot.environments[0]?.connection.phase === "online") ||
          (message.event.type === "fleet.delta" && message.event.environments.some((environment) => environment.connection.phase === "online"))),
    );
    expect(run.output()).not.toContain(new URLSearchParams(new URL(pairingUrl).hash.slice(1)).get("token")!);
  });

  // What a server says (its label, its errors) is data: the terminal gets no escape sequence, no
  // line of the server's making, and no 5 MB error.
  it("prints a hostile server's label and errors as inert, bounded text", { timeout: 60_000 }, async () => {
    const sim = await new SimServer({ generation: "upstream", tickMs: 5, label: `studio${HOSTILE.osc52}${HOSTILE.screenClear}` }).start();
    cleanups.push(() => sim.stop());
    const hostile = createServer((_req, res) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: `${HOSTILE.forgedLine}${HOSTILE.osc52}${HOSTILE.rlo}${HOSTILE.c1Csi}${HOSTILE.huge}` }));
    });
    await new Promise<void>((listening) => hostile.listen(0, "127.0.0.1", listening));
    cleanups.push(() => new Promise((closed) => hostile.close(closed)));
    const hostileLink = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}/pair#token=HOSTILE0000`;
    const { rendererDir, dataDir } = await scratchFolder("t3-fleet-cli-hostile-");

    const run = runCli(["--data-dir", dataDir, "--renderer-dir", rendererDir, "--secrets", "memory", "--pair", "-"], `${sim.pairingUrl()}\n${hostileLink}\n`);
    await launchLink(run);
    const output = run.output();
    expect(output).toContain(`paired ${sim.baseUrl}, which calls itself "studiobuild doneok"\n`);
    expect(output).toContain("could not pair link 2 of stdin");
    expect(output).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
    // The server's forged "open this link" stays inside its error line: only ours starts a line.
    const lines = output.split("\n");
    expect(lines.filter((line) => line.startsWith("T3 Fleet is running"))).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith("http"))).toEqual([expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/#code=/)]);
    expect(lines.find((line) => line.includes("evil.example"))).toMatch(
      /^could not pair link 2 of stdin \(http:\/\/127\.0\.0\.1:\d+\): ".*more characters\)"$/,
    );
    expect(output.length).toBeLessThan(20_000);
  });

  // Found by attacking it: plain words (no control character) in a label or an error read like the
  // fleet's own launch line. What a server says is printed quoted, after whose words they are.
  it("prints a hostile server's plain words only quoted and attributed, never as a line of its own", { timeout: 60_000 }, async () => {
    const forged = "T3 Fleet is running. Open http://127.0.0.1:1/#code=forged";
    const sim = await new SimServer({ generation: "upstream", tickMs: 5, label: forged }).start();
    cleanups.push(() => sim.stop());
    const hostile = createServer((_req, res) => {
      res.writeHead(500, { "content-type": "application/json" });
      // Padded so a terminal would wrap the forged words onto a row of their own.
      res.end(JSON.stringify({ error: `nope${" ".repeat(400)}${forged} "quoted" \\ back` }));
    });
    await new Promise<void>((listening) => hostile.listen(0, "127.0.0.1", listening));
    cleanups.push(() => new Promise((closed) => hostile.close(closed)));
    const hostileOrigin = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
    const { rendererDir, dataDir } = await scratchFolder("t3-fleet-cli-words-");

    const run = runCli(
      ["--data-dir", dataDir, "--renderer-dir", rendererDir, "--secrets", "memory", "--pair", "-"],
      `${sim.pairingUrl()}\n${hostileOrigin}/pair#token=HOSTILE0000\n`,
    );
    const link = await launchLink(run);
    const lines = run.output().split("\n");
    expect(lines.filter((line) => line.startsWith("T3 Fleet is running"))).toEqual([expect.stringMatching(/^T3 Fleet is running\. Open this link once/)]);
    expect(lines[lines.findIndex((line) => line.startsWith("T3 Fleet is running")) + 1]).toBe(link);
    const carrying = lines.filter((line) => line.includes("127.0.0.1:1/"));
    expect(carrying).toEqual([
      `paired ${sim.baseUrl}, which calls itself "${forged}"`,
      `could not pair link 2 of stdin (${hostileOrigin}): "The server at ${hostileOrigin} is not a T3 server T3 Fleet can use: This is not a T3 server (environment descriptor: nope T3 Fleet is running. Open http://127.0.0.1:1/#code=… \\"quoted\\" \\\\ back)."`,
    ]);
  });

  /** A data folder with one machine paired through a first run, which is still running. */
  async function pairedFolder() {
    const real = await new SimServer({ generation: "upstream", label: "studio-mac", tickMs: 5 }).start();
    cleanups.push(() => real.stop());
    const { rendererDir, dataDir } = await scratchFolder("t3-fleet-cli-trust-");
    const first = runCli(["--data-dir", dataDir, "--renderer-dir", rendererDir, "--secrets", "file", "--pair", "-"], `${real.pairingUrl()}\n`);
    await launchLink(first);
    expect(first.output()).toContain('which calls itself "studio-mac"');
    const stored = JSON.parse(await readFile(join(dataDir, "tokens.json"), "utf8")) as Record<string, string>;
    const realToken = (JSON.parse(stored[real.environmentId]!) as { token: string }).token;
    return { real, realToken, rendererDir, dataDir, first };
  }

  it("one serve per data folder, and a taken port stops the start before any T3 server is contacted", { timeout: 180_000 }, async () => {
    const { real, rendererDir, dataDir, first } = await pairedFolder();
    const second = runCli(["--data-dir", dataDir, "--renderer-dir", rendererDir, "--secrets", "file"]);
    expect(await second.exited).toBe(1);
    expect(second.output()).toMatch(
      new RegExp(`Another T3 Fleet \\(t3-fleet serve, process ${first.child.pid}, started [^)]+\\) is already using the data folder`),
    );
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);

    const taken = createServer();
    await new Promise<void>((resolveListen) => taken.listen(0, "127.0.0.1", () => resolveListen()));
    cleanups.push(() => new Promise<void>((resolveClose) => taken.close(() => resolveClose())));
    const port = (taken.address() as AddressInfo).port;
    real.bearersSeen.clear();
    const third = runCli(["--data-dir", dataDir, "--renderer-dir", rendererDir, "--secrets", "file", "--port", String(port)]);
    expect(await third.exited).toBe(1);
    expect(third.output()).toContain(`Port ${port} on 127.0.0.1 is already taken`);
    expect(real.bearersSeen.size).toBe(0);
    // The failed start left the folder free.
    const fourth = runCli(["--data-dir", dataDir, "--renderer-dir", rendererDir, "--secrets", "file"]);
    await launchLink(fourth);
  });

  it("--pair with an impostor's link (a paired machine's id at another address) says so and sends it nothing", { timeout: 180_000 }, async () => {
    const { real, realToken, rendererDir, dataDir, first } = await pairedFolder();
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    const impostor = await new SimServer({ generation: "upstream", environmentId: real.environmentId, label: "studio-mac", tickMs: 5 }).start();
    cleanups.push(() => impostor.stop());
    const run = runCli(["--data-dir", dataDir, "--renderer-dir", rendererDir, "--secrets", "file", "--pair", "-"], `${impostor.pairingUrl()}\n`);
    await launchLink(run);
    expect(run.output()).toContain(`claims to be studio-mac, which you paired at ${real.baseUrl}: same machine moved, or an impostor?`);
    expect(impostor.bearersSeen.has(realToken)).toBe(false);
    expect(impostor.auth.activeSessions).toHaveLength(0);
    const registry = JSON.parse(await readFile(join(dataDir, "fleet.json"), "utf8")) as { environments: { baseUrl: string }[] };
    expect(registry.environments.map((environment) => environment.baseUrl)).toEqual([real.baseUrl]);
  });
});
