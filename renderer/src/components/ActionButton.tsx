import { actionSpec, type ActionId, keyHint } from "../../../shared/fleet/action-registry";
import { actionContext } from "../state/action-context";
import { dispatch } from "../state/dispatch";
import { useFleetFacts } from "../state/fleet-facts";
import { useFleet } from "../state/store";

/**
 * A button for a registry action: its label, key and enablement come from the one registry, and
 * the key shows on the button. `title` says what it will do. A click runs the action through the
 * one dispatcher, as its key does (a question first, where the action asks).
 */
export function ActionButton({
  id,
  label,
  testId,
  className,
  disabled,
  title,
}: {
  id: ActionId;
  label?: string;
  testId?: string;
  className?: string;
  disabled?: boolean;
  title?: string;
}) {
  // Re-render when the facts or the selection change, so enablement stays current.
  useFleetFacts();
  useFleet((s) => s.openKey);
  useFleet((s) => s.selectedKey);
  const spec = actionSpec(id);
  const hint = keyHint(spec);
  const enabled = !disabled && spec.enabled(actionContext());
  const what = title ?? spec.label;
  return (
    <button
      type="button"
      className={className}
      data-testid={testId}
      data-command={id}
      title={hint ? `${what} (${hint})` : what}
      aria-keyshortcuts={spec.keys[0]?.replace("Mod+", "Control+")}
      disabled={!enabled}
      onClick={() => dispatch(id, "button")}
    >
      {label ?? spec.label}
      {hint ? <kbd aria-hidden="true">{hint}</kbd> : null}
    </button>
  );
}
