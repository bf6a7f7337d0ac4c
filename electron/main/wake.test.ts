// System wake in the Electron shell (./wake.ts) against a stand-in for `powerMonitor`: every resume
// re-checks the fleet's connections, and nothing after the watch is stopped. Electron is not launched.
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { watchSystemWake } from "./wake";

describe("system wake", () => {
  it("re-checks every connection on each resume until stopped", () => {
    const power = new EventEmitter();
    let rechecks = 0;
    const stop = watchSystemWake(power, () => rechecks++);
    power.emit("suspend");
    expect(rechecks).toBe(0);
    power.emit("resume");
    power.emit("resume");
    expect(rechecks).toBe(2);
    stop();
    power.emit("resume");
    expect(rechecks).toBe(2);
    expect(power.listenerCount("resume")).toBe(0);
  });
});
