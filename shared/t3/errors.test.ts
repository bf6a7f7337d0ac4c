import { describe, expect, it } from "vitest";
import { httpFailure, rpcFailure } from "./errors";

describe("httpFailure", () => {
  it.each([
    [401, '{"error":"Unauthorized request."}', "unauthorized"],
    [401, '{"error":"Invalid bootstrap credential."}', "unauthorized"],
    [400, '{"error":"Only owner sessions can manage projects."}', "rejected"],
    [400, '{"error":"Failed to dispatch orchestration command."}', "rejected"],
    [403, '{"_tag":"EnvironmentScopeRequiredError","code":"insufficient_scope","requiredScope":"orchestration:operate"}', "insufficient-scope"],
    [400, '{"_tag":"EnvironmentRequestInvalidError","code":"invalid_request","reason":"scope_not_granted"}', "insufficient-scope"],
    [404, '{"_tag":"EnvironmentResourceNotFoundError","code":"not_found","reason":"thread_not_found"}', "not-found"],
    [500, '{"_tag":"EnvironmentInternalError","code":"internal_error","reason":"orchestration_dispatch_failed"}', "server"],
  ] as const)("%i %s → %s", (status, body, kind) => {
    expect(httpFailure(status, "application/json", body, "call").kind).toBe(kind);
  });

  it("never parses a body that is not declared JSON", () => {
    const error = httpFailure(503, "text/plain", "Service Unavailable", "GET /api/x");
    expect(error.kind).toBe("server");
    expect(error.message).toContain("Service Unavailable");
    expect(httpFailure(400, "", "", "POST /oauth/token").message).toContain("empty body");
  });

  it("survives a JSON content type with a broken body", () => {
    expect(httpFailure(401, "application/json", "{not json", "call").kind).toBe("unauthorized");
  });

  it("carries the scope a refusal names", () => {
    const error = httpFailure(
      403,
      "application/json",
      '{"_tag":"EnvironmentScopeRequiredError","code":"insufficient_scope","requiredScope":"orchestration:operate"}',
      "dispatch",
    );
    expect(error.details.requiredScope).toBe("orchestration:operate");
  });
});

describe("rpcFailure", () => {
  it("maps typed failures, defects and interrupts", () => {
    expect(
      rpcFailure([{ _tag: "Fail", error: { _tag: "OrchestrationDispatchCommandError", message: "Orchestration command invariant failed" } }], "x").kind,
    ).toBe("rejected");
    expect(
      rpcFailure([{ _tag: "Fail", error: { _tag: "EnvironmentAuthorizationError", message: "missing", requiredScope: "orchestration:operate" } }], "x").kind,
    ).toBe("insufficient-scope");
    expect(rpcFailure([{ _tag: "Fail", error: { _tag: "OrchestrationGetSnapshotError", message: "Thread t was not found" } }], "x").kind).toBe("not-found");
    expect(rpcFailure([{ _tag: "Die", defect: "Unknown request tag: a.b" }], "x").kind).toBe("incompatible");
    expect(rpcFailure([{ _tag: "Die", defect: 'Missing key\n  at ["commandId"]' }], "x").kind).toBe("server");
    expect(rpcFailure([{ _tag: "Interrupt", fiberId: 3 }], "x").kind).toBe("interrupted");
    expect(rpcFailure([{ _tag: "Fail", error: "not an object" }], "x").kind).toBe("rejected");
  });
});
