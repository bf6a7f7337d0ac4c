// Effect-RPC JSON framing (docs/t3-protocols.md, the shared transport): one JSON message per WebSocket text frame.
import { z } from "zod";
import { cleanText, TEXT_LIMITS } from "./text";

/** Request ids are decimal strings on the wire; effect 4.1 may send numbers, normalized here. */
const RequestId = z.union([z.string().min(1), z.number().int()]).transform(String);

export const RpcCause = z.union([
  z.object({ _tag: z.literal("Fail"), error: z.unknown() }),
  z.object({ _tag: z.literal("Die"), defect: z.unknown() }),
  z.object({ _tag: z.literal("Interrupt"), fiberId: z.unknown().optional() }),
  z.object({ _tag: z.string() }).transform((cause) => ({ _tag: "Unknown" as const, rawTag: cause._tag })),
]);
export type RpcCause = z.infer<typeof RpcCause>;

export const RpcExit = z.union([
  z.object({ _tag: z.literal("Success"), value: z.unknown() }),
  z.object({ _tag: z.literal("Failure"), cause: z.array(RpcCause) }),
]);
export type RpcExit = z.infer<typeof RpcExit>;

export const RpcServerFrame = z.union([
  z.object({ _tag: z.literal("Chunk"), requestId: RequestId, values: z.array(z.unknown()) }),
  z.object({ _tag: z.literal("Exit"), requestId: RequestId, exit: RpcExit }),
  z.object({ _tag: z.literal("Defect"), defect: z.unknown() }),
  z.object({ _tag: z.literal("Pong") }),
  z.object({ _tag: z.literal("ClientProtocolError"), error: z.unknown().optional() }),
]);
export type RpcServerFrame = z.infer<typeof RpcServerFrame>;

export type RpcClientFrame =
  | { _tag: "Request"; id: string; tag: string; payload: unknown; headers: [string, string][] }
  | { _tag: "Ack"; requestId: string }
  | { _tag: "Interrupt"; requestId: string }
  | { _tag: "Ping" }
  | { _tag: "Eof" };

/** What a server may receive: requests, acks and control frames (the simulator decodes these). */
export const RpcClientFrameSchema = z.union([
  z.object({
    _tag: z.literal("Request"),
    id: RequestId,
    tag: z.string(),
    payload: z.unknown(),
    headers: z.array(z.tuple([z.string(), z.string()])).default([]),
  }),
  z.object({ _tag: z.literal("Ack"), requestId: RequestId }),
  z.object({ _tag: z.literal("Interrupt"), requestId: RequestId }),
  z.object({ _tag: z.literal("Ping") }),
  z.object({ _tag: z.literal("Eof") }),
]);

/** Human-readable text of a Die defect or connection Defect (a string, or an object with a message). */
export function defectText(defect: unknown): string {
  return cleanText(rawDefectText(defect), { max: TEXT_LIMITS.reason });
}

function rawDefectText(defect: unknown): string {
  if (typeof defect === "string") return defect;
  if (typeof defect === "object" && defect !== null && typeof (defect as { message?: unknown }).message === "string") {
    return (defect as { message: string }).message;
  }
  return JSON.stringify(defect) ?? "unknown defect";
}
