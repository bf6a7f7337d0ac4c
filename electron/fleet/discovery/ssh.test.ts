import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Ssh, sshFailure } from "./ssh";

describe("ssh", () => {
  it("names each failure so the user can act: no t3, host key changed or unknown, no login, unreachable", () => {
    expect(sshFailure("box", 127, "t3-fleet: no t3 on PATH\n")).toMatchObject({
      kind: "unavailable",
      message: expect.stringMatching(/t3 is not on the PATH of box/),
    });
    const changed =
      "@@@@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n@@@@@@@@@@@\nIT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!\nHost key verification failed.\n";
    expect(sshFailure("box", 255, changed)).toMatchObject({ kind: "host-key-changed" });
    expect(
      sshFailure("box", 255, "No ED25519 host key is known for [10.0.0.5]:22 and you have requested strict checking.\nHost key verification failed.\n"),
    ).toMatchObject({ kind: "host-key-unknown" });
    expect(sshFailure("box", 255, "root@10.0.0.5: Permission denied (publickey).\n")).toMatchObject({
      kind: "unauthorized",
      message: expect.stringMatching(/never asks for a password/),
    });
    expect(sshFailure("box", 255, "ssh: connect to host 10.0.0.5 port 22: Connection refused\n")).toMatchObject({ kind: "unreachable" });
    expect(sshFailure("box", 1, "Error: database is locked\n")).toMatchObject({ kind: "server", message: expect.stringContaining("database is locked") });
  });

  it("refuses a host that ssh would read as an option, before running anything", async () => {
    const ssh = new Ssh({ command: join(tmpdir(), "no-such-ssh") });
    await expect(ssh.mint("-oProxyCommand=touch /tmp/x")).rejects.toMatchObject({ kind: "invalid" });
    await expect(ssh.resolve("host name")).rejects.toMatchObject({ kind: "invalid" });
  });

  it("offers the concrete hosts of the ssh config, not its patterns", async () => {
    const dir = await mkdtemp(join(tmpdir(), "t3-ssh-config-"));
    try {
      await writeFile(join(dir, "config"), "Host devbox build-?? *.lan\n  HostName 10.0.0.5\nhost   laptop me@work\nMatch all\nHost *\n  User me\n");
      expect(await new Ssh({ configFile: join(dir, "config") }).configHosts()).toEqual(["devbox", "laptop", "me@work"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
