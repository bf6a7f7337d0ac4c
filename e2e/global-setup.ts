// Builds the renderer once so the headless shell serves what the app ships.
import { execFileSync } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export default function globalSetup(): void {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  execFileSync(process.execPath, [resolve(root, "node_modules/electron-vite/bin/electron-vite.js"), "build"], { cwd: root, stdio: "inherit" });
}
