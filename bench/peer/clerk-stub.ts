// T3's web client (0.0.42) wraps itself in Clerk, T3 Connect's account sign-in, and loads Clerk's
// script from clerk.t3.codes before it connects to its own server. The bench runs offline (a private
// network namespace), so the page is given a Clerk that has loaded and has nobody signed in, as
// Clerk is for a user of T3's web UI who never signed in to T3 Connect.
export const SIGNED_OUT_CLERK = `(() => {
  Object.defineProperty(Navigator.prototype, "onLine", { get: () => true, configurable: true });
  const resources = { client: { sessions: [], signedInSessions: [], lastActiveSessionId: null }, session: null, user: null, organization: null };
  const data = { loaded: false, status: "loading", version: "6.0.0", sdkMetadata: { name: "stub", version: "6.0.0" }, ...resources, __internal_lastEmittedResources: resources, isSignedIn: false, isSatellite: false, domain: "", proxyUrl: "", telemetry: undefined, instanceType: "production", frontendApi: "clerk.invalid", publishableKey: "" };
  const listeners = [];
  const target = {
    load() { data.loaded = true; data.status = "ready"; for (const l of listeners) l(resources); return Promise.resolve(); },
    addListener(listener, options) { listeners.push(listener); if (!options || !options.skipInitialEmit) listener(resources); return () => {}; },
    addOnLoaded(callback) { callback(); },
    on() {}, off() {},
  };
  // Clerk's own UI components (sign-in dialogs), never shown to a signed-out local user here.
  window.__internal_ClerkUICtor = class {};
  window.Clerk = new Proxy(target, {
    get(object, key) {
      if (key in object) return object[key];
      if (key in data) return data[key];
      if (typeof key === "symbol" || key === "then") return undefined;
      return () => undefined;
    },
    set(object, key, value) { data[key] = value; return true; },
  });
})();`;
