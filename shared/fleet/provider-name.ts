// Provider names as people know them. T3 names a provider by its driver id (`claudeAgent`) and the
// instance the user configured (usually the driver id again); neither is meant for people. Every
// place that shows a provider (the tree, the agent panel, the provider filter, the composer's notes)
// goes through `providerName`.
import type { AgentView } from "./types";

/** T3's driver ids (shared/t3/protocol1/harnesses.ts, sim/protocol2/config.ts) and the names people use. */
const DRIVER_NAMES: Record<string, string> = {
  codex: "Codex",
  claudeAgent: "Claude",
  claudeCode: "Claude",
  claude: "Claude",
  opencode: "OpenCode",
  grok: "Grok",
  cursor: "Cursor",
  gemini: "Gemini",
};

/** A driver id's name for people; an id the fleet does not know shows as T3 sent it. */
export function driverName(driver: string): string {
  return Object.hasOwn(DRIVER_NAMES, driver) ? DRIVER_NAMES[driver]! : driver;
}

/**
 * The agent's provider for people: the driver's name, with the instance id beside it only where the
 * user named an instance of their own ("Claude (claude-work)"), so two instances stay apart.
 */
export function providerName(agent: Pick<AgentView, "providerDriver" | "providerInstanceId">): string {
  const driver = agent.providerDriver ?? agent.providerInstanceId;
  const name = driverName(driver);
  const instance = agent.providerInstanceId;
  return instance === driver || driverName(instance) === name ? name : `${name} (${instance})`;
}
