// Where bearer tokens live: the OS keychain through keytar, or (Electron shell, when keytar cannot
// load) a safeStorage-backed store implemented in electron/main behind this same interface.
// A token is never written anywhere else, never logged and never sent to a UI.

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
