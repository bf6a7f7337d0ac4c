// The composite ids a real protocol-2 server gives its entities: readable paths built from the ids
// they belong to, with the inner id URL-encoded. Clients must treat them as opaque and long (a
// runtime request's id runs to about 230 characters), so the simulator builds them the same way.
import { randomUUID } from "node:crypto";

const enc = encodeURIComponent;

/** A short random id for the simulator's own entities (items, subagents, threads it seeds). */
export const shortId = (): string => randomUUID().slice(0, 8);

/** A provider-side native id, as the provider would mint it. */
export const nativeId = (prefix = ""): string => `${prefix}${randomUUID()}`;

export const runId = (threadId: string, ordinal: number): string => `run:thread:${threadId}:ordinal:${ordinal}`;
export const rootNodeId = (run: string): string => `node:run:${enc(run)}:root`;
export const attemptId = (run: string, attempt = 1): string => `run-attempt:run:${enc(run)}:attempt:${attempt}`;
export const checkpointScopeId = (threadId: string): string => `checkpoint-scope:thread:${threadId}:name:root`;
export const checkpointId = (scope: string, ordinal: number): string => `checkpoint:scope:${enc(scope)}:name:${ordinal}`;
export const providerSessionId = (provider: string): string => `provider-session:provider-instance:${provider}:shared`;
/** A provider thread is named after the run that first needed it, until the provider names it. */
export const providerThreadId = (provider: string, firstRun: string): string =>
  `provider-thread:provider:${provider}:native-thread:${enc(`pending:${firstRun}`)}`;
export const providerTurnId = (provider: string, native: string): string => `provider-turn:provider:${provider}:native-turn:${native}`;
export const userMessageItemId = (messageId: string): string => `turn-item:message:${messageId}`;
export const nativeItemId = (provider: string, native: string): string => `turn-item:provider:${provider}:native-item:${native}`;
export const nativeNodeId = (provider: string, native: string): string => `node:provider:${provider}:native-item:${native}`;
export const assistantMessageId = (provider: string, native: string): string => `message:provider:${provider}:native-item:${native}`;
export const runItemId = (run: string, what: string, n: number): string => `turn-item:run:${enc(run)}:${what}:${n}`;
export const runtimeRequestId = (provider: string, turn: string, nativeCall: string): string =>
  `runtime-request:provider:${provider}:provider-turn:${enc(turn)}:native-request:${nativeCall}:${randomUUID()}`;
export const requestNodeId = (request: string): string => `node:runtime-request:${enc(request)}`;
export const requestItemId = (request: string): string => `turn-item:runtime-request:${enc(request)}`;
export const checkpointItemId = (provider: string, checkpoint: string): string => nativeItemId(provider, enc(`checkpoint:${checkpoint}`));
export const eventId = (threadId: string): string => `event:thread:${threadId}:${randomUUID()}`;
