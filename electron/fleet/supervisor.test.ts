// The supervisor alone: phases, backoff with full jitter and a cap, identity checks.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { ConnectionPhase } from "../../shared/fleet/types";
import { SimServer } from "../../sim/protocol1/server";
import { ConnectionSupervisor } from "./supervisor";
import { T3EnvironmentClient } from "./t3/client";
import { OriginToken } from "./t3/origin-token";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function phases(supervisor: ConnectionSupervisor) {
  const seen: ConnectionPhase[] = [];
  supervisor.on("phase", (phase) => seen.push(phase));
  const until = (check: (phase: ConnectionPhase) => boolean) =>
    new Promise<ConnectionPhase>((resolve) => {
      const listener = (phase: ConnectionPhase) => {
        if (!check(phase)) return;
        supervisor.off("phase", listener);
        resolve(phase);
      };
      supervisor.on("phase", listener);
    });
  return { seen, until };
}

/** A simulator and a client session on it: scoped on upstream, unscoped on the fork (it has no scopes). */
async function simWithSession(generation: "upstream" | "fork") {
  const sim = await new SimServer({ generation }).start();
  cleanups.push(() => sim.stop());
  const scopes = generation === "upstream" ? ["orchestration:read", "orchestration:operate"] : [];
  const secret = sim.auth.issueSession({ scopes, role: "client", label: "t" }).token;
  return { sim, token: OriginToken.issuedBy(sim.baseUrl, secret) };
}

