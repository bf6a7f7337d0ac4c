// The fleet side of the real-server scenarios, for either server kind (harness.testkit.ts): a real
// FleetService paired by link with a real server, and waits that resolve on the service's own
// events (never on polling or sleeps).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import type { BridgeEvent } from "../../shared/bridge/contract";
import type { DeliveryState } from "../../shared/fleet/delivery";
import type { AgentView, DisplayStatus, EnvironmentView } from "../../shared/fleet/types";
import { MemorySecretStore } from "../../electron/fleet/secrets";
import { FleetService, type FleetServiceOptions } from "../../electron/fleet/service";
import { defaultClientLabel } from "../../electron/fleet/t3/client";
import type { AuthSessionListing, RealT3Server } from "./harness.testkit";
import { CountingProxy } from "./proxy.testkit";

/**
 * Pings every 3 s: a frozen host shows offline within two intervals. A 1 s ping read a busy two-core
 * machine (T3, a real harness CLI and the fleet on it at once) as a vanished host mid-scenario.
 */
export const PING_MS = 3_000;
export const FAST: Partial<FleetServiceOptions> = {
  socket: { pingIntervalMs: PING_MS, openTimeoutMs: 2_000 },
  timing: { baseBackoffMs: 100, maxBackoffMs: 500, stableAfterMs: 2_000, probeTimeoutMs: 500 },
};

/** How often the revocation scenario's fleet asks T3 whether its token still works. */
export const TOKEN_RECHECK_MS = 2_000;
/**
 * How long the revocation scenario counts the server's requests after `unauthorized`: "no retry
 * storm" is the absence of an event, so it is watched for a bounded window, here 20 base backoffs
 * (4 of the longest) of FAST, in which any retry loop would have sent several requests.
 */
export const NO_RETRY_WINDOW_MS = 2_000;

export interface Fleet {
  service: FleetService;
  events: BridgeEvent[];
  environmentId: string;
}

/** Starts a fleet service with its own data folder and pairs it with `server` by a fresh link (through `pairingBaseUrl`, e.g. a proxy). */
export async function startFleet(
  server: RealT3Server,
  options: Partial<FleetServiceOptions>,
  cleanups: (() => unknown)[],
  pairingBaseUrl = server.baseUrl,
): Promise<Fleet> {
  const dataDir = await mkdtemp(join(tmpdir(), "t3-fleet-real-"));
  const service = await FleetService.start({ dataDir, secrets: new MemorySecretStore(), ...options });
  cleanups.push(
    () => rm(dataDir, { recursive: true, force: true }),
    () => service.stop(),
  );
  const events: BridgeEvent[] = [];
  service.on("event", (event) => events.push(event));
  const link = await server.pairingLink();
  const paired = (await service.request("pair.confirm", { input: link.url.replace(server.baseUrl, pairingBaseUrl) })) as { environmentId: string };
  const result = { service, events, environmentId: paired.environmentId };
  await until(result, () => env(result)?.connection.phase === "online", "online after pairing");
  return result;
}

/** After each scenario: a failed one must not leave the shared server frozen or down for the next one. */
export async function recoverServer(server: RealT3Server): Promise<void> {
  server.thaw();
  if (!server.running) await server.restart();
}

/** The label a session's client gave T3 (its listing leaves `client` untyped). */
export const clientLabelOf = (session: AuthSessionListing): string | undefined => (session.client as { label?: string } | undefined)?.label;

/** Resolves when `check` holds after a fleet event (or already holds). Never polls. */
export function until(target: Fleet, check: () => boolean, what: string | (() => string), timeoutMs = 20_000): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      target.service.off("event", listener);
      reject(new Error(`timed out after ${timeoutMs} ms waiting for: ${typeof what === "string" ? what : what()}`));
    }, timeoutMs);
    const listener = () => {
      if (!check()) return;
      clearTimeout(timer);
      target.service.off("event", listener);
      resolve();
    };
    target.service.on("event", listener);
  });
}

export const env = (target: Fleet): EnvironmentView | undefined => target.service.model.environment(target.environmentId);
export const keyOf = (target: Fleet, threadId: string) => `${target.environmentId}/${threadId}`;
export const agent = (target: Fleet, threadId: string): AgentView | undefined => target.service.model.agent(keyOf(target, threadId));
/** The fleet's rows of this environment. */
export const rows = (target: Fleet): AgentView[] => [...target.service.model.agents()].filter((view) => view.environmentId === target.environmentId);

