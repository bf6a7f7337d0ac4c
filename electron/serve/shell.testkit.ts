// A headless shell on a throwaway renderer folder, and clients that speak to it the way a browser
// page (or an attacker on the same machine) would: raw HTTP, the launch-code exchange, the bridge.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterEach } from "vitest";
import { BRIDGE_SESSION_PROTOCOL_PREFIX, BRIDGE_SUBPROTOCOL, type BridgeBatch, type BridgeServerMessage } from "../../shared/bridge/contract";
import { MemorySecretStore } from "../fleet/secrets";
import { FleetService } from "../fleet/service";
import { type HeadlessShell, type HeadlessShellOptions, startHeadlessShell } from "./server";

/** Undone after each test, last first: every started shell, and whatever a test adds. */
export const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

export interface ShellUnderTest {
  shell: HeadlessShell;
  service: FleetService;
  dataDir: string;
  /** Every line the shell logged. */
  logs: string[];
  host: string;
  close(): Promise<void>;
}

/** A shell on a throwaway renderer folder, closed after the test. */
export async function startShell(
  options: Pick<HeadlessShellOptions, "bridgeLimits" | "requestTimeoutMs" | "sessionTiming" | "now"> = {},
): Promise<ShellUnderTest> {
  const dir = await mkdtemp(join(tmpdir(), "t3-fleet-serve-"));
  await writeFile(join(dir, "index.html"), "<!doctype html><title>T3 Fleet</title>");
  await writeFile(join(dir, "app.js"), "console.log('app')");
  const dataDir = join(dir, "data");
  const service = await FleetService.start({ dataDir, secrets: new MemorySecretStore() });
  const logs: string[] = [];
  const shell = await startHeadlessShell({ service, rendererDir: dir, log: (line) => logs.push(line), ...options });
  const started: ShellUnderTest = {
    shell,
    service,
    dataDir,
    logs,
    host: new URL(shell.origin).host,
    close: async () => {
      await shell.close();
      await service.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  cleanups.push(() => started.close());
  return started;
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request with exactly these headers (no client adds a Host or Origin of its own choosing). */
export function httpRequest(
  origin: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawAnswer> {
  const { port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, method: options.method ?? "GET", headers: { host: `127.0.0.1:${port}`, ...options.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

/** Writes raw bytes on a fresh TCP connection and returns everything the shell answered until it closed. */
export function rawExchange(origin: string, bytes: string | Buffer): Promise<string> {
  const { port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", (error: NodeJS.ErrnoException) =>
      error.code === "ECONNRESET" || error.code === "EPIPE" ? resolve(Buffer.concat(chunks).toString("latin1")) : reject(error),
    );
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
    socket.write(bytes, () => socket.end());
  });
}

/** Trades a launch link's code for a session secret, as the page does; undefined when refused. */
export async function exchangeLaunchCode(origin: string, launchUrl: string, headers: Record<string, string> = { origin }): Promise<string | undefined> {
  const code = new URLSearchParams(new URL(launchUrl).hash.slice(1)).get("code") ?? "";
  const answer = await httpRequest(origin, "/session", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ code }),
  });
  return answer.status === 200 ? (JSON.parse(answer.body) as { session: string }).session : undefined;
}

export interface BridgeUnderTest {
  ws: WebSocket;
  /** What came, a paced batch's events one by one (as `event` messages) as the page hands them on. */
  messages: BridgeServerMessage[];
  /** The paced batches as they came. */
  batches: BridgeBatch[];
  /** Resolves with the close code (and the frames seen until then). */
  closed: Promise<number>;
  next(predicate: (message: BridgeServerMessage) => boolean): Promise<BridgeServerMessage>;
}

/** Opens the bridge with a session; rejects with the HTTP status when the upgrade is refused. */
export function openBridge(
  origin: string,
  session: string | undefined,
  headers: Record<string, string> = { origin },
  path = "/bridge",
  /** Acknowledges each batch once it is read, as the page does once it painted it; false: never. */
  acknowledge = true,
): Promise<BridgeUnderTest> {
  const protocols = session === undefined ? [BRIDGE_SUBPROTOCOL] : [BRIDGE_SUBPROTOCOL, `${BRIDGE_SESSION_PROTOCOL_PREFIX}${session}`];
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${origin.replace("http", "ws")}${path}`, protocols, { headers, maxPayload: 64 * 1024 * 1024 });
    const messages: BridgeServerMessage[] = [];
    const batches: BridgeBatch[] = [];
    const waiters = new Set<() => void>();
    ws.on("message", (data) => {
      const message = JSON.parse(data.toString()) as BridgeServerMessage;
      if (message.type === "events") {
        batches.push(message);
        for (const event of message.events) messages.push({ type: "event", event });
        if (acknowledge) ws.send(JSON.stringify({ type: "ack", seq: message.seq }));
      } else messages.push(message);
      waiters.forEach((waiter) => waiter());
    });
    const closed = new Promise<number>((resolveClose) => ws.once("close", (code) => resolveClose(code)));
    const next = (predicate: (message: BridgeServerMessage) => boolean) =>
      new Promise<BridgeServerMessage>((resolveNext, rejectNext) => {
        const check = () => {
          const found = messages.find(predicate);
          if (found) {
            waiters.delete(check);
            resolveNext(found);
          }
        };
        waiters.add(check);
        check();
        void closed.then((code) => rejectNext(new Error(`bridge closed (${code}) before the expected message`)));
      });
    ws.once("open", () => resolve({ ws, messages, batches, closed, next }));
    ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once("error", reject);
  });
}
