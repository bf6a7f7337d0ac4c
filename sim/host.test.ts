import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SimFleet } from "./fleet";

let fleet: SimFleet | undefined;
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});

/** Opens a WebSocket upgrade the host will hold or refuse, and resolves once the host has read it. */
async function heldUpgrade(host: { baseUrl: string; requestLog: readonly unknown[] }, path: string): Promise<Socket> {
  const url = new URL(host.baseUrl);
  const seen = host.requestLog.length;
  const socket = connect(Number(url.port), url.hostname);
  await new Promise<void>((done) => socket.once("connect", done));
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  const until = Date.now() + 5_000;
  while (host.requestLog.length === seen) {
    if (Date.now() > until) throw new Error("the host never read the upgrade");
    await new Promise((done) => setImmediate(done));
  }
  return socket;
}

describe("a simulated host's held connections", () => {
  // The soak lost a simulator process this way (bench/soak/processes.ts now reports such exits): a
  // socket the host holds without answering has no error listener once Node hands it over for the
  // upgrade, so a client that resets it crashed the whole process with ECONNRESET.
  it("survives a client resetting an upgrade it holds while blackholed, and answers once the blackhole lifts", async () => {
    fleet = await SimFleet.start({ envs: 1, generations: ["fork"], tickMs: 20 });
    const host = fleet.servers[0]!;
    host.setBlackhole(true);
    const socket = await heldUpgrade(host, "/ws?wsToken=held");
    socket.resetAndDestroy();
    await new Promise((done) => socket.once("close", done));
    host.setBlackhole(false);
    const response = await fetch(`${host.baseUrl}/.well-known/t3/environment`);
    expect(response.status).toBeLessThan(500);
  });

  it("survives a client resetting an upgrade it refuses", async () => {
    fleet = await SimFleet.start({ envs: 1, generations: ["upstream"], tickMs: 20 });
    const host = fleet.servers[0]!;
    const socket = await heldUpgrade(host, "/ws?wsToken=not-a-token");
    socket.resetAndDestroy();
    await new Promise((done) => socket.once("close", done));
    const response = await fetch(`${host.baseUrl}/.well-known/t3/environment`);
    expect(response.status).toBeLessThan(500);
  });
});
