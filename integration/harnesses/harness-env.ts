// How each real harness is pointed at the scripted model server (integration/model) and kept
// offline, for a T3 server started with its own HOME: the files each CLI reads from that HOME and
// the environment T3 passes on to the CLIs it spawns. Telemetry, update checks, plugin and model-list
// fetches are off by configuration; integration/harnesses/offline.test.ts checks nothing tried anyway.
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type HarnessName, harnessExecutable } from "./install";

/** The model id threads ask for: the scripted server answers any id, so one name serves every harness. */
export const SCRIPTED_MODEL = "scripted-model";
/** OpenCode names a model `<provider>/<model>`. */
export const OPENCODE_MODEL = `scripted/${SCRIPTED_MODEL}`;
/** The dummy key each harness sends its model (the scripted server checks none). */
const DUMMY_KEY = "scripted-dummy-key";

/**
 * Codex retries a failing model five times by default (about 24 s for a 500 before T3 shows the
 * error); four still rides out the scripted capacity limit (three 429s) and keeps a 500 quicker.
 */
const CODEX_RETRIES = 4;

export interface PreparedHarnesses {
  /** Environment for the T3 server, which its providers inherit. */
  env: Record<string, string>;
}

function codexConfig(modelUrl: string): string {
  return [
    `model = "${SCRIPTED_MODEL}"`,
    `model_provider = "scripted"`,
    "check_for_update_on_startup = false",
    "",
    "[model_providers.scripted]",
    `name = "Scripted model"`,
    `base_url = "${modelUrl}/v1"`,
    `wire_api = "responses"`,
    `env_key = "SCRIPTED_MODEL_API_KEY"`,
    `request_max_retries = ${CODEX_RETRIES}`,
    `stream_max_retries = ${CODEX_RETRIES}`,
    "",
    // Without these Codex asks github.com, api.github.com and chatgpt.com (seen offline).
    "[features]",
    "plugins = false",
    "",
    "[analytics]",
    "enabled = false",
    "",
  ].join("\n");
}

function opencodeConfig(modelUrl: string): string {
  return `${JSON.stringify(
    {
      $schema: "https://opencode.ai/config.json",
      autoupdate: false,
      share: "disabled",
      model: OPENCODE_MODEL,
      provider: {
        scripted: {
          npm: "@ai-sdk/openai-compatible",
          name: "Scripted model",
          options: { baseURL: `${modelUrl}/v1`, apiKey: DUMMY_KEY },
          models: { [SCRIPTED_MODEL]: { name: "Scripted model", limit: { context: 200_000, output: 32_000 } } },
        },
      },
    },
    null,
    2,
  )}\n`;
}

/**
 * Writes each harness's configuration under `home`, links the pinned executables into `binDir`
 * (which goes first on the server's PATH) and returns the environment T3 needs so that every
 * provider it spawns talks only to `modelUrl`. `baseDir` is T3's base directory (its settings).
 */
export async function prepareHarnesses(options: {
  home: string;
  binDir: string;
  baseDir: string;
  modelUrl: string;
  harnesses: HarnessName[];
}): Promise<PreparedHarnesses> {
  const { home, binDir, baseDir, modelUrl, harnesses } = options;
  const env: Record<string, string> = {
    // T3's own tracing exporter otherwise looks up its public host.
    T3CODE_RELAY_CLIENT_OTLP_TRACES_URL: `${modelUrl}/otlp/v1/traces`,
  };
  for (const name of harnesses) await symlink(harnessExecutable(name), join(binDir, name));
  if (harnesses.includes("codex")) {
    const codexHome = join(home, ".codex");
    await mkdir(codexHome, { recursive: true });
    await writeFile(join(codexHome, "config.toml"), codexConfig(modelUrl));
    Object.assign(env, { CODEX_HOME: codexHome, SCRIPTED_MODEL_API_KEY: DUMMY_KEY });
  }
  if (harnesses.includes("claude")) {
    Object.assign(env, {
      ANTHROPIC_BASE_URL: modelUrl,
      ANTHROPIC_API_KEY: DUMMY_KEY,
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
      DISABLE_AUTOUPDATER: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      // The tests run as root, and T3 starts full-access Claude threads with
      // `--permission-mode bypassPermissions`, which Claude Code refuses as root unless told it is sandboxed.
      IS_SANDBOX: "1",
    });
  }
  if (harnesses.includes("opencode")) {
    const configDir = join(home, ".config/opencode");
    await mkdir(configDir, { recursive: true });
    await writeFile(join(configDir, "opencode.json"), opencodeConfig(modelUrl));
    Object.assign(env, {
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    });
  }
  // T3 asks registry.npmjs.org for each provider CLI's latest version and GitHub for its model
  // manifest unless `enableProviderUpdateChecks` is off; 0.0.42 ships OpenCode disabled until enabled.
  const settings = { enableProviderUpdateChecks: false, ...(harnesses.includes("opencode") && { providers: { opencode: { enabled: true } } }) };
  await mkdir(join(baseDir, "userdata"), { recursive: true });
  await writeFile(join(baseDir, "userdata/settings.json"), `${JSON.stringify(settings, null, 2)}\n`);
  return { env };
}
