// An agent that reaches its context limit (the window's setting, 90 % by default) and will not
// compact is said once, as a notice (and a browser notification where allowed); it can be said
// again only after its context fell below the limit (compacted, or a new thread).
import { contextPercent, nearContextLimit } from "../../../shared/fleet/changes-usage";
import type { AgentView } from "../../../shared/fleet/types";
import { showNotice } from "./notices";
import { useFleet } from "./store";

const notified = new Set<string>();

/** Feed the agents a fleet delta changed. */
export function noticeContextLimits(agents: Iterable<AgentView>): void {
  const { contextWarningPercent, environments } = useFleet.getState();
  for (const agent of agents) {
    if (!nearContextLimit(agent, contextWarningPercent)) {
      notified.delete(agent.key);
      continue;
    }
    if (notified.has(agent.key)) continue;
    notified.add(agent.key);
    const machine = environments.get(agent.environmentId)?.label ?? agent.environmentId;
    showNotice({
      id: `${agent.key}//context-full`,
      reason: "context-full",
      environmentId: agent.environmentId,
      agentKey: agent.key,
      title: `${agent.title} on ${machine} is near its context limit`,
      body: `Its context is ${contextPercent(agent.usage)} % full and its provider will not compact it: start a new thread, or compact it in T3.`,
    });
  }
}
