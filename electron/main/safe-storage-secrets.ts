// Where the Electron shell keeps tokens when keytar cannot load or no keychain answers: a 0600 file
// whose entries are encrypted with Electron's safeStorage. On Linux safeStorage may fall back to its
// `basic_text` backend, a fixed key that protects nothing: then the user is told so plainly and asked
// before a token is stored that way (issue 9).
import { FileSecretStore, MemorySecretStore, type SecretStore } from "../fleet/secrets";

/** The part of Electron's safeStorage this store uses (a thin wrapper, so tests need no Electron). */
export interface SafeStorageLike {
  isEncryptionAvailable(): boolean;
  encryptString(plainText: string): Buffer;
  decryptString(encrypted: Buffer): string;
  /** Linux only: which OS service holds the key (`basic_text` means none does). */
  getSelectedStorageBackend?(): string;
}

/** The answer to "store this token anyway?": on disk unprotected, or in memory for this run. */
export type UnprotectedChoice = "store-unprotected" | "memory-only";

/** Whether safeStorage's encryption is backed by the OS (keychain, DPAPI, libsecret, KWallet). */
export function safeStorageProtects(safeStorage: SafeStorageLike): boolean {
  if (!safeStorage.isEncryptionAvailable()) return false;
  const backend = safeStorage.getSelectedStorageBackend?.();
  return backend !== "basic_text" && backend !== "unknown";
}

/** A file store whose entries are encrypted with safeStorage. */
export function safeStorageFileStore(safeStorage: SafeStorageLike, path: string, description: string): FileSecretStore {
  return new FileSecretStore(path, description, {
    encode: (token) => safeStorage.encryptString(token).toString("base64"),
    decode: (stored) => safeStorage.decryptString(Buffer.from(stored, "base64")),
  });
}

export const UNPROTECTED_WARNING =
  "No system keychain is available and Electron's safe storage has no OS key here (basic_text backend), so tokens saved on disk would not be protected: anyone who can read your files could use them.";

/**
 * Asks once, before the first token is stored, whether to store tokens unprotected; until then and
 * if the user declines, tokens live in memory for this run only. Reads see both places.
 */
export class AskFirstSecretStore implements SecretStore {
  private choice: Promise<UnprotectedChoice> | undefined;
  private readonly memory = new MemorySecretStore();

  constructor(
    private readonly onDisk: SecretStore,
    private readonly ask: () => Promise<UnprotectedChoice>,
  ) {}

  get description(): string {
    return "on disk unprotected if you agree when pairing, otherwise in memory for this run only";
  }

  async get(environmentId: string): Promise<string | undefined> {
    return (await this.memory.get(environmentId)) ?? (await this.onDisk.get(environmentId));
  }

  async set(environmentId: string, token: string): Promise<void> {
    // A question that failed (say, the dialog could not open) is asked again next time, not cached.
    this.choice ??= this.ask().catch((error: unknown) => {
      this.choice = undefined;
      throw error;
    });
    if ((await this.choice) === "store-unprotected") await this.onDisk.set(environmentId, token);
    else await this.memory.set(environmentId, token);
  }

  async delete(environmentId: string): Promise<void> {
    await this.memory.delete(environmentId);
    await this.onDisk.delete(environmentId);
  }
}

/**
 * The desktop's token store: the keychain; else safeStorage-encrypted file when the OS backs it;
 * else (basic_text, or no encryption at all) ask before storing anything unprotected.
 */
export async function openDesktopSecrets(options: {
  openKeychain: () => Promise<SecretStore>;
  safeStorage: SafeStorageLike;
  path: string;
  ask: () => Promise<UnprotectedChoice>;
}): Promise<{ secrets: SecretStore; notices: string[] }> {
  try {
    return { secrets: await options.openKeychain(), notices: [] };
  } catch (keytarError) {
    const reason = (keytarError as Error).message;
    const { safeStorage, path } = options;
    if (safeStorageProtects(safeStorage)) {
      const secrets = safeStorageFileStore(safeStorage, path, "encrypted with the system's safe storage");
      return { secrets, notices: [`${reason} Tokens are kept encrypted with the system's safe storage instead.`] };
    }
    const onDisk = safeStorage.isEncryptionAvailable()
      ? safeStorageFileStore(safeStorage, path, "on disk, NOT protected (basic_text safe storage)")
      : new FileSecretStore(path, "on disk, NOT protected (plain text, file permissions only)");
    return { secrets: new AskFirstSecretStore(onDisk, options.ask), notices: [`${reason} ${UNPROTECTED_WARNING}`] };
  }
}
