// The environment registry: ids, labels, URLs, auth generation and settings, never secrets.
// One JSON file in the app data directory, written atomically. A corrupt file is kept as a backup
// and reported; entries that still decode are kept, so nothing else is lost.
import { copyFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { DEFAULT_CONTEXT_WARNING_PERCENT } from "../../shared/fleet/changes-usage";
import { DEFAULT_NOTIFICATION_SETTINGS } from "../../shared/fleet/notifications";
import { parseJson } from "../../shared/t3/decode";
import { cleanLabel } from "../../shared/t3/text";
import { writePrivateFile } from "./private-files";

export const REGISTRY_FILE = "fleet.json";
/** Running with no news for this long flags an agent stalled; users can change it. */
export const DEFAULT_STALLED_AFTER_MS = 5 * 60_000;

export const EnvironmentRecord = z.object({
  environmentId: z.string().min(1),
  /** The server's own label at pairing time (cleaned again on load: files written before labels were cleaned keep raw ones). */
  serverLabel: z.string().transform(cleanLabel),
  /** A label the user chose, shown instead of the server's; one with nothing visible left is no label. */
  customLabel: z
    .string()
    .nullable()
    .default(null)
    .transform((label) => (label === null ? null : cleanLabel(label) || null)),
  baseUrl: z.string().url(),
  generation: z.enum(["fork", "upstream"]),
  readOnly: z.boolean().default(false),
  serverVersion: z.string().nullable().default(null),
  /** The orchestration protocol the server announced on the latest connect (1 when it announced none). */
  protocol: z.number().int().positive().nullable().optional(),
  muted: z.boolean().default(false),
  pairedAt: z.string(),
});
export type EnvironmentRecord = z.infer<typeof EnvironmentRecord>;

export const FleetSettings = z.object({
  notifications: z
    .object({
      needsApproval: z.boolean(),
      needsInput: z.boolean(),
      failed: z.boolean(),
      // Added later (issue 25): a registry written before them turns them on.
      stalled: z.boolean().default(DEFAULT_NOTIFICATION_SETTINGS.stalled),
      heldUp: z.boolean().default(DEFAULT_NOTIFICATION_SETTINGS.heldUp),
      // Added later (issue 24), likewise.
      contextFull: z.boolean().default(DEFAULT_NOTIFICATION_SETTINGS.contextFull),
      hostOffline: z.boolean(),
    })
    .default(DEFAULT_NOTIFICATION_SETTINGS),
  notificationsPaused: z.boolean().default(false),
  stalledAfterMs: z.number().int().positive().default(DEFAULT_STALLED_AFTER_MS),
  // Issue 24's changes and usage settings; a registry written before them gets the defaults.
  contextWarningPercent: z.number().int().min(1).max(100).default(DEFAULT_CONTEXT_WARNING_PERCENT),
  finishedWithChangesInInbox: z.boolean().default(false),
});
export type FleetSettings = z.infer<typeof FleetSettings>;

const RegistryFileSchema = z.object({
  version: z.literal(1),
  environments: z.array(z.unknown()),
  settings: z.unknown().optional(),
  acknowledgements: z.unknown().optional(),
  snoozes: z.unknown().optional(),
  reviews: z.unknown().optional(),
});

/** agent key → fingerprint of the failure or stall the user acknowledged (shared/fleet/acknowledge.ts). */
const Acknowledgements = z.record(z.string().max(2_000), z.string().max(4_000));

/** agent key → the snooze T3 Fleet keeps where T3 does not (shared/fleet/snooze.ts; electron/fleet/snoozes.ts). */
const Snoozes = z.record(
  z.string().max(2_000),
  z.object({ until: z.number().int().nonnegative().nullable(), fingerprint: z.string().max(4_000), note: z.string().max(2_000).nullable().optional() }),
);
type KeptSnooze = z.infer<typeof Snoozes>[string];

/**
 * How many agents' reviewed turns the registry keeps: the most recently marked ones. An agent past the
 * bound whose latest turn has changes comes back as not reviewed, which is the safe way to be wrong.
 */
export const MAX_KEPT_REVIEWS = 5_000;

/** agent key → the latest turn (its count) whose changes the user marked reviewed (electron/fleet/reviews.ts). */
const Reviews = z.record(z.string().max(2_000), z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER));

export class Registry {
  private records = new Map<string, EnvironmentRecord>();
  private settingsValue: FleetSettings = FleetSettings.parse({});
  private acknowledgementValues = new Map<string, string>();
  private snoozeValues = new Map<string, KeptSnooze>();
  private reviewValues = new Map<string, number>();
  private writes: Promise<void> = Promise.resolve();
  /** Set when the file exists but cannot be read: never overwrite what we could not read. */
  private frozen = false;

