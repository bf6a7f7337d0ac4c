// What each action takes and, for the few whose caller waits on it, what it gives back. An action
// run from a key, the palette or the tray has no arguments and acts on the agent the user is on
// (dispatch.ts currentAgent); a view's button or card names what it acts on (Excalidraw's
// executeAction(action, source, value)). Renderer-only: the tray sends ids alone.
import type { BridgeParams } from "../../../shared/bridge/contract";
import type { ActionId } from "../../../shared/fleet/action-registry";
import type { ApprovalDecision, QuestionAnswers } from "../../../shared/fleet/facts";
import type { NewAgentForm } from "./new-agent";
import type { DiffRequest } from "./slices/diff";
import type { Filters, Grouping, PaneView } from "./slices/ui";

/** The agent an action acts on, when it is not the one the user is on (a row's or a card's own button). */
interface OnAgent {
  key?: string;
}

export interface ActionArgs {
  "agent.open": OnAgent & {
    /** Move focus into the agent once it is open (as the Enter key does), unless the user moved it meanwhile. */
    focus?: boolean;
  };
  "agent.select": { key: string | null };
  "agent.decide": { key: string; requestId: string; decision: ApprovalDecision };
  "agent.respond": { key: string; requestId: string; answers: QuestionAnswers };
  "agent.send": { key: string; text: string; intent: BridgeParams<"agent.send">["expectedIntent"] };
  "agent.unsnooze": OnAgent;
  "agent.interrupt": OnAgent;
  "agent.stop": OnAgent;
  /** The choice made in the question now asked (slices/actions.ts `confirming`); `holdQueued` for an interrupt's "and hold queued". */
  "action.confirm": { holdQueued?: boolean };
  "confirmation.dismiss": { id: number };
  "failure.dismiss": { place: string };
  "delivery.release": { commandId: string };
  "delivery.discard": { commandId: string };
  "delivery.recheck": { commandId: string };
  "delivery.cancel-queued": { commandId: string };
  "view.set": { view: PaneView };
  "fleet.group": { grouping: Grouping };
  "fleet.filter": { patch: Partial<Filters> };
  "fleet.search-text": { text: string };
  "fleet.toggle": { id: string };
  "fleet.toggle-older": { groupId: string };
  "machine.show": { environmentId: string };
  "machine.rename": { environmentId: string; label: string };
  "machine.remove": { environmentId: string };
  "machine.mute": { environmentId: string; muted: boolean };
  "machine.retry": { environmentId: string };
  "machines.scan": { refresh?: boolean };
  "machines.pair-found": { id: string; plainHttp?: boolean };
  "machines.add-port": { port: number };
  "machines.remove-port": { port: number };
  "machines.add-ssh-host": { host: string };
  "machines.remove-ssh-host": { host: string };
  "new-agent.choose-machine": { environmentId: string };
  "new-agent.create": { form: NewAgentForm };
  "agent.forget-lost-send": { key: string };
  "pairing.open": { environmentId?: string | null; input?: string };
  "link.open": { url: string };
  "diff.show": { key: string; scope: DiffRequest };
  "notice.dismiss": { conditions: string[] };
  "creation.retry": { creationId: string };
  "creation.dismiss": { creationId: string };
  "settings.update": { patch: BridgeParams<"settings.update"> };
  "settings.older-than": { ms: number };
}

/** What an action gives back to a caller that waits on it (the rest give nothing). */
export interface ActionResults {
  "agent.open": Promise<void>;
  /** "sent" when the service took it, "lost" when its answer was lost with the socket, else "failed". */
  "agent.send": Promise<"sent" | "lost" | "failed">;
  "settings.browser-notifications": Promise<NotificationPermission>;
}

export type ArgsOf<Id extends ActionId> = Id extends keyof ActionArgs ? ActionArgs[Id] : undefined;
export type ResultOf<Id extends ActionId> = Id extends keyof ActionResults ? ActionResults[Id] : unknown;
