// The inbox as the window shows it, and Linear's triage: after an item is handled from the inbox,
// its next item opens.
import { selectInbox } from "./derived";
import type { Inbox } from "./selectors";
import { focusTargets, focusWhenStill } from "./focus";
import { navigation } from "./navigation";
import { useFleet } from "./store";

/** The inbox as the window shows it now (the pane's filters and snoozes). */
export function currentInbox(): Inbox {
  return selectInbox(useFleet.getState());
}

export const inboxKeys = (): string[] => currentInbox().items.map((agent) => agent.key);

/** After an answer, an approval, an acknowledgement or a snooze from the inbox (`before`: its keys then), its next item opens. */
export function advanceInbox(handledKey: string, before: string[]): void {
  const state = useFleet.getState();
  if (state.view !== "inbox" || state.openKey !== handledKey || !before.includes(handledKey)) return;
  // The handled agent may still read "needs you" until its server confirms; it is not offered again.
  const left = new Set(inboxKeys());
  left.delete(handledKey);
  const target = before.slice(before.indexOf(handledKey) + 1).find((key) => left.has(key)) ?? [...left][0];
  if (target) void navigation.openAgent(target).then(focusWhenStill("panel"));
  else {
    navigation.closeAgent();
    focusTargets.pane?.();
  }
}
