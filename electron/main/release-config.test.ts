// The release build's configuration, tested as data (no Electron binary can be packaged here):
// electron-builder's own schema accepts it, and the fuses that close the usual doors are set.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const loadConfig = async () => JSON.parse(await readFile(join(root, "electron-builder.json"), "utf8")) as Record<string, unknown>;

describe("release build configuration", () => {
  it("is valid for the installed electron-builder", async () => {
    // The validator electron-builder itself runs before packaging, resolved the way it resolves it.
    const builderRequire = createRequire(createRequire(import.meta.url).resolve("electron-builder/package.json"));
    const { validateConfiguration } = builderRequire("app-builder-lib/out/util/config/config") as {
      validateConfiguration(config: unknown, debugLogger: { isEnabled: boolean; add(): void }): Promise<void>;
    };
    const logger = { isEnabled: false, add: () => {} };
    await expect(validateConfiguration(await loadConfig(), logger)).resolves.toBeUndefined();
    await expect(validateConfiguration({ ...(await loadConfig()), electronFuses: { runAsNode: false, noSuchFuse: true } }, logger)).rejects.toThrow(
      /configuration.electronFuses/,
    );
  });

  it("flips the fuses: no RunAsNode, NODE_OPTIONS or --inspect; encrypted cookies; ASAR integrity, app only from the ASAR", async () => {
    const config = await loadConfig();
    expect(config.asar).toBe(true);
    expect(config.electronFuses).toMatchObject({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableCookieEncryption: true,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      // The renderer is served from app:// (electron/main/app-protocol.ts): file:// needs no extra power.
      grantFileProtocolExtraPrivileges: false,
    });
  });
});