/** The states a delivery was shown in, in order, without repeats (a state is re-published as it gains detail). */
export const deliveryStates = (target: Fleet, commandId: string): DeliveryState[] =>
  target.events
    .flatMap((event) => (event.type === "delivery" && event.delivery.commandId === commandId ? [event.delivery.state] : []))
    .filter((state, index, states) => state !== states[index - 1]);

/** The statuses an agent was shown with, in order, without repeats. */
export function statusHistory(target: Fleet, threadId: string, cleanups: (() => unknown)[]): () => DisplayStatus[] {
  const seen: DisplayStatus[] = [];
  const key = keyOf(target, threadId);
  const record = (event: BridgeEvent) => {
    if (event.type !== "fleet.delta") return;
    for (const view of event.agents) if (view.key === key && seen.at(-1) !== view.status) seen.push(view.status);
  };
  target.service.on("event", record);
  cleanups.push(() => target.service.off("event", record));
  return () => [...seen];
}

/** Keys of this environment's rows the fleet removed since this call (each fleet.delta's `removed`). */
export function removals(target: Fleet, cleanups: (() => unknown)[]): () => string[] {
  const removed: string[] = [];
  const record = (event: BridgeEvent) => {
    if (event.type === "fleet.delta") removed.push(...event.removed.filter((key) => key.startsWith(`${target.environmentId}/`)));
  };
  target.service.on("event", record);
  cleanups.push(() => target.service.off("event", record));
  return () => [...removed];
}

/**
 * Revokes the fleet's session with `revoke` and checks how the fleet noticed, independent of machine
 * load: it went from online straight to unauthorized (its socket stayed open, no reconnect), and all
 * it asked the server meanwhile (through `proxy`) was the periodic token re-check.
 */
export async function noticesRevocation(target: Fleet, proxy: CountingProxy, revoke: () => Promise<void>): Promise<void> {
  const phases: string[] = [env(target)!.connection.phase];
  const record = () => {
    const phase = env(target)?.connection.phase;
    if (phase && phases.at(-1) !== phase) phases.push(phase);
  };
  target.service.on("event", record);
  const since = Date.now();
  try {
    await revoke();
    await until(
      target,
      () => env(target)?.connection.phase === "unauthorized",
      () => `unauthorized (phases since the revocation: ${phases.join(" → ")})`,
      60_000,
    );
  } finally {
    target.service.off("event", record);
  }
  expect(phases, "phases since the revocation").toEqual(["online", "unauthorized"]);
  const asked = new Set(proxy.requestsSince(since).map((request) => `${request.method} ${request.path.split("?")[0]}`));
  expect([...asked], "requests between the revocation and unauthorized").toEqual(["GET /api/auth/session"]);
}

/**
 * The revocation scenario, the same for either server kind: a fleet of its own (paired through a
 * counting proxy) sees `threadId`, its session is revoked on `server`, it notices by the periodic
 * token re-check and then asks the server nothing; `untouched`, paired with its own session, stays online.
 */
export async function revokedSessionMakesNoRetryStorm(server: RealT3Server, untouched: Fleet, threadId: string, cleanups: (() => unknown)[]): Promise<void> {
  const proxy = await CountingProxy.start(server.port);
  cleanups.push(() => proxy.close());
  // The service re-checks its token on an open socket every tokenRecheckMs (30 s in production).
  const revoked = await startFleet(server, { ...FAST, timing: { ...FAST.timing, tokenRecheckMs: TOKEN_RECHECK_MS } }, cleanups, proxy.baseUrl);
  await until(revoked, () => agent(revoked, threadId) !== undefined, "threads known");
  const label = defaultClientLabel();
  const mine = (await server.sessions())
    .filter((session) => clientLabelOf(session) === label)
    .sort((a, b) => String(b.issuedAt).localeCompare(String(a.issuedAt)))[0];
  expect(mine).toBeDefined();
  await noticesRevocation(revoked, proxy, () => server.revokeSession(mine!.sessionId));
  // No retry storm: the server sees no request at all in the observation window.
  const since = Date.now();
  await new Promise((resolve) => setTimeout(resolve, NO_RETRY_WINDOW_MS));
  expect(proxy.requestsSince(since)).toEqual([]);
  expect(env(revoked)!.connection.phase).toBe("unauthorized");
  expect(env(untouched)!.connection.phase).toBe("online");
}
