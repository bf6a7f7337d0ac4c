// The browser tab's title and icon say what the tray says: the fleet's headline and how many need you.
import { fleetHeadline, trayVariant, type TrayVariant } from "../../../shared/fleet/tray";
import { displayFacts, glance } from "./selectors";
import { useFleet } from "./store";

const VARIANT_COLOURS: Record<TrayVariant, string> = {
  "nothing-paired": "#868e96",
  failed: "#e03131",
  "needs-you": "#d9480f",
  "host-offline": "#f59f00",
  working: "#2f9e44",
  "all-clear": "#3b5bdb",
};

let lastTab = "";

function updateTab(): void {
  const { agents, environments, bridgeLostAt, loaded } = useFleet.getState();
  if (!loaded) return;
  const { counts } = glance(displayFacts(agents, bridgeLostAt), environments);
  const variant = bridgeLostAt ? "host-offline" : trayVariant(counts);
  const title = bridgeLostAt
    ? "T3 Fleet — service not reachable"
    : counts.needsYou
      ? `(${counts.needsYou}) ${fleetHeadline(counts)} — T3 Fleet`
      : `T3 Fleet — ${fleetHeadline(counts)}`;
  const key = `${title}|${variant}|${counts.needsYou}`;
  if (key === lastTab) return;
  lastTab = key;
  document.title = title;
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

/** Keeps the tab up to date with every change of the facts. */
export function keepTabUpToDate(): () => void {
  return useFleet.subscribe((state, previous) => {
    if (state.version !== previous.version || state.loaded !== previous.loaded) updateTab();
  });
}