describe("connection supervisor", () => {
  it("backs off exponentially with full jitter up to the cap while a host is unreachable", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve())); // nothing listens there now
    let clock = 1_000_000;
    const supervisor = new ConnectionSupervisor({
      environmentId: "env",
      generation: "upstream",
      client: new T3EnvironmentClient(`http://127.0.0.1:${port}`),
      token: async () => OriginToken.issuedBy(`http://127.0.0.1:${port}`, "token"),
      timing: { baseBackoffMs: 8, maxBackoffMs: 40 },
      random: () => 0.999, // the top of each jitter window, to see the envelope
      now: () => clock++,
    });
    cleanups.push(() => supervisor.stop());
    const { until } = phases(supervisor);
    supervisor.start();
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 5; attempt++) {
      const phase = await until((p) => p.phase === "offline" && p.attempt === attempt);
      if (phase.phase !== "offline") throw new Error("unreachable");
      delays.push(Date.parse(phase.nextAttemptAt) - Date.parse(phase.since));
      expect(phase.error).toMatch(/ECONNREFUSED|refused|connect/i);
    }
    expect(delays).toEqual([7, 15, 31, 39, 39]);
  });

  it("refuses to merge a different server answering at the saved URL", async () => {
    const { sim, token } = await simWithSession("upstream");
    const supervisor = new ConnectionSupervisor({
      environmentId: "someone-else",
      generation: "upstream",
      client: new T3EnvironmentClient(sim.baseUrl),
      token: async () => token,
    });
    cleanups.push(() => supervisor.stop());
    const { until } = phases(supervisor);
    supervisor.start();
    const phase = await until((p) => p.phase === "incompatible");
    expect(phase).toMatchObject({ error: expect.stringContaining(`A different T3 server (${sim.label}`) });
    expect(supervisor.hasScheduledAttempt).toBe(false);
  });

  it("goes online once the shell is synchronized and reports a missing token as unauthorized", async () => {
    const { sim, token } = await simWithSession("fork");
    let stored: OriginToken | undefined = token;
    const supervisor = new ConnectionSupervisor({
      environmentId: sim.environmentId,
      generation: "fork",
      client: new T3EnvironmentClient(sim.baseUrl),
      token: async () => stored,
    });
    cleanups.push(() => supervisor.stop());
    const { until } = phases(supervisor);
    supervisor.start();
    await until((p) => p.phase === "online");
    expect(supervisor.activeConnection).toBeDefined();
    stored = undefined;
    supervisor.reconnectNow();
    expect(await until((p) => p.phase === "unauthorized")).toMatchObject({ error: expect.stringContaining("No token is stored") });
  });

  it("a 426 from /ws re-reads the descriptor instead of retrying blindly: upgraded to a protocol this build lacks, the machine says what to update", async () => {
    let descriptorReads = 0;
    let upgrades = 0;
    let sessionChecks = 0;
    const server = createServer((req, res) => {
      if (req.url === "/.well-known/t3/environment") {
        descriptorReads++;
        // Upgraded in place between the first read and the socket: the second read announces protocol 3.
        const upgraded = descriptorReads > 1;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            environmentId: "env",
            label: "studio",
            serverVersion: upgraded ? "0.1.0" : "0.0.42",
            capabilities: {},
            ...(upgraded && { orchestrationProtocolVersion: 3 }),
          }),
        );
        return;
      }
      if (req.url === "/api/auth/websocket-ticket") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ ticket: "ticket", expiresAt: "2099-01-01T00:00:00.000Z" }));
        return;
      }
      if (req.url?.startsWith("/api/auth/session")) sessionChecks++;
      res.writeHead(404).end();
    });
    server.on("upgrade", (_req, socket) => {
      upgrades++;
      const body = JSON.stringify({ code: "orchestration_protocol_incompatible", orchestrationProtocolVersion: 3 });
      socket.end(`HTTP/1.1 426 Upgrade Required\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const supervisor = new ConnectionSupervisor({
      environmentId: "env",
      generation: "upstream",
      client: new T3EnvironmentClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
      token: async () => OriginToken.issuedBy(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, "token"),
    });
    cleanups.push(() => supervisor.stop());
    const { until } = phases(supervisor);
    supervisor.start();
    const phase = await until((p) => p.phase === "incompatible" || p.phase === "backoff" || p.phase === "offline");
    expect(phase).toMatchObject({ phase: "incompatible", error: expect.stringContaining("Update T3 Fleet") });
    expect(phase).toMatchObject({ error: expect.stringContaining("orchestration protocol 3") });
    expect({ descriptorReads, upgrades, sessionChecks }).toEqual({ descriptorReads: 2, upgrades: 1, sessionChecks: 0 });
    expect(supervisor.hasScheduledAttempt).toBe(false);
  });

  it("chooses the adapter on every connect and keeps it while the protocol stays the same", async () => {
    const { sim, token } = await simWithSession("upstream");
    const supervisor = new ConnectionSupervisor({
      environmentId: sim.environmentId,
      generation: "upstream",
      client: new T3EnvironmentClient(sim.baseUrl),
      token: async () => token,
    });
    cleanups.push(() => supervisor.stop());
    const adapters: unknown[] = [];
    supervisor.on("adapter", (adapter) => adapters.push(adapter));
    const { until } = phases(supervisor);
    supervisor.start();
    await until((p) => p.phase === "online");
    expect(supervisor.protocol).toBe(1);
    supervisor.reconnectNow();
    await until((p) => p.phase === "online");
    expect(adapters).toHaveLength(1);
  });

  it("a session revoked while its socket stays open is unauthorized within the re-check bound, then nothing is scheduled", async () => {
    // Real T3 keeps a revoked session's socket working (issue 7), and so does the sim.
    const { sim, token } = await simWithSession("upstream");
    const supervisor = new ConnectionSupervisor({
      environmentId: sim.environmentId,
      generation: "upstream",
      client: new T3EnvironmentClient(sim.baseUrl),
      token: async () => token,
      timing: { tokenRecheckMs: 100 },
    });
    cleanups.push(() => supervisor.stop());
    const { until } = phases(supervisor);
    supervisor.start();
    await until((p) => p.phase === "online");
    const connection = supervisor.activeConnection!;
    const revokedAt = Date.now();
    sim.auth.revoke(token.secretFor(sim.baseUrl));
    let closed = false;
    connection.onClose(() => (closed = true));
    const phase = await until((p) => p.phase === "unauthorized");
    expect(Date.now() - revokedAt).toBeLessThan(2_000); // one re-check interval plus a request
    expect(phase).toMatchObject({ error: expect.stringContaining("Pair it again") });
    expect(closed).toBe(true); // the fleet closed it; T3 had left it open
    expect(supervisor.hasScheduledWork).toBe(false); // no retries, no re-checks: no storm
  });

  it("a host seen moments ago is probed quickly while it restarts, not on the exponential backoff", async () => {
    const { sim, token } = await simWithSession("fork");
    const supervisor = new ConnectionSupervisor({
      environmentId: sim.environmentId,
      generation: "fork",
      client: new T3EnvironmentClient(sim.baseUrl),
      token: async () => token,
      // The backoff alone would wait 5 s, 10 s, 20 s… ; quick probes keep it at ~60 ms.
      timing: { baseBackoffMs: 5_000, maxBackoffMs: 30_000, quickProbeMs: 60 },
    });
    cleanups.push(() => supervisor.stop());
    const { until } = phases(supervisor);
    supervisor.start();
    await until((p) => p.phase === "online");
    await sim.kill();
    for (let attempt = 1; attempt <= 4; attempt++) {
      const phase = await until((p) => p.phase === "offline" && p.attempt === attempt);
      if (phase.phase !== "offline") throw new Error("unreachable");
      const delay = Date.parse(phase.nextAttemptAt) - Date.parse(phase.since);
      expect(delay).toBeGreaterThanOrEqual(60);
      expect(delay).toBeLessThanOrEqual(72);
    }
    const listening = Date.now();
    await sim.start();
    await until((p) => p.phase === "online");
    expect(Date.now() - listening).toBeLessThan(2_000);
  });

  it("a restarting host that accepts connections before it serves (never answering those) is online moments after it serves", async () => {
    // Real T3 binds its port ~3 s before it serves; a probe connected in that window is never answered.
    const { sim, token } = await simWithSession("upstream");
    const supervisor = new ConnectionSupervisor({
      environmentId: sim.environmentId,
      generation: "upstream",
      // The client's own HTTP bound stays long: only the quick probe may give up early.
      client: new T3EnvironmentClient(sim.baseUrl, { httpTimeoutMs: 30_000 }),
      token: async () => token,
      timing: { quickProbeMs: 60, quickProbeTimeoutMs: 300 },
    });
    cleanups.push(() => supervisor.stop());
    const { until, seen } = phases(supervisor);
    supervisor.start();
    await until((p) => p.phase === "online");
    await sim.kill();
    await until((p) => p.phase === "offline");
    await sim.start(600);
    await until((p) => p.phase === "online");
    // One deaf probe abandoned after quickProbeTimeoutMs, the next quick probe answered.
    expect(Date.now() - sim.servesFrom).toBeLessThan(1_500);
    expect(seen.some((p) => p.phase === "offline" && /did not answer in time/.test(p.error))).toBe(true);
  });

  it("retrying earlier than announced says the attempt is under way now", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const supervisor = new ConnectionSupervisor({
      environmentId: "env",
      generation: "upstream",
      client: new T3EnvironmentClient(`http://127.0.0.1:${port}`),
      token: async () => OriginToken.issuedBy(`http://127.0.0.1:${port}`, "token"),
      timing: { baseBackoffMs: 60_000, maxBackoffMs: 60_000 },
      random: () => 0.5,
    });
    cleanups.push(() => supervisor.stop());
    const { until } = phases(supervisor);
    supervisor.start();
    const waiting = await until((p) => p.phase === "offline");
    if (waiting.phase !== "offline") throw new Error("unreachable");
    expect(Date.parse(waiting.nextAttemptAt) - Date.now()).toBeGreaterThan(20_000);
    const now = until((p) => p.phase === "offline" && Date.parse(p.nextAttemptAt) <= Date.now());
    supervisor.reconnectNow();
    const underWay = await now;
    expect(underWay).toMatchObject({ phase: "offline", since: waiting.since });
  });

  it("re-verifying after a clock jump: not online until the ping answers, as of the last frame (not the jumped clock), once for two reports", async () => {
    const { sim, token } = await simWithSession("upstream");
    let jumpMs = 0;
    const supervisor = new ConnectionSupervisor({
      environmentId: sim.environmentId,
      generation: "upstream",
      client: new T3EnvironmentClient(sim.baseUrl),
      token: async () => token,
      now: () => Date.now() + jumpMs,
    });
    cleanups.push(() => supervisor.stop());
    const { seen, until } = phases(supervisor);
    supervisor.start();
    await until((p) => p.phase === "online");
    const lastFrameAt = supervisor.activeConnection!.lastFrameAt;
    jumpMs = 60 * 60_000; // the laptop slept for an hour
    const back = until((p) => p.phase === "online");
    // The shell's wake event and the clock watch both report it.
    void supervisor.recheck();
    void supervisor.recheck();
    expect(supervisor.phase).toMatchObject({ phase: "connecting" });
    expect(supervisor.activeConnection).toBeUndefined(); // nothing from before is used until it answers
    const checking = supervisor.phase as Extract<ConnectionPhase, { phase: "connecting" }>;
    expect(Date.parse(checking.lastConfirmedAt!)).toBeGreaterThanOrEqual(lastFrameAt);
    expect(Date.parse(checking.lastConfirmedAt!)).toBeLessThan(Date.now() + 1_000); // not advanced by the jump
    expect(Date.parse(checking.since)).toBeGreaterThanOrEqual(Date.now() + jumpMs - 1_000);
    await back;
    expect(seen.filter((p) => p.phase === "connecting")).toHaveLength(2); // the first connect, and one re-check
  });

  it("a silent host found on re-verifying goes offline, as of its last frame before the jump", async () => {
    const { sim, token } = await simWithSession("fork");
    let jumpMs = 0;
    const supervisor = new ConnectionSupervisor({
      environmentId: sim.environmentId,
      generation: "fork",
      client: new T3EnvironmentClient(sim.baseUrl),
      token: async () => token,
      timing: { probeTimeoutMs: 200 },
      now: () => Date.now() + jumpMs,
    });
    cleanups.push(() => supervisor.stop());
    const { until } = phases(supervisor);
    supervisor.start();
    await until((p) => p.phase === "online");
    sim.setBlackhole(true);
    jumpMs = 60 * 60_000;
    const gone = until((p) => p.phase === "offline" || p.phase === "backoff");
    void supervisor.recheck();
    const phase = await gone;
    if (phase.phase !== "offline" && phase.phase !== "backoff") throw new Error("unreachable");
    expect(Date.parse(phase.lastConfirmedAt!)).toBeLessThan(Date.now() + 1_000);
    sim.setBlackhole(false);
  });
});
