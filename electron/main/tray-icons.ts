// Tray icons drawn as raw BGRA bitmaps: one distinct look per fleet state, no image files.
import type { TrayVariant } from "../../shared/fleet/tray";

type Rgb = [number, number, number];

const FILL: Record<TrayVariant, Rgb | null> = {
  "nothing-paired": null, // hollow ring
  failed: [224, 49, 49],
  "needs-you": [217, 72, 15],
  "host-offline": [134, 142, 150],
  working: [47, 158, 68],
  "all-clear": [59, 91, 219],
};

/** A size×size BGRA bitmap: a disc (or ring) with an antialiased edge; offline gets a slash. */
export function trayIconBitmap(variant: TrayVariant, size: number): Buffer {
  const pixels = Buffer.alloc(size * size * 4);
  const center = (size - 1) / 2;
  const radius = size / 2 - 1;
  const fill = FILL[variant];
  const ring: Rgb = [134, 142, 150];
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const distance = Math.hypot(x - center, y - center);
      let alpha = Math.max(0, Math.min(1, radius + 0.5 - distance));
      let color = fill ?? ring;
      if (!fill) alpha *= Math.max(0, Math.min(1, distance - (radius - size / 8)));
      if (variant === "host-offline" && Math.abs(x - y) <= size / 16 && alpha > 0) color = [255, 255, 255];
      const offset = (y * size + x) * 4;
      pixels[offset] = color[2];
      pixels[offset + 1] = color[1];
      pixels[offset + 2] = color[0];
      pixels[offset + 3] = Math.round(alpha * 255);
    }
  }
  return pixels;
}
