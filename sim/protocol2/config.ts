// What a simulated protocol-2 server says about itself over `server.getConfig` (the same thirteen
// keys the real V2 engine sends: environment, auth, providers, settings, resume markers…), and the
// `projects.mutate` command it takes.
import { z } from "zod";
import { PROVIDERS } from "../providers";
import type { V2Settings } from "./engine";

export const ProjectCreate = z.object({
  type: z.literal("project.create"),
  commandId: z.string().min(1),
  projectId: z.string().min(1),
  title: z.string().min(1),
  workspaceRoot: z.string().min(1),
  createWorkspaceRootIfMissing: z.boolean().optional(),
});

const shortcut = (key: string, extra: { altKey?: boolean } = {}) => ({
  key,
  metaKey: false,
  ctrlKey: false,
  shiftKey: false,
  altKey: extra.altKey ?? false,
  modKey: true,
});

function providerStatus(instanceId: string, checkedAt: string): Record<string, unknown> {
  const known = PROVIDERS[instanceId as keyof typeof PROVIDERS];
  return {
    instanceId,
    driver: instanceId,
    displayName: known?.label ?? instanceId,
    continuation: { groupKey: `${instanceId}:instance:${instanceId}` },
    showInteractionModeToggle: true,
    enabled: true,
    installed: true,
    version: "0.0.0-sim",
    status: "ready",
    auth: { status: "authenticated" },
    checkedAt,
    models: known ? [{ slug: known.model, name: known.model, isCustom: false, capabilities: {} }] : [],
    slashCommands: [],
    skills: [],
  };
}

export function serverConfig(environment: Record<string, unknown>, auth: Record<string, unknown>, settings: V2Settings): Record<string, unknown> {
  const checkedAt = new Date().toISOString();
  return {
    environment,
    auth,
    cwd: "/home/user",
    keybindingsConfigPath: "/home/user/.t3/userdata/keybindings.json",
    keybindings: [
      { command: "sidebar.toggle", shortcut: shortcut("b") },
      { command: "terminal.toggle", shortcut: shortcut("j") },
      { command: "rightPanel.toggle", shortcut: shortcut("b", { altKey: true }) },
    ],
    issues: [],
    providers: Object.keys(PROVIDERS).map((instanceId) => providerStatus(instanceId, checkedAt)),
    availableEditors: ["file-manager"],
    observability: { logsDirectoryPath: "/home/user/.t3/userdata/logs", localTracingEnabled: true, otlpTracesEnabled: false, otlpMetricsEnabled: false },
    settings: {
      enableLegacyTokenStreaming: settings.enableLegacyTokenStreaming,
      enableProviderUpdateChecks: true,
      defaultThreadEnvMode: "local",
      providers: Object.fromEntries(Object.keys(PROVIDERS).map((instanceId) => [instanceId, { enabled: true, customModels: [] }])),
      providerInstances: {},
    },
    shellResumeCompletionMarker: true,
    threadResumeCompletionMarker: true,
    threadSnapshotPagination: true,
  };
}
