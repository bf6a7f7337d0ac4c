// The keys surface: a key bound in the registry runs its command through the dispatcher. Esc is
// not a command (it closes whatever is on top) and stays with the window (App.tsx).
import { actionForKey } from "../../../shared/fleet/action-registry";
import { dispatch } from "./dispatch";
import { useNewAgent } from "./new-agent";
import { useFleet } from "./store";

function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

/** Enter and Space on a focused button, link or disclosure press it, as everywhere else. */
function pressesControl(event: KeyboardEvent): boolean {
  const target = event.target;
  return (event.key === "Enter" || event.key === " ") && target instanceof HTMLElement && ["BUTTON", "A", "SUMMARY"].includes(target.tagName);
}

export function listenForKeys(): () => void {
  const onKey = (event: KeyboardEvent) => {
    const spec = actionForKey(event);
    if (!spec) return;
    // The palette's key works from a text field too.
    if (spec.id === "palette.open") {
      event.preventDefault();
      dispatch(spec.id, "keys");
      return;
    }
    const state = useFleet.getState();
    if (
      isTyping(event.target) ||
      pressesControl(event) ||
      state.pairing.open ||
      state.settingsOpen ||
      state.paletteOpen ||
      state.listOpen ||
      useNewAgent.getState().open ||
      state.diff !== null
    )
      return;
    event.preventDefault();
    dispatch(spec.id, "keys");
  };
  window.addEventListener("keydown", onKey);
  return () => window.removeEventListener("keydown", onKey);
}