  private constructor(readonly path: string) {}

  /** Opens (or creates) the registry; `problems` explains anything that could not be read. */
  static async open(directory: string): Promise<{ registry: Registry; problems: string[] }> {
    await mkdir(directory, { recursive: true });
    const registry = new Registry(join(directory, REGISTRY_FILE));
    const problems = await registry.load();
    return { registry, problems };
  }

  private async load(): Promise<string[]> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      this.frozen = true;
      return [`The fleet registry ${this.path} could not be read (${(error as Error).message}); it was left untouched and changes will not be saved.`];
    }
    const backup = async () => {
      const target = `${this.path}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`;
      await copyFile(this.path, target);
      return target;
    };
    const json = parseJson(text);
    const file = json.ok ? RegistryFileSchema.safeParse(json.value) : undefined;
    if (!file?.success) {
      const target = await backup();
      return [`The fleet registry was not valid (${json.ok ? "unexpected structure" : json.message}). It was kept as ${target}; pair your environments again.`];
    }
    const problems: string[] = [];
    let skipped = 0;
    for (const raw of file.data.environments) {
      const record = EnvironmentRecord.safeParse(raw);
      if (record.success) this.records.set(record.data.environmentId, record.data);
      else skipped++;
    }
    const settings = FleetSettings.safeParse(file.data.settings ?? {});
    if (settings.success) this.settingsValue = settings.data;
    // Acknowledgements are a convenience: unreadable ones are dropped (the agents simply count again).
    const acknowledgements = Acknowledgements.safeParse(file.data.acknowledgements ?? {});
    if (acknowledgements.success) this.acknowledgementValues = new Map(Object.entries(acknowledgements.data));
    // So are snoozes: an unreadable one is dropped and the agent simply counts again.
    const snoozes = Snoozes.safeParse(file.data.snoozes ?? {});
    if (snoozes.success) this.snoozeValues = new Map(Object.entries(snoozes.data));
    // And reviewed turns: an unreadable set is dropped and those agents' changes await review again.
    // Written oldest first, so a file over the bound (edited by hand) keeps the newest.
    const reviews = Reviews.safeParse(file.data.reviews ?? {});
    if (reviews.success) this.reviewValues = new Map(Object.entries(reviews.data).slice(-MAX_KEPT_REVIEWS));
    if (skipped > 0 || !settings.success) {
      const target = await backup();
      problems.push(
        `${skipped > 0 ? `${skipped} environment record(s)` : "The settings"} in the fleet registry could not be read and were left out; the original was kept as ${target}.`,
      );
    }
    return problems;
  }

  get environments(): EnvironmentRecord[] {
    return [...this.records.values()];
  }

  get(environmentId: string): EnvironmentRecord | undefined {
    return this.records.get(environmentId);
  }

  get settings(): FleetSettings {
    return this.settingsValue;
  }

  async upsert(record: EnvironmentRecord, what = `the pairing of ${record.customLabel ?? record.serverLabel}`): Promise<void> {
    const parsed = EnvironmentRecord.parse(record);
    await this.commit(what, (draft) => void draft.records.set(parsed.environmentId, parsed));
  }

  async update(environmentId: string, patch: Partial<EnvironmentRecord>): Promise<EnvironmentRecord | undefined> {
    let next: EnvironmentRecord | undefined;
    await this.commit(describePatch(patch), (draft) => {
      const record = draft.records.get(environmentId);
      if (!record) return false;
      next = EnvironmentRecord.parse({ ...record, ...patch, environmentId });
      draft.records.set(environmentId, next);
    });
    return next;
  }

  async remove(environmentId: string): Promise<void> {
    await this.commit("removing the machine", (draft) => {
      draft.records.delete(environmentId);
      for (const agentKey of [...draft.acknowledgements.keys()]) if (agentKey.startsWith(`${environmentId}/`)) draft.acknowledgements.delete(agentKey);
      for (const agentKey of [...draft.snoozes.keys()]) if (agentKey.startsWith(`${environmentId}/`)) draft.snoozes.delete(agentKey);
      for (const agentKey of [...draft.reviews.keys()]) if (agentKey.startsWith(`${environmentId}/`)) draft.reviews.delete(agentKey);
    });
  }

  get acknowledgements(): ReadonlyMap<string, string> {
    return this.acknowledgementValues;
  }

  /** Records (or with null forgets) the acknowledged condition of an agent. */
  async setAcknowledgement(agentKey: string, fingerprint: string | null): Promise<void> {
    await this.commit("the acknowledgement", (draft) => {
      if (fingerprint === null) return draft.acknowledgements.delete(agentKey);
      if (draft.acknowledgements.get(agentKey) === fingerprint) return false;
      draft.acknowledgements.set(agentKey, fingerprint);
    });
  }

  get snoozes(): ReadonlyMap<string, KeptSnooze> {
    return this.snoozeValues;
  }

  /** Records (or with null forgets) the snooze T3 Fleet keeps for an agent. */
  async setSnooze(agentKey: string, snooze: KeptSnooze | null): Promise<void> {
    await this.commit("the snooze", (draft) => {
      if (snooze === null) return draft.snoozes.delete(agentKey);
      draft.snoozes.set(agentKey, snooze);
    });
  }

  get reviews(): ReadonlyMap<string, number> {
    return this.reviewValues;
  }

  /**
   * Records (or with null forgets) the latest turn whose changes the user marked reviewed. The newest
   * mark goes last; past MAX_KEPT_REVIEWS agents the oldest marks are forgotten.
   */
  async setReviewed(agentKey: string, turnCount: number | null): Promise<void> {
    await this.commit(turnCount === null ? "bringing the changes back" : "marking the changes reviewed", (draft) => {
      if (turnCount === null) return draft.reviews.delete(agentKey);
      if (draft.reviews.get(agentKey) === turnCount) return false;
      draft.reviews.delete(agentKey);
      draft.reviews.set(agentKey, turnCount);
      for (const oldest of draft.reviews.keys()) {
        if (draft.reviews.size <= MAX_KEPT_REVIEWS) break;
        draft.reviews.delete(oldest);
      }
    });
  }

  async updateSettings(patch: Partial<FleetSettings>): Promise<FleetSettings> {
    await this.commit(describeSettingsPatch(patch), (draft) => void (draft.settings = FleetSettings.parse({ ...draft.settings, ...patch })));
    return this.settingsValue;
  }

  /**
   * Applies `change` to a copy of the current state, writes that copy, and only once it is on disk
   * makes it the state everyone reads: a failed save changes nothing, in memory or on disk, and is
   * never written later by an unrelated save. `change` returning false means "nothing to save".
   * Changes are serialized, each on top of the last one that was saved.
   */
  private commit(what: string, change: (draft: RegistryState) => boolean | void): Promise<void> {
    const run = async () => {
      if (this.frozen) throw new Error(`The fleet registry ${this.path} could not be read earlier; not overwriting it, so ${what} was not saved.`);
      const draft: RegistryState = {
        records: new Map(this.records),
        settings: this.settingsValue,
        acknowledgements: new Map(this.acknowledgementValues),
        snoozes: new Map(this.snoozeValues),
        reviews: new Map(this.reviewValues),
      };
      if (change(draft) === false) return;
      const file = {
        version: 1,
        environments: [...draft.records.values()],
        settings: draft.settings,
        acknowledgements: Object.fromEntries(draft.acknowledgements),
        snoozes: Object.fromEntries(draft.snoozes),
        reviews: Object.fromEntries(draft.reviews),
      };
      await writePrivateFile(this.path, `${JSON.stringify(file, null, 2)}\n`, what);
      this.records = draft.records;
      this.settingsValue = draft.settings;
      this.acknowledgementValues = draft.acknowledgements;
      this.snoozeValues = draft.snoozes;
      this.reviewValues = draft.reviews;
    };
    const next = this.writes.then(run, run);
    this.writes = next.catch(() => {});
    return next;
  }
}

interface RegistryState {
  records: Map<string, EnvironmentRecord>;
  settings: FleetSettings;
  acknowledgements: Map<string, string>;
  snoozes: Map<string, KeptSnooze>;
  reviews: Map<string, number>;
}

/** A change to a machine, named as the user made it (for "…: the rename was not saved"). */
function describePatch(patch: Partial<EnvironmentRecord>): string {
  if (patch.customLabel !== undefined) return "the rename";
  if (patch.muted !== undefined) return patch.muted ? "muting the machine" : "unmuting the machine";
  return "the change to the machine";
}

function describeSettingsPatch(patch: Partial<FleetSettings>): string {
  if (patch.notificationsPaused !== undefined) return patch.notificationsPaused ? "pausing notifications" : "resuming notifications";
  if (patch.stalledAfterMs !== undefined) return "the stalled time";
  if (patch.contextWarningPercent !== undefined) return "the context limit setting";
  if (patch.finishedWithChangesInInbox !== undefined) return "the finished-with-changes setting";
  if (patch.notifications !== undefined) return "the notification settings";
  return "the settings change";
}
