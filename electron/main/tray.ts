// Keeps the tray in step with the fleet: icon variant, tooltip and menu, recomputed from the fleet
// service (never stored twice) and throttled so an event storm does not rebuild menus per event.
import { trayModel, type TrayItem, type TrayVariant } from "../../shared/fleet/tray";
import type { FleetService } from "../fleet/service";

/** Coalesces tray rebuilds; a person cannot read a menu faster than this. */
export const TRAY_REFRESH_MS = 250;

export interface TrayLike {
  setVariant(variant: TrayVariant): void;
  setToolTip(text: string): void;
  setMenu(items: TrayItem[]): void;
}

export class TrayController {
  private timer: NodeJS.Timeout | undefined;
  private variant: TrayVariant | undefined;

  constructor(
    private readonly tray: TrayLike,
    private readonly service: FleetService,
  ) {
    service.on("event", (event) => {
      if (event.type === "fleet.delta" || event.type === "fleet.snapshot" || event.type === "settings") this.schedule();
    });
    this.refresh();
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.refresh();
    }, TRAY_REFRESH_MS);
  }

  refresh(): void {
    const snapshot = this.service.snapshot();
    const model = trayModel(snapshot.environments, snapshot.agents, snapshot.settings.notificationsPaused);
    if (model.variant !== this.variant) {
      this.variant = model.variant;
      this.tray.setVariant(model.variant);
    }
    this.tray.setToolTip(model.tooltip);
    this.tray.setMenu(model.items);
  }

  dispose(): void {
    clearTimeout(this.timer);
  }
}
