// A fleet model with one protocol-1 machine online ("env-a") and a recorded row to make its agents
// from: for the tests of what the service keeps per agent as agents come and go.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentFacts } from "../../shared/fleet/facts";
import { FleetModel } from "../../shared/fleet/model";
import { decodeWith } from "../../shared/t3/decode";
import { Protocol1Rows } from "../../shared/t3/protocol1/facts";
import { ThreadShell } from "../../shared/t3/protocol1/schemas";

// The recorded rows live beside the work tree (as in shared/fleet/model.test.ts).
const fixtures = process.env.T3_FIXTURES_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../../shared/fixtures");

/** `row`: a completed thread's facts as T3 0.0.42 sent them; give each agent its own threadId. */
export function oneMachine(clock: number): { model: FleetModel; row: AgentFacts } {
  const model = new FleetModel({ stalledAfterMs: 60_000, now: () => clock });
  model.upsertEnvironment(
    { environmentId: "env-a", label: "studio", baseUrl: "http://a", serverVersion: "0.0.42", generation: "upstream", readOnly: false, muted: false },
    { phase: "online", since: new Date(clock).toISOString() },
  );
  const decoded = decodeWith(ThreadShell, JSON.parse(readFileSync(resolve(fixtures, "t3-0.0.42/shell-row-completed.json"), "utf8")), "row");
  if (!decoded.ok) throw new Error(decoded.error.message);
  return { model, row: new Protocol1Rows().facts(decoded.value) };
}
