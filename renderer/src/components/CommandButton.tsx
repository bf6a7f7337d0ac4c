import { command, type CommandId, keyHint } from "../../../shared/fleet/command-registry";
import { commandContext, runCommand } from "../state/effects";
import { useFleet } from "../state/store";

/** A button for a registry command: its label, key hint and enablement come from the one registry. */
export function CommandButton({ id, label, testId, className, disabled }: { id: CommandId; label?: string; testId?: string; className?: string; disabled?: boolean }) {
  // Re-render when the facts or the selection change, so enablement stays current.
  useFleet((s) => s.version);
  useFleet((s) => s.openKey);
  useFleet((s) => s.selectedKey);
  const spec = command(id);
  const hint = keyHint(spec);
  const enabled = !disabled && spec.enabled(commandContext());
  return (
    <button type="button" className={className} data-testid={testId} data-command={id} title={hint ? `${spec.label} (${hint})` : spec.label} disabled={!enabled} onClick={() => runCommand(id)}>
      {label ?? spec.label}
      {hint && !label ? <kbd>{hint}</kbd> : null}
    </button>
  );
}
