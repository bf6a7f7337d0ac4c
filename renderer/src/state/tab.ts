// The browser tab's title and icon say how many need you: the one count (shared/fleet/needs.ts) the
// top bar and the Inbox badge show. Neither names anything that flaps with a machine's connection
// (shared/fleet/tray.ts tabVariant), so they change only when what needs you does.
import { tabTitle, tabVariant, type TabVariant } from "../../../shared/fleet/tray";
import { selectGlance } from "./derived";
import { useFleet } from "./store";

const VARIANT_COLOURS: Record<TabVariant, string> = {
  "nothing-paired": "#868e96",
  failed: "#e03131",
  "needs-you": "#d9480f",
  "service-lost": "#f59f00",
  "all-clear": "#3b5bdb",
};

let lastTab = "";

function updateTab(): void {
  const state = useFleet.getState();
  const { bridgeLostAt, loaded } = state;
  if (!loaded) return;
  // The window's own glance (derived.ts): counted again only for the machines that changed.
  const { counts } = selectGlance(state);
  const variant = tabVariant(counts, bridgeLostAt === null);
  const title = tabTitle(counts.needsYou, bridgeLostAt === null);
  const key = `${title}|${variant}|${counts.needsYou}`;
  if (key === lastTab) return;
  lastTab = key;
  if (document.title !== title) document.title = title;
  const label = counts.needsYou > 99 ? "99+" : counts.needsYou > 0 ? String(counts.needsYou) : "";
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="16" cy="16" r="15" fill="${VARIANT_COLOURS[variant]}"/>${label ? `<text x="16" y="21.5" font-family="sans-serif" font-size="${label.length > 2 ? 11 : 15}" font-weight="700" text-anchor="middle" fill="#fff">${label}</text>` : ""}</svg>`;
  let link = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
  if (!link) {
    link = document.createElement("link");
    link.rel = "icon";
    document.head.append(link);
  }
  link.type = "image/svg+xml";
  link.href = `data:image/svg+xml,${encodeURIComponent(svg)}`;
  link.dataset.variant = variant;
  link.dataset.count = String(counts.needsYou);
}

/** Keeps the tab up to date with every change of the facts and of the snoozes, and on the minute clock that ends snoozes, as in the window. */
export function keepTabUpToDate(): () => void {
  const unsubscribe = useFleet.subscribe((state, previous) => {
    if (
      state.version !== previous.version ||
      state.loaded !== previous.loaded ||
      state.snoozed !== previous.snoozed ||
      state.clock !== previous.clock ||
      state.bridgeLostAt !== previous.bridgeLostAt
    )
      updateTab();
  });
  return unsubscribe;
}
