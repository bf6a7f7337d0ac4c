// Where bearer tokens live: the OS keychain through keytar; or, where keytar cannot load or no
// keychain answers, a file only this user can read (the Electron shell encrypts its entries with
// safeStorage, electron/main/safe-storage-secrets.ts; the headless shell relies on file permissions).
// A token is never written anywhere else, never logged and never sent to a UI.
import { readFile, stat, chmod } from "node:fs/promises";
import { z } from "zod";
import { parseJson } from "../../shared/t3/decode";
import { writePrivateFile } from "./private-files";
import { OriginToken, originOf } from "./t3/origin-token";

export interface SecretStore {
  /** Shown to the user: where tokens are kept. */
  readonly description: string;
  get(environmentId: string): Promise<string | undefined>;
  set(environmentId: string, token: string): Promise<void>;
  delete(environmentId: string): Promise<void>;
}

/** The keychain service name; each environment is one account, keyed by environmentId. */
export const KEYCHAIN_SERVICE = "T3 Fleet";

type Keytar = {
  getPassword(service: string, account: string): Promise<string | null>;
  setPassword(service: string, account: string, password: string): Promise<void>;
  deletePassword(service: string, account: string): Promise<boolean>;
  findCredentials(service: string): Promise<{ account: string; password: string }[]>;
};

export class KeytarSecretStore implements SecretStore {
  readonly description = "the system keychain";

  private constructor(
    private readonly keytar: Keytar,
    private readonly service: string,
  ) {}

  /**
   * Loads keytar and proves the keychain answers (on Linux a Secret Service must be running).
   * Rejects with a clear message otherwise, so the caller can choose another store.
   */
  static async open(service = KEYCHAIN_SERVICE): Promise<KeytarSecretStore> {
    let keytar: Keytar;
    try {
      const module = (await import("keytar")) as unknown as { default?: Keytar } & Keytar;
      keytar = module.default ?? module;
    } catch (error) {
      throw new Error(`The keychain module could not load: ${(error as Error).message}`);
    }
    try {
      await keytar.findCredentials(service);
    } catch (error) {
      throw new Error(`The system keychain did not answer: ${(error as Error).message}`);
    }
    return new KeytarSecretStore(keytar, service);
  }

  async get(environmentId: string): Promise<string | undefined> {
    return (await this.keytar.getPassword(this.service, environmentId)) ?? undefined;
  }

  async set(environmentId: string, token: string): Promise<void> {
    await this.keytar.setPassword(this.service, environmentId, token);
  }

  async delete(environmentId: string): Promise<void> {
    await this.keytar.deletePassword(this.service, environmentId);
  }
}

/**
 * Keeps tokens in this process only: used when no keychain exists and the user accepted that
 * (headless `--ephemeral-secrets`, the demo). Tokens are gone when the process ends.
 */
export class MemorySecretStore implements SecretStore {
  readonly description = "memory only (tokens are forgotten when T3 Fleet stops)";
  private readonly tokens = new Map<string, string>();

  async get(environmentId: string): Promise<string | undefined> {
    return this.tokens.get(environmentId);
  }

  async set(environmentId: string, token: string): Promise<void> {
    this.tokens.set(environmentId, token);
  }

  async delete(environmentId: string): Promise<void> {
    this.tokens.delete(environmentId);
  }
}

/** How a file store turns a token into what it writes, and back (identity, or an OS-backed cipher). */
export interface SecretCodec {
  encode(token: string): string;
  decode(stored: string): string;
}

const PLAIN: SecretCodec = { encode: (token) => token, decode: (stored) => stored };
const SecretsFile = z.record(z.string(), z.string());

/**
 * What an environment id may be as a storage key: T3's ids are UUIDs or short slugs. Anything else
 * (`__proto__`, `constructor`, control characters, absurd lengths) is refused before any lookup.
 */
const STORABLE_ENVIRONMENT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;
const OBJECT_PROTOTYPE_KEYS = new Set(Object.getOwnPropertyNames(Object.prototype));

export function isStorableEnvironmentId(environmentId: string): boolean {
  return STORABLE_ENVIRONMENT_ID.test(environmentId) && !OBJECT_PROTOTYPE_KEYS.has(environmentId);
}

/**
 * Tokens in one JSON file, mode 0600 in a 0700 folder, replaced atomically; writes are serialized.
 * Without a codec the file is plain text and only file permissions protect it: whoever can read
 * this user's files (this user's processes, root, a backup) can read the tokens.
 */
