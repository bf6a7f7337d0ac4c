// The Electron shell's start-up decisions against a stand-in for Electron's `app`.
import { describe, expect, it } from "vitest";
import { APP_URL } from "./app-protocol";
import { type AppLike, claimSingleInstance, demoPairingLinks, rendererUrl } from "./startup";

function fakeApp(options: { isPackaged: boolean; lockHeld?: boolean }) {
  const exits: (number | undefined)[] = [];
  const app: AppLike = { isPackaged: options.isPackaged, requestSingleInstanceLock: () => !options.lockHeld, exit: (code) => void exits.push(code) };
  return { app, exits };
}

describe("Electron start-up", () => {
  it("a second start exits at once instead of going on", () => {
    const second = fakeApp({ isPackaged: true, lockHeld: true });
    expect(claimSingleInstance(second.app)).toBe(false);
    expect(second.exits).toEqual([0]);
    const first = fakeApp({ isPackaged: true });
    expect(claimSingleInstance(first.app)).toBe(true);
    expect(first.exits).toEqual([]);
  });

  it("a packaged build ignores ELECTRON_RENDERER_URL and the demo's pairing links", () => {
    const env = { ELECTRON_RENDERER_URL: "http://evil.example:5173/", T3_FLEET_DEMO_PAIRING: JSON.stringify(["http://10.0.0.9:3773/pair#token=ABCDEFGHJKLM"]) };
    const packaged = fakeApp({ isPackaged: true }).app;
    expect(rendererUrl(packaged, env)).toBe(APP_URL);
    expect(demoPairingLinks(packaged, env)).toEqual([]);
    const development = fakeApp({ isPackaged: false }).app;
    expect(rendererUrl(development, env)).toBe("http://evil.example:5173/");
    expect(demoPairingLinks(development, env)).toEqual(["http://10.0.0.9:3773/pair#token=ABCDEFGHJKLM"]);
  });

  it("development without variables, or with a malformed demo variable, loads the app bundle and pairs nothing", () => {
    const development = fakeApp({ isPackaged: false }).app;
    expect(rendererUrl(development, {})).toBe(APP_URL);
    expect(rendererUrl(development, { ELECTRON_RENDERER_URL: "" })).toBe(APP_URL);
    expect(demoPairingLinks(development, { T3_FLEET_DEMO_PAIRING: "{not json" })).toEqual([]);
    expect(demoPairingLinks(development, { T3_FLEET_DEMO_PAIRING: '{"a":1}' })).toEqual([]);
  });
});
