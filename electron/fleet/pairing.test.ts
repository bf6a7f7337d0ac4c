// Pairing against simulators: the fleet's name on both auth generations, the checks made before a
// one-time code is spent, sane labels from hostile servers, and what re-pairing does to the
// previous session (against a small server that speaks T3's session-management endpoints).
import { mkdir, readFile, rm } from "node:fs/promises";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { BridgeResults, PairPreview } from "../../shared/bridge/contract";
import { sendEmpty, sendJson } from "../../sim/host";
import { SimServer } from "../../sim/protocol1/server";
import { MAX_SERVER_LABEL } from "./pairing";
import { REGISTRY_FILE } from "./registry";
import { MemorySecretStore, OriginBoundSecrets } from "./secrets";
import { cleanups, clientOf, env, pairAll, setup, until } from "./service.testkit";
import { revokePreviousSession } from "./session-revocation";
import { T3Http } from "./t3/http";
import { OriginToken } from "./t3/origin-token";

async function startSim(options: ConstructorParameters<typeof SimServer>[0]): Promise<SimServer> {
  const sim = await new SimServer(options).start();
  cleanups.push(() => sim.stop());
  return sim;
}

describe("pairing", () => {
  it.each(["upstream", "fork"] as const)("names itself to T3 as “T3 Fleet on <host>” (%s auth)", async (generation) => {
    const { sims, service } = await setup([generation]);
    await pairAll(service, sims);
    const sessions = sims.servers[0]!.auth.activeSessions;
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.label).toContain(`T3 Fleet on ${hostname()}`);
  });

  it("checks the server before spending the code: an unsupported protocol leaves the code unused", async () => {
    const { service } = await setup([]);
    const sim = await startSim({ generation: "upstream", orchestrationProtocolVersion: 7 });
    const link = sim.pairingUrl();
    await expect(service.request("pair.confirm", { input: link })).rejects.toThrow(/protocol 7/);
    const code = new URL(link).hash.replace("#token=", "");
    expect(sim.auth.exchange(code, undefined, "check").ok).toBe(true); // still unused
  });

  it.each([
    ["an empty body", undefined],
    ["a body naming the credential", { _tag: "EnvironmentAuthInvalidError", code: "auth_invalid", reason: "invalid_credential" }],
  ])("a T3 that fails (HTTP 500, %s) while exchanging the code is said to have failed, not to have refused a used code", async (_, body) => {
    const { service } = await setup([]);
    const sim = await startSim({ generation: "upstream" });
    // The server fails inside its token endpoint, as T3 does on an internal error.
    Object.assign(sim, {
      exchangeToken: (_req: IncomingMessage, res: ServerResponse) => (body ? sendJson(res, 500, body) : sendEmpty(res, 500)),
    });
    const failure = service.request("pair.confirm", { input: sim.pairingUrl() });
    await expect(failure).rejects.toThrow(`T3 at ${sim.baseUrl} failed while pairing (HTTP 500`);
    await expect(failure).rejects.toThrow(/may or may not be used up: try again/);
    await expect(failure).rejects.not.toThrow(/already used or has expired/);
  });

  it("says the pairing was accepted but not saved when the token cannot be stored, and saves nothing", async () => {
    const locked = new (class extends MemorySecretStore {
      override async set(): Promise<void> {
        throw new Error("The keychain is locked.");
      }
    })();
    const { sims, service } = await setup(["upstream"], { secrets: locked });
    const sim = sims.servers[0]!;
    const failure = service.request("pair.confirm", { input: sim.pairingUrl() });
    await expect(failure).rejects.toThrow(/accepted the pairing, but T3 Fleet could not save it: its token could not be stored \(The keychain is locked\.\)/);
    await expect(failure).rejects.toThrow(/Connections list/);
    expect(sim.auth.activeSessions).toHaveLength(1);
    expect(env(service, sim)).toBeUndefined();
  });

  it("shows a hostile server's label on one bounded line", async () => {
    const { service } = await setup([]);
    const sim = await startSim({ generation: "upstream", label: `evil\u202e\n${"x".repeat(20_000)}` });
    const preview = (await service.request("pair.inspect", { input: sim.pairingUrl() })) as PairPreview;
    expect([...preview.label].length).toBeLessThanOrEqual(MAX_SERVER_LABEL);
    expect(preview.label).toMatch(/^evil x+…$/);
    const paired = (await service.request("pair.confirm", { input: sim.pairingUrl() })) as BridgeResults["pair.confirm"];
    expect([...paired.label].length).toBeLessThanOrEqual(MAX_SERVER_LABEL);
  });

  it("keeps a hosted link's hostile label out of fleet.json and the fleet: clean, one line, bounded", async () => {
    const { service, dataDir } = await setup([]);
    const sim = await startSim({ generation: "upstream", label: "studio-mac" });
    const hostile = `\x1b[2J\x1b[3J\x1b[HBuild box \u202egnp.exe\u202c${"x".repeat(3_000)}`;
    const code = new URL(sim.pairingUrl()).hash.replace("#token=", "");
    const link = `https://app.t3.codes/pair?host=${encodeURIComponent(sim.baseUrl)}&label=${encodeURIComponent(hostile)}#token=${code}`;
    const paired = (await service.request("pair.confirm", { input: link })) as BridgeResults["pair.confirm"];
    const stored = JSON.parse(await readFile(join(dataDir, REGISTRY_FILE), "utf8")) as { environments: { customLabel: string | null }[] };
    for (const label of [paired.label, stored.environments[0]!.customLabel!, env(service, sim)!.label]) {
      expect(label).toMatch(/^Build box gnp\.exex+…$/);
      expect([...label].length).toBeLessThanOrEqual(MAX_SERVER_LABEL);
    }
  });

  it("pairing again keeps the machine and says whether T3 let it end the previous session", async () => {
    const { sims, service } = await setup(["upstream"]);
    const sim = sims.servers[0]!;
    await pairAll(service, sims);
    const again = (await service.request("pair.confirm", { input: sim.pairingUrl() })) as BridgeResults["pair.confirm"];
    // This server has no session-management routes for the fleet's scopes: it must say so, not pretend.
    expect(again.previousSession).toMatchObject({ outcome: "not-allowed", note: expect.stringContaining("Connections list") });
    await until(service, () => env(service, sim)?.connection.phase === "online", "online with the new pairing");
    expect(service.model.environments()).toHaveLength(1);
    const removed = (await service.request("environment.remove", { environmentId: sim.environmentId })) as BridgeResults["environment.remove"];
    expect(removed.note).toContain("Connections list");
  });

  it("revokes the previous session where the server allows it, with the new token", async () => {
    const seen: { method: string; path: string; authorization: string | undefined; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        seen.push({ method: req.method!, path: req.url!, authorization: req.headers.authorization, body });
        res.setHeader("content-type", "application/json");
        if (req.url === "/api/auth/clients") res.end(JSON.stringify([{ sessionId: "other" }, { sessionId: "old-session", current: true }]));
        else res.end(JSON.stringify({ revoked: true }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const http = new T3Http(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const [oldToken, newToken] = [OriginToken.issuedBy(http.origin, "old-token"), OriginToken.issuedBy(http.origin, "new-token")];
    expect(await revokePreviousSession({ http, token: oldToken }, { http, token: newToken })).toEqual({ outcome: "revoked", note: null });
    expect(seen).toEqual([
      { method: "GET", path: "/api/auth/clients", authorization: "Bearer old-token", body: "" },
      { method: "POST", path: "/api/auth/clients/revoke", authorization: "Bearer new-token", body: JSON.stringify({ sessionId: "old-session" }) },
    ]);
    expect(await revokePreviousSession(undefined, { http, token: newToken })).toEqual({ outcome: "none", note: null });
  });
});

describe("a second machine named like one already paired", () => {
  it("is shown as such with a name that tells them apart; unnamed, it gets that name; named on purpose, it keeps it", async () => {
    const { sims, service } = await setup(["upstream"]);
    const first = sims.servers[0]!;
    await pairAll(service, sims);
    const twin = await startSim({ generation: "upstream", label: first.label });
    const preview = (await service.request("pair.inspect", { input: twin.pairingUrl() })) as PairPreview;
    expect(preview.sameName).toEqual({ label: first.label, baseUrl: first.baseUrl });
    expect(preview.suggestedLabel).toBe(`${first.label} (2)`);
    expect(preview.pairedElsewhere).toBeNull();

    // Paired without the dialog (no name given): the two stay apart.
    const paired = (await service.request("pair.confirm", { input: twin.pairingUrl() })) as BridgeResults["pair.confirm"];
    expect(paired.label).toBe(`${first.label} (2)`);

    // A third, named like the first on purpose (the dialog asked), keeps the name it was given.
    const third = await startSim({ generation: "upstream", label: first.label });
    expect(((await service.request("pair.inspect", { input: third.pairingUrl() })) as PairPreview).suggestedLabel).toBe(`${first.label} (3)`);
    const kept = (await service.request("pair.confirm", { input: third.pairingUrl(), label: first.label })) as BridgeResults["pair.confirm"];
    expect(kept.label).toBe(first.label);
  });

  it("re-pairing the same machine is not a second one", async () => {
    const { sims, service } = await setup(["upstream"]);
    await pairAll(service, sims);
    const preview = (await service.request("pair.inspect", { input: sims.servers[0]!.pairingUrl() })) as PairPreview;
    expect(preview.sameName).toBeNull();
    expect(preview.suggestedLabel).toBe(sims.servers[0]!.label);
  });
});

describe("a server that claims a paired machine's identity (impostor)", () => {
  async function pairedWithImpostor() {
    const { sims, service, secrets, dataDir } = await setup(["upstream"]);
    const real = sims.servers[0]!;
    await pairAll(service, sims);
    const realToken = JSON.parse((await secrets.get(real.environmentId))!).token as string;
    const impostor = await startSim({ generation: "upstream", environmentId: real.environmentId, label: "studio-mac" });
    return { service, secrets, dataDir, real, realToken, impostor };
  }

  it("is shown as exactly that, and pairing without the user's answer sends and saves nothing", async () => {
    const { service, real, realToken, impostor } = await pairedWithImpostor();
    const preview = (await service.request("pair.inspect", { input: impostor.pairingUrl() })) as PairPreview;
    expect(preview.pairedElsewhere).toEqual({ label: real.label, baseUrl: real.baseUrl });
    const link = impostor.pairingUrl();
    await expect(service.request("pair.confirm", { input: link })).rejects.toThrow(
      `The server at ${impostor.baseUrl} claims to be ${real.label}, which you paired at ${real.baseUrl}: same machine moved, or an impostor?`,
    );
    expect(impostor.bearersSeen.has(realToken)).toBe(false);
    expect(impostor.auth.activeSessions).toHaveLength(0); // the pairing code was not even spent
    expect(env(service, real)?.baseUrl).toBe(real.baseUrl);
    expect(real.auth.activeSessions).toHaveLength(1);
  });

  it("re-points the machine only when the user says it moved, and never hands the old token to the new address", async () => {
    const { service, secrets, real, realToken, impostor } = await pairedWithImpostor();
    const oldClient = clientOf(service, real.environmentId);
    const moved = (await service.request("pair.confirm", { input: impostor.pairingUrl(), moved: true })) as BridgeResults["pair.confirm"];
    expect(impostor.bearersSeen.has(realToken)).toBe(false);
    // The old token went to its own address only, to name its session (this simulator lists none).
    expect(moved.previousSession.outcome).toBe("not-allowed");
    await until(
      service,
      () => env(service, impostor)?.baseUrl === impostor.baseUrl && env(service, impostor)?.connection.phase === "online",
      "online at the new address",
    );
    expect(impostor.bearersSeen.has(realToken)).toBe(false);
    // The new binding: the store keeps the new address's token with that address, a new client talks
    // to it, and the old address's client sends nothing more.
    const stored = JSON.parse((await secrets.get(real.environmentId))!) as { origin: string; token: string };
    expect(stored.origin).toBe(new URL(impostor.baseUrl).origin);
    expect(impostor.bearersSeen.has(stored.token)).toBe(true);
    expect(clientOf(service, real.environmentId).origin).toBe(new URL(impostor.baseUrl).origin);
    await expect(oldClient.identify()).rejects.toMatchObject({ kind: "interrupted" });
  });

  it("a move the machine list could not save leaves the old address with its token", async () => {
    const { service, secrets, dataDir, real, realToken, impostor } = await pairedWithImpostor();
    await rm(join(dataDir, REGISTRY_FILE));
    await mkdir(join(dataDir, REGISTRY_FILE)); // the rename over it fails
    await expect(service.request("pair.confirm", { input: impostor.pairingUrl(), moved: true })).rejects.toThrow(
      /could not save it: the machine list could not be written/,
    );
    expect(JSON.parse((await secrets.get(real.environmentId))!)).toEqual({ origin: new URL(real.baseUrl).origin, token: realToken });
    expect(env(service, real)?.baseUrl).toBe(real.baseUrl);
  });

  it("a token stored for one origin is never handed out for another, even under the same environment id", async () => {
    const secrets = new OriginBoundSecrets(new MemorySecretStore(), () => undefined);
    await secrets.set("studio-mac", OriginToken.issuedBy("http://127.0.0.1:3773/", "real-token"));
    expect((await secrets.get("studio-mac", "http://127.0.0.1:3773"))?.secretFor("http://127.0.0.1:3773")).toBe("real-token");
    expect(await secrets.get("studio-mac", "http://127.0.0.1:4000")).toBeUndefined();
    expect(await secrets.get("studio-mac", "https://127.0.0.1:3773")).toBeUndefined();
  });

  it("a token stored before tokens were bound counts as issued by the address the registry recorded", async () => {
    const store = new MemorySecretStore();
    await store.set("studio-mac", "legacy-token");
    const secrets = new OriginBoundSecrets(store, () => "http://127.0.0.1:3773");
    expect(await secrets.get("studio-mac", "http://127.0.0.1:4000")).toBeUndefined();
    expect((await secrets.get("studio-mac", "http://127.0.0.1:3773"))?.secretFor("http://127.0.0.1:3773")).toBe("legacy-token");
  });

  it("the HTTP layer refuses to attach a token to a request for another origin", async () => {
    const impostor = await startSim({ generation: "upstream" });
    const http = new T3Http(impostor.baseUrl);
    const bearer = OriginToken.issuedBy("http://127.0.0.1:1", "token-of-another-server");
    await expect(http.send({ method: "GET", path: "/api/auth/session", bearer })).rejects.toThrow(/refused to send a token/);
    expect(impostor.bearersSeen.size).toBe(0);
  });
});