export class FileSecretStore implements SecretStore {
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly path: string,
    readonly description = `in ${path}, readable only by this user (file permissions 0600; not encrypted)`,
    private readonly codec: SecretCodec = PLAIN,
  ) {}

  /** The file's entries as a Map: an id such as `__proto__` is a key like any other, never a property lookup. */
  private async read(): Promise<Map<string, string>> {
    let text: string;
    try {
      // A file someone else widened is narrowed again before it is trusted with more tokens.
      if (((await stat(this.path)).mode & 0o077) !== 0) await chmod(this.path, 0o600);
      text = await readFile(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return new Map();
      throw error;
    }
    const json = parseJson(text);
    const parsed = json.ok ? SecretsFile.safeParse(json.value) : undefined;
    if (!parsed?.success) throw new Error(`The token file ${this.path} is not valid; pair the environments again.`);
    return new Map(Object.entries(parsed.data).filter(([environmentId]) => isStorableEnvironmentId(environmentId)));
  }

  async get(environmentId: string): Promise<string | undefined> {
    if (!isStorableEnvironmentId(environmentId)) return undefined;
    const entry = (await this.read()).get(environmentId);
    return entry === undefined ? undefined : this.codec.decode(entry);
  }

  set(environmentId: string, token: string): Promise<void> {
    if (!isStorableEnvironmentId(environmentId))
      return Promise.reject(new Error(`Refusing to store a token under the environment id ${JSON.stringify(environmentId.slice(0, 80))}.`));
    return this.change((entries) => void entries.set(environmentId, this.codec.encode(token)));
  }

  delete(environmentId: string): Promise<void> {
    return this.change((entries) => void entries.delete(environmentId));
  }

  private change(mutate: (entries: Map<string, string>) => void): Promise<void> {
    const run = async () => {
      const entries = await this.read();
      mutate(entries);
      await writePrivateFile(this.path, JSON.stringify(Object.fromEntries(entries)));
    };
    const next = this.writes.then(run, run);
    this.writes = next.catch(() => {});
    return next;
  }
}

/** A token as stored: with the origin (scheme://host:port) that issued it. */
const BoundEntry = z.object({ origin: z.string().url(), token: z.string().min(1) });

/**
 * The secret store as the fleet uses it: every token is kept with the origin that issued it and is
 * handed out only for that origin, as an OriginToken that T3Http sends to that origin alone, so no
 * code path can send it to another server, whatever that server claims to be. Nothing is cached
 * here: each caller reads the store when it needs the token. Entries stored before tokens were
 * bound (a bare token) count as issued by the origin the registry recorded for that environment:
 * the registry and the token changed address together until now, and from now on the address
 * changes only with a new, bound token.
 */
export class OriginBoundSecrets {
  constructor(
    private readonly store: SecretStore,
    /** Where the registry says an environment was paired (the origin of a legacy bare token). */
    private readonly registeredOrigin: (environmentId: string) => string | undefined,
  ) {}

  get description(): string {
    return this.store.description;
  }

  /** The token `origin` issued for `environmentId`; undefined for any other origin. */
  async get(environmentId: string, origin: string): Promise<OriginToken | undefined> {
    if (!isStorableEnvironmentId(environmentId)) return undefined;
    const wanted = originOf(origin);
    const stored = await this.store.get(environmentId);
    if (stored === undefined) return undefined;
    const entry = decodeBoundEntry(stored);
    if (entry) {
      return entry.origin === wanted ? OriginToken.issuedBy(entry.origin, entry.token) : undefined;
    }
    const legacyOrigin = this.registeredOrigin(environmentId);
    if (legacyOrigin === undefined || originOf(legacyOrigin) !== wanted) return undefined;
    // Not rewritten here: a store may ask the user before writing (AskFirstSecretStore); the next
    // pairing of this machine stores its token bound.
    return stored ? OriginToken.issuedBy(wanted, stored) : undefined;
  }

  /** Stores `token` for `environmentId`, with the origin that issued it. */
  async set(environmentId: string, token: OriginToken): Promise<void> {
    const secret = token.secretFor(token.origin)!;
    await this.store.set(environmentId, JSON.stringify({ origin: token.origin, token: secret }));
  }

  async delete(environmentId: string): Promise<void> {
    await this.store.delete(environmentId);
  }
}

function decodeBoundEntry(stored: string): { origin: string; token: string } | undefined {
  if (!stored.startsWith("{")) return undefined;
  const json = parseJson(stored);
  const entry = json.ok ? BoundEntry.safeParse(json.value) : undefined;
  return entry?.success ? { origin: originOf(entry.data.origin), token: entry.data.token } : undefined;
}
