// The bridge edge of the fleet service: decodes untrusted request params with the contract's
// schemas, maps each method to the module that owns it, and turns bad input into clear errors.
import { type BridgeMethod, type BridgeParamsOut, BridgeRequests, type BridgeResults, isBridgeMethod, safeExternalUrl } from "../../shared/bridge/contract";
import type { Delivery } from "../../shared/fleet/delivery";
import { decidedAbout, type HandledAction } from "../../shared/fleet/handled";
import type { Acknowledgements } from "./acknowledgements";
import type { HandledLog } from "./handled-log";
import type { Snoozes } from "./snoozes";
import type { Reviews } from "./reviews";
import type { AgentDetails } from "./agent-details";
import { BridgeError } from "./bridge-error";
import type { Creations } from "./creations";
import type { Deliveries } from "./deliveries";
import type { AgentDiffs } from "./diffs";
import type { Discovery } from "./discovery/coordinator";
import type { Environments } from "./environments";
import { interruptHoldingQueue } from "./interrupt-hold";
import type { FleetModel } from "../../shared/fleet/model";
import type { Pairing } from "./pairing";
import type { FleetSettingsControl } from "./settings";

export interface BridgeHandlerDeps {
  model: FleetModel;
  environments: Environments;
  pairing: Pairing;
  details: AgentDetails;
  deliveries: Deliveries;
  creations: Creations;
  acknowledgements: Acknowledgements;
  snoozes: Snoozes;
  reviews: Reviews;
  handled: HandledLog;
  settings: FleetSettingsControl;
  discovery: Discovery;
  openExternal: ((url: string) => Promise<void>) | undefined;
  diffs: AgentDiffs;
}

/** `viewer`: who asked (a window, a page's socket), for what is kept per viewer (open agents). */
export type BridgeHandlers = { [M in BridgeMethod]: (params: BridgeParamsOut<M>, viewer: string) => Promise<BridgeResults[M]> | BridgeResults[M] };

/** Decodes a request at the edge; unknown methods and malformed params are refused with a clear message. */
export function decodeBridgeRequest(method: string, params: unknown): { method: BridgeMethod; params: unknown } {
  if (!isBridgeMethod(method)) throw new BridgeError("invalid", `Unknown request: ${method}`);
  const decoded = BridgeRequests[method].safeParse(params);
  if (!decoded.success) {
    const issue = decoded.error.issues[0];
    throw new BridgeError("invalid", `Invalid ${method} request${issue ? ` at ${issue.path.join(".") || "(root)"}: ${issue.message}` : ""}`);
  }
  return { method, params: decoded.data };
}

/** One handler per bridge method; params are already decoded. */
export function bridgeHandlers(deps: BridgeHandlerDeps): BridgeHandlers {
  const { model, environments, pairing, details, deliveries, acknowledgements, reviews, settings, handled } = deps;
  /** Records what the user did once the fleet carried it out (a refused command did nothing). */
  const recorded = async <T>(key: string, action: HandledAction, result: Promise<T>, happened: (value: T) => boolean = () => true): Promise<T> => {
    const value = await result;
    if (happened(value)) handled.record(key, action);
    return value;
  };
  const sent = (delivery: Delivery) => delivery.state !== "refused";
  /** The request's command or subject, read before the answer takes it off the pending list. */
  const decidedOn = (key: string, requestId: string) => decidedAbout(model.agent(key)?.pending.find((request) => request.requestId === requestId));
  return {
    "pair.inspect": (p) => pairing.inspect(p.input),
    "pair.confirm": (p) => pairing.confirm(p.input, p.token, p.label, p.moved),
    "pair.probeLocal": () => pairing.probeLocal(),
    "environment.remove": (p) => environments.remove(p.environmentId),
    "environment.rename": (p) => environments.update(p.environmentId, { customLabel: p.label }),
    "environment.mute": (p) => environments.update(p.environmentId, { muted: p.muted }),
    "environment.retry": (p) => {
      environments.retry(p.environmentId);
      return null;
    },
    "agent.open": (p, viewer) => details.openAgent(p.key, viewer),
    "agent.close": (p, viewer) => {
      details.closeAgent(p.key, viewer);
      return null;
    },
    "agent.send": (p) => deliveries.send(p.key, p.text, p.expectedIntent, p.commandId),
    "agent.respondApproval": (p) =>
      recorded(
        p.key,
        { kind: "decided", decision: p.decision, ...decidedOn(p.key, p.requestId) },
        deliveries.command(
          p.key,
          "approval",
          (threadId, commandId) => ({ type: "respond-approval", commandId, threadId, requestId: p.requestId, decision: p.decision }),
          p.requestId,
        ),
        sent,
      ),
    "agent.respondInput": (p) =>
      recorded(
        p.key,
        { kind: "answered" },
        deliveries.command(
          p.key,
          "input",
          (threadId, commandId) => ({ type: "respond-input", commandId, threadId, requestId: p.requestId, answers: p.answers }),
          p.requestId,
        ),
        sent,
      ),
    "agent.interrupt": (p) =>
      p.holdQueued
        ? interruptHoldingQueue(deliveries, model, p.key)
        : deliveries.command(p.key, "interrupt", (threadId, commandId) => ({
            type: "interrupt",
            commandId,
            threadId,
            runId: model.agent(p.key)?.activeRunId ?? null,
          })),
    "agent.stop": (p) =>
      recorded(
        p.key,
        { kind: "stopped" },
        deliveries.command(p.key, "stop", (threadId, commandId) => ({ type: "stop", commandId, threadId })),
        sent,
      ),
    "agent.acknowledge": (p) => recorded(p.key, { kind: "acknowledged" }, acknowledgements.acknowledge(p.key)),
    "agent.unacknowledge": (p) => recorded(p.key, { kind: "unacknowledged" }, acknowledgements.unacknowledge(p.key)),
    "agent.review": (p) => recorded(p.key, { kind: "reviewed" }, reviews.review(p.key)),
    "agent.unreview": (p) => recorded(p.key, { kind: "unreviewed" }, reviews.unreview(p.key, p.turnCount)),
    "agent.snooze": (p) => recorded(p.key, { kind: "snoozed", until: p.until === null ? null : Date.parse(p.until) }, deps.snoozes.snooze(p.key, p.until)),
    "agent.unsnooze": (p) => recorded(p.key, { kind: "unsnoozed" }, deps.snoozes.unsnooze(p.key)),
    "handled.list": (p) => handled.since(p.since),
    "agent.diff": (p) => deps.diffs.read(p.key, p.scope),
    "agent.createChoices": (p) => deps.creations.choices(p.environmentId),
    "agent.create": (p) => {
      const { creationId, ...request } = p;
      return deps.creations.create(creationId, request);
    },
    "creation.retry": (p) => deps.creations.retry(p.creationId),
    "delivery.recheck": (p) => deliveries.recheck(p.commandId),
    "delivery.cancelQueued": (p) => deliveries.cancelQueued(p.commandId),
    "delivery.release": (p) => deliveries.release(p.commandId),
    "delivery.discard": (p) => deliveries.discard(p.commandId),
    "settings.update": (p) => settings.update(p),
    "link.open": async (p) => {
      const url = safeExternalUrl(p.url);
      if (!url) throw new BridgeError("invalid", "Only http and https links can be opened.");
      await deps.openExternal?.(url);
      return null;
    },
    "discovery.scan": (p) => deps.discovery.scan(p),
    "discovery.pair": (p) => deps.discovery.pair(p.id, p.label, p.plainHttp === true),
  };
}
