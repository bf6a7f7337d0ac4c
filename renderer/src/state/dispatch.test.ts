// The one dispatcher (dispatch.ts) against the real store and handlers: the same handler whichever
// surface asks, nothing from a disabled action, the ask-first questions kept in the store, and
// arguments reaching the handler. Only the bridge to the service is faked, at its edge, and the
// window's `window`/`document` where the node test runner has none (the run event, focus moves).
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { BridgeMethod, BridgeParams } from "../../../shared/bridge/contract";
import type { Delivery } from "../../../shared/fleet/delivery";
import type { PendingRequest } from "../../../shared/fleet/facts";
import { agentView, environmentView } from "../../../shared/fleet/views.testkit";
import type { Bridge } from "../bridge/client";
import { ACTION_RUN_EVENT, type ActionRun, type ActionSource, dispatch } from "./dispatch";
import { setRequestBridge } from "./requests";
import { useDiscovery } from "./discovery";
import { NO_FILTERS, useFleet } from "./store";

const store = useFleet.getState;
const APPROVAL: PendingRequest = {
  kind: "approval",
  requestId: "req-1",
  detail: "npm test",
  createdAt: "2026-12-05T06:00:00.000Z",
  requestKind: "command",
  decisions: [
    { decision: "accept", label: "Allow once", warning: null },
    { decision: "acceptForSession", label: "Allow for this session", warning: null },
    { decision: "decline", label: "Deny", warning: null },
    { decision: "cancel", label: "Deny and stop", warning: null },
  ],
};
const asking = agentView("asking", "needs-approval", { title: "Asking", pending: [APPROVAL] });
const busy = agentView("busy", "running", { title: "Busy" });
const studio = environmentView();

/** What the page asked the service, in order. */
let sent: { method: BridgeMethod; params: unknown }[] = [];
let runs: ActionRun[] = [];

function receipt(commandId: string): Delivery {
  const at = "2026-12-05T06:00:00.000Z";
  return {
    commandId,
    agentKey: asking.key,
    kind: "approval",
    state: "accepted",
    text: null,
    messageId: null,
    requestId: null,
    intent: null,
    observed: null,
    reason: null,
    createdAt: at,
    updatedAt: at,
  } as unknown as Delivery;
}

const fakeBridge: Bridge = {
  request: async <M extends BridgeMethod>(method: M, params: BridgeParams<M>) => {
    sent.push({ method, params });
    if (method === "agent.open") return { key: (params as { key: string }).key, items: [], loaded: true, error: null } as never;
    if (method === "environment.rename") return {} as never;
    return receipt(`c-${sent.length}`) as never;
  },
  onEvent: () => () => {},
  onConnection: () => () => {},
};

