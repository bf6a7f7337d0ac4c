import { describe, expect, it } from "vitest";
import { T3Error } from "../../../shared/t3/errors";
import type { EnvironmentDescriptor } from "../../../shared/t3/schemas";
import { negotiateProtocol } from "./adapters";

const descriptor = (orchestrationProtocolVersion?: number): EnvironmentDescriptor => ({
  environmentId: "env",
  label: "studio",
  serverVersion: "0.0.46",
  capabilities: {},
  ...(orchestrationProtocolVersion !== undefined && { orchestrationProtocolVersion }),
});

function refusal(run: () => unknown): T3Error {
  try {
    run();
  } catch (error) {
    if (error instanceof T3Error) return error;
  }
  throw new Error("expected a refusal");
}

describe("protocol negotiation", () => {
  it("an absent version means protocol 1; a supported version is used", () => {
    expect(negotiateProtocol(descriptor(), [1, 2])).toBe(1);
    expect(negotiateProtocol(descriptor(1), [1, 2])).toBe(1);
    expect(negotiateProtocol(descriptor(2), [1, 2])).toBe(2);
  });

  it("says which side to update", () => {
    expect(refusal(() => negotiateProtocol(descriptor(2), [1]))).toMatchObject({
      kind: "incompatible",
      message: expect.stringMatching(/^Update T3 Fleet: studio .* speaks orchestration protocol 2/),
    });
    expect(refusal(() => negotiateProtocol(descriptor(3), [1, 2])).message).toMatch(/^Update T3 Fleet/);
    expect(refusal(() => negotiateProtocol(descriptor(0), [1, 2])).message).toMatch(/^Update T3 on studio/);
  });
});
