// `npm run serve -- [--port 4780] [--data-dir DIR] [--ephemeral-secrets] [--pair <pairing URL>]...`
// Runs the fleet service in Node and serves the UI and its bridge on 127.0.0.1. Prints the URL to open.
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { KeytarSecretStore, MemorySecretStore, type SecretStore } from "../fleet/secrets";
import { FleetService } from "../fleet/service";
import { startHeadlessShell } from "./server";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "0" },
    "data-dir": { type: "string" },
    "renderer-dir": { type: "string" },
    "ephemeral-secrets": { type: "boolean", default: false },
    pair: { type: "string", multiple: true, default: [] },
  },
});

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const dataDir = values["data-dir"] ?? join(process.env.XDG_CONFIG_HOME ?? join(homedir(), ".config"), "t3-fleet");

const notices: string[] = [];
let secrets: SecretStore;
if (values["ephemeral-secrets"]) {
  secrets = new MemorySecretStore();
  notices.push("Tokens are kept in memory only for this run (--ephemeral-secrets).");
} else {
  try {
    secrets = await KeytarSecretStore.open();
  } catch (error) {
    console.error(`${(error as Error).message}\nStart with --ephemeral-secrets to keep tokens in memory for this run only.`);
    process.exit(1);
  }
}

const service = await FleetService.start({ dataDir, secrets, notices });
for (const link of values.pair) {
  try {
    const paired = await service.request("pair.confirm", { input: link });
    console.log(`paired ${(paired as { label: string }).label}`);
  } catch (error) {
    console.error(`could not pair ${link.replace(/#.*/, "#…")}: ${(error as Error).message}`);
  }
}
const shell = await startHeadlessShell({
  service,
  rendererDir: values["renderer-dir"] ?? join(repoRoot, "out/renderer"),
  port: Number(values.port),
});
console.log(`T3 Fleet is running. Open ${shell.url}`);

const shutdown = () => {
  void shell
    .close()
    .then(() => service.stop())
    .then(() => process.exit(0));
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
