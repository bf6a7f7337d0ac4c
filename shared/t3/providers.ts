// The harnesses and models a T3 server reports in `server.getConfig` (`providers`, the same shape on
// both protocols: ../shared/fixtures/t3-0.0.33/ws-server-getConfig-result.json and
// t3-v2dev/00-handshake.json), decoded for the "New agent" form (shared/fleet/creation.ts). A
// provider that does not decode is left out, not guessed.
import { z } from "zod";
import { type LaunchProvider, providerUnavailable } from "../fleet/creation";

const Model = z.object({ slug: z.string().min(1), name: z.string().optional(), isLegacy: z.boolean().optional() });

const ProviderStatus = z.object({
  instanceId: z.string().min(1),
  driver: z.string().min(1).optional(),
  displayName: z.string().optional(),
  enabled: z.boolean().default(true),
  installed: z.boolean().default(true),
  status: z.string().default("ready"),
  message: z.string().nullish(),
  models: z.array(z.unknown()).default([]),
});

export const ServerConfigProviders = z.object({ providers: z.array(z.unknown()).default([]) });

/** The providers of a decoded `server.getConfig` answer, each with why it cannot be used (null: it can). */
export function launchProviders(config: unknown): LaunchProvider[] {
  const decoded = ServerConfigProviders.safeParse(config);
  if (!decoded.success) return [];
  return decoded.data.providers.flatMap((raw) => {
    const provider = ProviderStatus.safeParse(raw);
    if (!provider.success) return [];
    const { instanceId, driver, displayName, enabled, installed, status, message } = provider.data;
    const models = provider.data.models.flatMap((model) => {
      const parsed = Model.safeParse(model);
      return parsed.success ? [{ slug: parsed.data.slug, name: parsed.data.name ?? parsed.data.slug }] : [];
    });
    return [
      {
        instanceId,
        driver: driver ?? instanceId,
        name: displayName ?? instanceId,
        status,
        models,
        unavailable: providerUnavailable({ enabled, installed, status, message: message ?? null, models }),
      },
    ];
  });
}
