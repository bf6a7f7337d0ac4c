// Tokens encrypted with Electron's safeStorage (OS-backed key), for desktops where keytar cannot
// load. Same SecretStore interface; the file holds ciphertext only, written atomically with 0600.
import { randomBytes } from "node:crypto";
import { open, readFile, rename, rm } from "node:fs/promises";
import { z } from "zod";
import type { SecretStore } from "../fleet/secrets";

/** The part of Electron's safeStorage this store uses (a thin wrapper, so tests need no Electron). */
export interface SafeStorageLike {
  isEncryptionAvailable(): boolean;
  encryptString(plainText: string): Buffer;
  decryptString(encrypted: Buffer): string;
}

const SecretsFile = z.record(z.string(), z.string());

export class SafeStorageSecretStore implements SecretStore {
  readonly description = "encrypted with the system's safe storage";
  private writes: Promise<void> = Promise.resolve();

  private constructor(
    private readonly safeStorage: SafeStorageLike,
    private readonly path: string,
  ) {}

  static open(safeStorage: SafeStorageLike, path: string): SafeStorageSecretStore {
    if (!safeStorage.isEncryptionAvailable()) throw new Error("The system's safe storage is not available, so tokens cannot be stored safely.");
    return new SafeStorageSecretStore(safeStorage, path);
  }

  private async read(): Promise<Record<string, string>> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
      throw error;
    }
    const parsed = SecretsFile.safeParse(JSON.parse(text));
    if (!parsed.success) throw new Error(`The encrypted token file ${this.path} is not valid; pair the environments again.`);
    return parsed.data;
  }

  async get(environmentId: string): Promise<string | undefined> {
    const entry = (await this.read())[environmentId];
    return entry === undefined ? undefined : this.safeStorage.decryptString(Buffer.from(entry, "base64"));
  }

  set(environmentId: string, token: string): Promise<void> {
    return this.change((entries) => {
      entries[environmentId] = this.safeStorage.encryptString(token).toString("base64");
    });
  }

  delete(environmentId: string): Promise<void> {
    return this.change((entries) => {
      delete entries[environmentId];
    });
  }

  private change(mutate: (entries: Record<string, string>) => void): Promise<void> {
    const run = async () => {
      const entries = await this.read();
      mutate(entries);
      const temporary = `${this.path}.${randomBytes(4).toString("hex")}.tmp`;
      const handle = await open(temporary, "w", 0o600);
      try {
        await handle.writeFile(JSON.stringify(entries));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, this.path).catch(async (error: unknown) => {
        await rm(temporary, { force: true });
        throw error;
      });
    };
    const next = this.writes.then(run, run);
    this.writes = next.catch(() => {});
    return next;
  }
}
