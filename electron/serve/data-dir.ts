// Where `./fleet serve` keeps its data when no --data-dir is given: $XDG_CONFIG_HOME/t3-fleet, or
// ~/.config/t3-fleet. Per the XDG Base Directory spec an empty or relative XDG_CONFIG_HOME is
// ignored, so `XDG_CONFIG_HOME=""` never puts tokens in the current folder (say, a checkout).
import { isAbsolute, join } from "node:path";

export function defaultDataDir(env: NodeJS.ProcessEnv, home: string): string {
  const configHome = env.XDG_CONFIG_HOME;
  return join(configHome && isAbsolute(configHome) ? configHome : join(home, ".config"), "t3-fleet");
}
