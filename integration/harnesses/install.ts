// The real harness CLIs T3 runs, as pinned, checksum-verified test tools in the fleet cache (never
// app dependencies), installed the way the T3 executable is (integration/realt3/harness.testkit.ts):
// `npm pack` of the one registry package that carries each CLI's native Linux x64 binary (the
// optional dependency its launcher package would pick), its `dist.integrity` checked, unpacked once.
// Needs the npm registry: scripts/realt3.sh runs it before entering its network namespace.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, readdir, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export type HarnessName = "codex" | "claude" | "opencode";

export interface PinnedHarness {
  /** The command T3 spawns (found on PATH). */
  command: HarnessName;
  /** The package users install, whose launcher picks `package` on Linux x64. */
  launcher: string;
  /** The registry package (name@version) holding the native binary. */
  package: string;
  version: string;
  /** npm's `dist.integrity` of that tarball: any other tarball is refused. */
  integrity: string;
  /** The executable inside the unpacked tarball. */
  binary: string;
}

export const HARNESSES: Record<HarnessName, PinnedHarness> = {
  codex: {
    command: "codex",
    launcher: "@openai/codex@0.169.0",
    // @openai/codex's optional dependency @openai/codex-linux-x64 is this version of the same package.
    package: "@openai/codex@0.169.0-linux-x64",
    version: "0.169.0",
    integrity: "sha512-o05NyAOCDygSPRo1yinzxvkRSdmsZyBD9E7mbpmjRanSfM8lypqWtQgEo4XfNkwhuCR2aFu8mlGOsQGFXVbVww==",
    binary: "package/vendor/x86_64-unknown-linux-musl/bin/codex",
  },
  claude: {
    command: "claude",
    launcher: "@anthropic-ai/claude-code@2.1.328",
    package: "@anthropic-ai/claude-code-linux-x64@2.1.328",
    version: "2.1.328",
    integrity: "sha512-KuzL+dBHgDCFTHJxwW+xuBJdVKfBsesGx2BBcTOG9sYDGoAD7b1hUV8rsTS4xjoJsB2SmeGraGjBiFuhrYuC9w==",
    binary: "package/claude",
  },
  opencode: {
    command: "opencode",
    launcher: "opencode-ai@1.18.33",
    package: "opencode-linux-x64@1.18.33",
    version: "1.18.33",
    integrity: "sha512-q/t/3p2CTxOT9y2kvjesb/LZab2+1eqlhhWA02Be6mjTtmYtNBcBsrI5yDo4Fw7ZSPBW2oyMIGMNRqiKQjiAWw==",
    binary: "package/bin/opencode",
  },
};

function cacheRoot(): string {
  return process.env.T3_FLEET_CACHE ?? join(homedir(), ".cache/t3-fleet");
}

function installDir(harness: PinnedHarness): string {
  return join(cacheRoot(), "harnesses", `${harness.command}-${harness.version}`);
}

/** The installed executable of `name`; throws with the remedy when it is not installed. */
export function harnessExecutable(name: HarnessName): string {
  const harness = HARNESSES[name];
  const executable = join(installDir(harness), harness.binary);
  if (!existsSync(executable)) {
    throw new Error(
      `${harness.launcher} (${harness.package}) is not installed at ${executable}: run \`npx tsx integration/harnesses/install.ts\` (needs the npm registry) before the real-harness tests`,
    );
  }
  return executable;
}

async function sha512(file: string): Promise<string> {
  const hash = createHash("sha512");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return `sha512-${hash.digest("base64")}`;
}

/** Installs one harness unless the pinned tarball is already unpacked; returns its executable. */
export async function ensureHarnessInstalled(name: HarnessName, log: (line: string) => void = () => undefined): Promise<string> {
  const harness = HARNESSES[name];
  const dir = installDir(harness);
  const executable = join(dir, harness.binary);
  if (existsSync(executable) && (await readFile(join(dir, "integrity"), "utf8").catch(() => "")) === harness.integrity) return executable;
  log(`installing ${harness.package} (the native binary of ${harness.launcher}) into ${dir}`);
  await mkdir(dirname(dir), { recursive: true });
  const staging = await mkdtemp(`${dir}.partial-`);
  try {
    await run("npm", ["pack", harness.package, "--pack-destination", staging, "--silent"], { maxBuffer: 16 << 20 });
    const tarball = (await readdir(staging)).find((file) => file.endsWith(".tgz"));
    if (!tarball) throw new Error(`npm pack ${harness.package} left no tarball in ${staging}`);
    const integrity = await sha512(join(staging, tarball));
    if (integrity !== harness.integrity) throw new Error(`${harness.package}: integrity ${integrity} is not the pinned ${harness.integrity}`);
    await run("tar", ["-xzf", join(staging, tarball), "-C", staging]);
    await rm(join(staging, tarball));
    if (!existsSync(join(staging, harness.binary))) throw new Error(`${harness.package} has no ${harness.binary}`);
    await writeFile(join(staging, "integrity"), harness.integrity);
    await rm(dir, { recursive: true, force: true });
    await rename(staging, dir);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  return executable;
}

/** Installs every pinned harness, in parallel; returns their executables by name. */
export async function ensureHarnessesInstalled(log: (line: string) => void = () => undefined): Promise<Record<HarnessName, string>> {
  const names = Object.keys(HARNESSES) as HarnessName[];
  const paths = await Promise.all(names.map((name) => ensureHarnessInstalled(name, log)));
  return Object.fromEntries(names.map((name, index) => [name, paths[index]!])) as Record<HarnessName, string>;
}
