// The "New agent" form (issue 42): its own small store (as Find machines keeps one, discovery.ts),
// and the bridge calls it makes: the choices each machine's T3 lists (`agent.createChoices`), the
// create (`agent.create`, with a creation id made when the form opens, so a second press creates
// nothing more) and "Try again" (`creation.retry`). The last choices are remembered per machine in
// this browser. Creations' receipts arrive as `creation` events (bridge-events.ts).
import { create } from "zustand";
import type { CreateChoices, CreateRequest, Creation } from "../../../shared/fleet/creation";
import { creationSettled } from "../../../shared/fleet/creation";
import { splitKey } from "../../../shared/fleet/model";
import { focusWhenStill } from "./focus";
import { navigation } from "./navigation";
import { errorMessage, requireBridge, tracked } from "./requests";
import { useFleet } from "./store";

/** What the user chose in the form: the service's create request (shared/fleet/creation.ts). */
export type NewAgentForm = CreateRequest;

export interface NewAgentState {
  open: boolean;
  /** The agent a child is started under ("New child of this agent"), else null. */
  parentKey: string | null;
  choices: CreateChoices | null;
  loading: boolean;
  /** Why the form cannot go on, in words (a refusal before anything was sent, a read that failed). */
  error: string | null;
  /** The id this opening of the form creates with: pressing Create twice creates once. */
  creationId: string;
  submitting: boolean;
  /** Creations this window knows, newest last. */
  creations: Creation[];
  /** The creation whose agent opens in the agent view once it appears. */
  following: string | null;
  setChoices(choices: CreateChoices | null, loading: boolean, error: string | null): void;
  receive(creation: Creation): void;
  dismiss(creationId: string): void;
}

const newId = () => (typeof crypto !== "undefined" && "randomUUID" in crypto ? crypto.randomUUID() : `c-${Date.now()}-${Math.random()}`);

export const useNewAgent = create<NewAgentState>()((set) => ({
  open: false,
  parentKey: null,
  choices: null,
  loading: false,
  error: null,
  creationId: newId(),
  submitting: false,
  creations: [],
  following: null,
  setChoices: (choices, loading, error) => set({ choices, loading, error }),
  receive: (creation) =>
    set((state) => {
      const others = state.creations.filter((entry) => entry.creationId !== creation.creationId);
      // Newest last; a few settled receipts are kept.
      const kept = [...others, creation];
      const settled = kept.filter(creationSettled);
      const drop = new Set(settled.slice(0, Math.max(0, settled.length - 5)).map((entry) => entry.creationId));
      return { creations: kept.filter((entry) => !drop.has(entry.creationId)) };
    }),
  dismiss: (creationId) => set((state) => ({ creations: state.creations.filter((entry) => entry.creationId !== creationId) })),
}));

const REMEMBERED = "t3fleet.newAgent.";

/** The last choices made on a machine (and the last machine), kept in this browser. */
export function remembered(environmentId: string | null): Partial<NewAgentForm> {
  try {
    const key = environmentId ? `${REMEMBERED}${environmentId}` : `${REMEMBERED}last`;
    return JSON.parse(localStorage.getItem(key) ?? "{}") as Partial<NewAgentForm>;
  } catch {
    return {};
  }
}

function remember(form: NewAgentForm): void {
  try {
    const { projectId, instanceId, model, runtimeMode } = form;
    localStorage.setItem(`${REMEMBERED}${form.environmentId}`, JSON.stringify({ projectId, instanceId, model, runtimeMode }));
    localStorage.setItem(`${REMEMBERED}last`, JSON.stringify({ environmentId: form.environmentId }));
  } catch {
    // Storage refused (a private window): nothing is remembered.
  }
}

export const newAgent = {
  /** Opens the form; `parentKey`: start a child of that agent, on its machine. */
  open(parentKey: string | null): void {
    useNewAgent.setState({ open: true, parentKey, error: null, creationId: newId(), submitting: false });
    const environmentId = parentKey ? splitKey(parentKey)[0] : (remembered(null).environmentId ?? undefined);
    void newAgent.load(environmentId);
  },

  close(): void {
    useNewAgent.setState({ open: false, parentKey: null, choices: null, error: null });
  },

  /** Reads what the machines offer; `environmentId`: the machine whose T3 lists are read. */
  async load(environmentId: string | undefined): Promise<void> {
    const previous = useNewAgent.getState().choices;
    useNewAgent.getState().setChoices(previous, true, null);
    try {
      const choices = await tracked(() => requireBridge().request("agent.createChoices", environmentId ? { environmentId } : {}));
      if (useNewAgent.getState().open) useNewAgent.getState().setChoices(choices, false, null);
    } catch (error) {
      if (useNewAgent.getState().open) useNewAgent.getState().setChoices(previous, false, errorMessage(error));
    }
  },

  /** Creates the agent; a refusal stays in the form (nothing was sent), a creation closes it and its receipt follows. */
  async submit(form: NewAgentForm): Promise<void> {
    const { creationId, submitting } = useNewAgent.getState();
    if (submitting) return;
    useNewAgent.setState({ submitting: true, error: null });
    try {
      const creation = await tracked(() => requireBridge().request("agent.create", { creationId, ...form }));
      remember(form);
      useNewAgent.getState().receive(creation);
      useNewAgent.setState({ following: creation.creationId });
      newAgent.close();
      newAgent.openWhenListed();
    } catch (error) {
      useNewAgent.setState({ error: errorMessage(error) });
    } finally {
      useNewAgent.setState({ submitting: false });
    }
  },

  async retry(creationId: string): Promise<void> {
    try {
      const creation = await tracked(() => requireBridge().request("creation.retry", { creationId }));
      useNewAgent.getState().receive(creation);
      useNewAgent.setState({ following: creation.creationId });
      newAgent.openWhenListed();
    } catch (error) {
      useFleet.getState().commandFailed(`creation:${creationId}`, errorMessage(error));
    }
  },

  /** The followed creation's agent opens in the agent view once the fleet lists it (keepFollowingCreations). */
  openWhenListed(): void {
    const { following, creations } = useNewAgent.getState();
    const creation = creations.find((entry) => entry.creationId === following);
    if (!creation || !useFleet.getState().agents.has(creation.agentKey)) return;
    useNewAgent.setState({ following: null });
    void navigation.openAgent(creation.agentKey).then(focusWhenStill("panel"));
  },
};

/** Opens the followed creation's agent as soon as the fleet lists it: on each change of the fleet's agents or of the creations. */
export function keepFollowingCreations(): () => void {
  const offFleet = useFleet.subscribe((state, previous) => {
    if (state.version !== previous.version) newAgent.openWhenListed();
  });
  const offCreations = useNewAgent.subscribe((state, previous) => {
    if (state.creations !== previous.creations || state.following !== previous.following) newAgent.openWhenListed();
  });
  return () => {
    offFleet();
    offCreations();
  };
}