/** Lets the handlers' bridge requests (promises) settle. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 0));
const methods = () => sent.map((request) => request.method);

beforeAll(() => {
  // The page's globals the handlers touch: the run event's target, focus (none here) and frames.
  const target = new EventTarget();
  Object.assign(globalThis, {
    window: target,
    document: { activeElement: null, body: null },
    requestAnimationFrame: (callback: () => void) => setTimeout(callback, 0),
  });
  target.addEventListener(ACTION_RUN_EVENT, (event) => runs.push((event as CustomEvent<ActionRun>).detail));
  setRequestBridge(fakeBridge);
});

beforeEach(() => {
  sent = [];
  runs = [];
  useFleet.setState({
    agents: new Map([
      [asking.key, asking],
      [busy.key, busy],
    ]),
    environments: new Map([[studio.environmentId, studio]]),
    version: store().version + 1,
    bridgeLostAt: null,
    openKey: asking.key,
    selectedKey: asking.key,
    confirming: null,
    confirmation: null,
    failures: new Map(),
    details: new Map(),
    filters: NO_FILTERS,
    grouping: "machine",
    view: null,
  });
});

afterEach(settled);

describe("the dispatcher", () => {
  it("runs an action's one handler whichever surface asks: keys, button, palette, tray", async () => {
    for (const source of ["keys", "button", "palette", "tray"] satisfies ActionSource[]) dispatch("agent.accept", source);
    await settled();
    expect(runs.map((run) => [run.source, run.handler])).toEqual([
      ["keys", "decideApproval"],
      ["button", "decideApproval"],
      ["palette", "decideApproval"],
      ["tray", "decideApproval"],
    ]);
    expect(sent.map((request) => request.params)).toEqual(Array(4).fill({ key: asking.key, requestId: "req-1", decision: "accept" }));
  });

  it("does nothing for an action the registry disables now, and says why where the user acted", async () => {
    // The agent's machine is offline: a decision cannot reach T3.
    useFleet.setState({
      environments: new Map([[studio.environmentId, environmentView({ connection: { phase: "offline", since: "t", error: "gone" } as never })]]),
    });
    dispatch("agent.accept", "palette");
    expect(store().failures.get(`agent:${asking.key}`)).toMatch(/studio is not online: a decision cannot reach T3 now/);
    // Online again, but nothing runs to interrupt: the open agent is not running.
    useFleet.setState({ environments: new Map([[studio.environmentId, studio]]) });
    dispatch("agent.interrupt", "button");
    await settled();
    expect(runs).toEqual([]);
    expect(sent).toEqual([]);
  });

  it("asks first for what T3 cannot take back; cancelling sends nothing, confirming sends it once", async () => {
    dispatch("agent.stop", "palette");
    await settled();
    expect(store().confirming).toEqual({ action: "stop", key: asking.key });
    expect(sent).toEqual([]);
    dispatch("action.cancel", "button");
    await settled();
    expect(store().confirming).toBeNull();
    expect(sent).toEqual([]);

    dispatch("agent.decide", "button", { key: asking.key, requestId: "req-1", decision: "cancel" });
    await settled();
    expect(store().confirming).toMatchObject({ action: "decide", decision: "cancel" });
    expect(sent).toEqual([]);
    dispatch("action.confirm", "button", {});
    await settled();
    expect(store().confirming).toBeNull();
    expect(sent).toEqual([{ method: "agent.respondApproval", params: { key: asking.key, requestId: "req-1", decision: "cancel" } }]);
  });

  it("asks before removing a machine: its token goes from the keychain", async () => {
    dispatch("machine.remove", "button", { environmentId: studio.environmentId });
    await settled();
    expect(store().confirming).toEqual({ action: "remove-machine", environmentId: studio.environmentId });
    expect(sent).toEqual([]);
    dispatch("action.confirm", "button", {});
    await settled();
    expect(store().confirming).toBeNull();
    expect(sent).toEqual([{ method: "environment.remove", params: { environmentId: studio.environmentId } }]);
  });

  it("asks before interrupting a turn with messages queued behind it, from the key as from the button", async () => {
    const at = "2026-12-05T06:00:00.000Z";
    const queued = { id: "m1", runId: null, createdAt: at, updatedAt: at, type: "message" as const, role: "user" as const, text: "next", streaming: false };
    useFleet.setState({
      openKey: busy.key,
      selectedKey: busy.key,
      details: new Map([[busy.key, { key: busy.key, items: [{ ...queued, queue: { state: "queued", position: 1 } }], loaded: true, error: null }]]),
    });
    dispatch("agent.interrupt", "keys");
    await settled();
    expect(store().confirming).toEqual({ action: "interrupt", key: busy.key });
    expect(sent).toEqual([]);
    dispatch("action.cancel", "keys");
    expect(store().confirming).toBeNull();
    dispatch("agent.interrupt", "button");
    dispatch("action.confirm", "button", { holdQueued: true });
    await settled();
    expect(sent).toEqual([{ method: "agent.interrupt", params: { key: busy.key, holdQueued: true } }]);
    expect(runs.map((run) => run.handler)).toEqual(["interrupt", "cancel", "interrupt", "confirm"]);
  });

  it("hands the action's arguments to its handler and its result back", async () => {
    dispatch("agent.decide", "button", { key: asking.key, requestId: "req-1", decision: "acceptForSession" });
    dispatch("machine.rename", "button", { environmentId: studio.environmentId, label: "Studio 2" });
    dispatch("fleet.group", "button", { grouping: "project" });
    dispatch("fleet.filter", "button", { patch: { failed: true } });
    const outcome = dispatch("agent.send", "button", { key: busy.key, text: "hello", intent: "steer" });
    expect(await outcome).toBe("sent");
    await dispatch("agent.open", "button", { key: busy.key });
    expect(sent.map(({ method, params }) => [method, params])).toEqual([
      ["agent.respondApproval", { key: asking.key, requestId: "req-1", decision: "acceptForSession" }],
      ["environment.rename", { environmentId: studio.environmentId, label: "Studio 2" }],
      ["agent.send", expect.objectContaining({ key: busy.key, text: "hello", expectedIntent: "steer" })],
      ["agent.close", { key: asking.key }],
      ["agent.open", { key: busy.key }],
    ]);
    expect(store()).toMatchObject({ grouping: "project", filters: { ...NO_FILTERS, failed: true }, openKey: busy.key });
    expect(methods()).not.toContain("agent.interrupt");
  });

  it("changes what Find machines looks at only through its actions, each named by its argument", () => {
    dispatch("machines.add-port", "button", { port: 4000 });
    dispatch("machines.add-port", "button", { port: 4000 });
    dispatch("machines.add-ssh-host", "button", { host: "build-box" });
    expect(useDiscovery.getState()).toMatchObject({ ports: [4000], sshHosts: ["build-box"] });
    dispatch("machines.remove-port", "button", { port: 4000 });
    dispatch("machines.remove-ssh-host", "button", { host: "build-box" });
    expect(useDiscovery.getState()).toMatchObject({ ports: [], sshHosts: [] });
    expect(runs.map((run) => run.handler)).toEqual(["lookAt", "lookAt", "lookAt", "lookAt", "lookAt"]);
  });
});

describe("the inbox's next item", () => {
  const second = agentView("second", "needs-approval", { title: "Second", pending: [{ ...APPROVAL, requestId: "req-2" }] });

  it("is never an agent handled a moment ago whose view still reads 'needs you'; once its view moves on, it can be again", async () => {
    useFleet.setState({
      agents: new Map([
        [asking.key, asking],
        [second.key, second],
      ]),
      view: "inbox",
    });
    // The service answered the first approval, but its view of the agent has not reached the page yet.
    await dispatch("agent.accept", "keys");
    await settled();
    expect(store().openKey).toBe(second.key);
    await dispatch("agent.accept", "keys");
    await settled();
    // Nothing else needs the user: the agent closes, and the first is not opened again.
    expect(store().openKey).toBeNull();
    expect(sent.filter((request) => request.method === "agent.open").map((request) => request.params)).toEqual([{ key: second.key }]);

    // The first agent's view arrives (answered), then it asks something new: it is the next item again.
    const asksAgain = { ...asking, pending: [{ ...APPROVAL, requestId: "req-3" }] };
    useFleet.setState({
      agents: new Map([
        [asking.key, { ...asking, status: "idle", pending: [] }],
        [second.key, second],
      ]),
    });
    useFleet.setState({
      agents: new Map([
        [asking.key, asksAgain],
        [second.key, second],
      ]),
      openKey: second.key,
    });
    await dispatch("agent.accept", "keys");
    await settled();
    expect(store().openKey).toBe(asking.key);
  });
});
