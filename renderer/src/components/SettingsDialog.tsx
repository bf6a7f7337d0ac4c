import type { FleetSettingsView } from "../../../shared/bridge/contract";
import { commands } from "../state/effects";
import { useFleet } from "../state/store";

const TOGGLES: [keyof FleetSettingsView["notifications"], string][] = [
  ["needsApproval", "An agent needs an approval"],
  ["needsInput", "An agent asks a question"],
  ["failed", "An agent failed"],
  ["hostOffline", "A machine goes offline or needs pairing again"],
];

export function SettingsDialog() {
  const settings = useFleet((s) => s.settings);
  if (!settings) return null;
  return (
    <div className="dialog-backdrop">
      <div className="dialog" role="dialog" aria-modal="true" aria-labelledby="settings-title" data-testid="settings-dialog">
        <h2 id="settings-title">Settings</h2>
        <fieldset className="settings-group">
          <legend>Notify me when</legend>
          {TOGGLES.map(([key, label]) => (
            <label key={key} className="check">
              <input type="checkbox" checked={settings.notifications[key]} onChange={(event) => void commands.updateSettings({ notifications: { [key]: event.target.checked } })} />
              {label}
            </label>
          ))}
          <label className="check">
            <input type="checkbox" data-testid="pause-notifications" checked={settings.notificationsPaused} onChange={(event) => void commands.updateSettings({ notificationsPaused: event.target.checked })} />
            Pause all notifications
          </label>
        </fieldset>
        <label>
          Flag a running agent as stalled after this many quiet minutes
          <input
            type="number"
            min={1}
            max={1440}
            defaultValue={Math.round(settings.stalledAfterMs / 60_000)}
            onBlur={(event) => {
              const minutes = Number(event.target.value);
              if (Number.isFinite(minutes) && minutes >= 1) void commands.updateSettings({ stalledAfterMs: Math.round(minutes * 60_000) });
            }}
          />
        </label>
        <div className="dialog-actions">
          <button type="button" className="primary" onClick={() => useFleet.getState().set({ settingsOpen: false })}>
            Done
          </button>
        </div>
      </div>
    </div>
  );
}
