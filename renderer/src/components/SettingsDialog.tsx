import { useState } from "react";
import type { FleetSettingsView } from "../../../shared/bridge/contract";
import { dispatch } from "../state/dispatch";
import { useFleet } from "../state/store";
import { PlaceError } from "./common";

const TOGGLES: [keyof FleetSettingsView["notifications"], string][] = [
  ["needsApproval", "An agent needs an approval"],
  ["needsInput", "An agent asks a question"],
  ["failed", "An agent failed"],
  ["stalled", "An agent stalls (no activity for the stall time below)"],
  ["heldUp", "An agent is held up by its provider (e.g. waiting for capacity)"],
  ["contextFull", "An agent that will not compact nears its context limit (the share below)"],
  ["hostOffline", "A machine goes offline or needs pairing again"],
];

const HOUR_MS = 3_600_000;

function BrowserNotifications() {
  const [permission, setPermission] = useState(() => (typeof Notification === "undefined" ? "unsupported" : Notification.permission));
  // The Electron shell notifies natively; only the browser page needs the Notification API.
  if (window.t3fleet) return null;
  if (permission === "unsupported") return <p className="hint">This browser cannot show notifications.</p>;
  if (permission === "granted")
    return (
      <p className="hint" data-testid="browser-notifications">
        Browser notifications are on: the same ones the desktop app shows.
      </p>
    );
  if (permission === "denied")
    return (
      <p className="hint" data-testid="browser-notifications">
        This browser blocks notifications from this page; allow them in its site settings.
      </p>
    );
  return (
    <button type="button" data-testid="browser-notifications" onClick={() => void dispatch("settings.browser-notifications", "button")?.then(setPermission)}>
      Also notify me in this browser
    </button>
  );
}

export function SettingsDialog() {
  const settings = useFleet((s) => s.settings);
  const olderThanMs = useFleet((s) => s.olderThanMs);
  if (!settings) return null;
  return (
    <div className="dialog-backdrop">
      <div className="dialog" role="dialog" aria-modal="true" aria-labelledby="settings-title" data-testid="settings-dialog">
        <h2 id="settings-title">Settings</h2>
        <fieldset className="settings-group">
          <legend>Notify me when</legend>
          {TOGGLES.map(([key, label]) => (
            <label key={key} className="check">
              <input
                type="checkbox"
                checked={settings.notifications[key]}
                onChange={(event) => dispatch("settings.update", "button", { patch: { notifications: { [key]: event.target.checked } } })}
              />
              {label}
            </label>
          ))}
          <label className="check">
            <input
              type="checkbox"
              data-testid="pause-notifications"
              checked={settings.notificationsPaused}
              onChange={(event) => dispatch("settings.update", "button", { patch: { notificationsPaused: event.target.checked } })}
            />
            Pause all notifications
          </label>
          <BrowserNotifications />
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
              if (Number.isFinite(minutes) && minutes >= 1) dispatch("settings.update", "button", { patch: { stalledAfterMs: Math.round(minutes * 60_000) } });
            }}
          />
        </label>
        <label>
          Fold idle agents under “older” after this many hours
          <input
            type="number"
            data-testid="older-than-hours"
            min={1}
            max={24 * 365}
            defaultValue={Math.round(olderThanMs / HOUR_MS)}
            onChange={(event) => {
              const hours = Number(event.target.value);
              if (Number.isFinite(hours) && hours >= 1) dispatch("settings.older-than", "button", { ms: Math.round(hours * HOUR_MS) });
            }}
          />
        </label>
        <ChangesSettings settings={settings} />
        <PlaceError place="settings" />
        <div className="dialog-actions">
          <button type="button" className="primary" onClick={() => dispatch("settings.close", "button")}>
            Done
          </button>
        </div>
      </div>
    </div>
  );
}

/** The changes and usage settings (issue 24): the service's, like the rest, so every window and the tray agree. */
function ChangesSettings({ settings }: { settings: FleetSettingsView }) {
  return (
    <fieldset className="settings-group">
      <legend>Changes and usage</legend>
      <label className="check">
        <input
          type="checkbox"
          data-testid="finished-with-changes"
          checked={settings.finishedWithChangesInInbox}
          onChange={(event) => dispatch("settings.update", "button", { patch: { finishedWithChangesInInbox: event.target.checked } })}
        />
        List agents that finished with changes I have not reviewed in the inbox (e marks them reviewed)
      </label>
      <label>
        Flag an agent that will not compact when its context is this full (percent)
        <input
          type="number"
          data-testid="context-warning-percent"
          min={1}
          max={100}
          defaultValue={settings.contextWarningPercent}
          onBlur={(event) => {
            const percent = Math.round(Number(event.target.value));
            if (Number.isFinite(percent) && percent >= 1 && percent <= 100)
              dispatch("settings.update", "button", { patch: { contextWarningPercent: percent } });
          }}
        />
      </label>
    </fieldset>
  );
}
