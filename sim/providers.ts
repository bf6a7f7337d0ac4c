// The providers (harnesses) both protocols' simulators run, and what was seen of each under T3.
/**
 * `steers`: a message sent while a turn runs joins that turn on upstream servers: one turn, one reply
 * that covers both, as the real Codex and OpenCode did under T3 0.0.42. The real Claude Code finished
 * its turn first and T3 started a new one with the message; Grok was not observed
 * (docs/t3-protocols.md, "Harnesses under T3").
 */
export const PROVIDERS = {
  codex: { label: "Codex", model: "gpt-5.4", steers: true },
  claudeAgent: { label: "Claude", model: "claude-sonnet-4-6", steers: false },
  opencode: { label: "OpenCode", model: "openai/gpt-5", steers: true },
  grok: { label: "Grok", model: "grok-4", steers: false },
} as const;
export type ProviderKind = keyof typeof PROVIDERS;
