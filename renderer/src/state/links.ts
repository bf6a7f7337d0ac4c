// Links leave the window only through the bridge, which opens parsed http(s) URLs only.
import type { AgentView } from "../../../shared/fleet/types";
import { t3ThreadUrl } from "../../../shared/fleet/views";
import { requireBridge, run } from "./requests";
import { useFleet } from "./store";

export const links = {
  /** Links from thread content; the browser tab opens the link itself once the service accepted it. */
  async openLink(url: string, place = "links"): Promise<void> {
    const opened = await run(place, async () => {
      await requireBridge().request("link.open", { url });
      return true;
    });
    if (opened && !window.t3fleet) window.open(url, "_blank", "noopener,noreferrer");
  },

  /** The thread in its machine's T3 web app, through the bridge like any link. */
  async openInT3(agent: AgentView): Promise<void> {
    const env = useFleet.getState().environments.get(agent.environmentId);
    const url = env ? t3ThreadUrl(env, agent.threadId) : null;
    if (!url) {
      useFleet.getState().commandFailed(`agent:${agent.key}`, "This machine has no web address to open.");
      return;
    }
    await links.openLink(url, `agent:${agent.key}`);
  },
};
