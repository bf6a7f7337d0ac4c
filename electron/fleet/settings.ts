// The user's fleet settings (notification toggles, pause, stalled quiet time, the context limit
// and the finished-with-changes inbox item): stored in the registry, applied to the notification
// policy and the fleet model, announced to every UI.
import type { BridgeEvent, BridgeParamsOut, FleetSettingsView } from "../../shared/bridge/contract";
import type { FleetModel } from "../../shared/fleet/model";
import type { NotificationPolicy } from "../../shared/fleet/notifications";
import type { Registry } from "./registry";

export class FleetSettingsControl {
  constructor(
    private readonly registry: Registry,
    private readonly policy: NotificationPolicy,
    private readonly model: FleetModel,
    private readonly publish: (event: BridgeEvent) => void,
    /** The stalled clock must be re-armed when the quiet time changes. */
    private readonly stalledAfterChanged: () => void,
  ) {
    model.setReviewsListed(registry.settings.finishedWithChangesInInbox);
  }

  get notificationsPaused(): boolean {
    return this.registry.settings.notificationsPaused;
  }

  view(): FleetSettingsView {
    const { notifications, notificationsPaused, stalledAfterMs, contextWarningPercent, finishedWithChangesInInbox } = this.registry.settings;
    return { notifications, notificationsPaused, stalledAfterMs, contextWarningPercent, finishedWithChangesInInbox };
  }

  async update(patch: BridgeParamsOut<"settings.update">): Promise<FleetSettingsView> {
    const current = this.registry.settings;
    const next = await this.registry.updateSettings({
      ...(patch.notifications && { notifications: { ...current.notifications, ...patch.notifications } }),
      ...(patch.notificationsPaused !== undefined && { notificationsPaused: patch.notificationsPaused }),
      ...(patch.stalledAfterMs !== undefined && { stalledAfterMs: patch.stalledAfterMs }),
      ...(patch.contextWarningPercent !== undefined && { contextWarningPercent: patch.contextWarningPercent }),
      ...(patch.finishedWithChangesInInbox !== undefined && { finishedWithChangesInInbox: patch.finishedWithChangesInInbox }),
    });
    this.policy.updateSettings(next.notifications, next.contextWarningPercent);
    this.model.setStalledAfter(next.stalledAfterMs);
    this.model.setReviewsListed(next.finishedWithChangesInInbox);
    this.stalledAfterChanged();
    const view = this.view();
    this.publish({ type: "settings", settings: view });
    return view;
  }
}
