// T3 0.0.42 buffers an assistant reply by paragraph unless its server setting
// `responseStreamingMode` is "token" (the setting's values are "turn", "paragraph", the default,
// and "token"; older servers had `enableLegacyTokenStreaming`, /work/shared/t3-protocol.md §15):
// the peer benchmark sets it, as a user would in T3's settings, so both pages get the reply word by word.
import WebSocket from "ws";

export async function enableTokenStreaming(baseUrl: string, token: string): Promise<unknown> {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/ws`, { headers: { authorization: `Bearer ${token}` } });
  try {
    await new Promise<void>((open, fail) => {
      socket.once("open", () => open());
      socket.once("error", fail);
    });
    const request = { _tag: "Request", id: "1", tag: "server.updateSettings", payload: { patch: { responseStreamingMode: "token" } }, headers: [] };
    socket.send(JSON.stringify(request));
    return await new Promise((done, fail) => {
      const timer = setTimeout(() => fail(new Error("T3 did not answer server.updateSettings within 10 s")), 10_000);
      socket.on("message", (data) => {
        const message = JSON.parse(String(data)) as { _tag: string; requestId?: string; exit?: { _tag: string } };
        if (message._tag !== "Exit" || message.requestId !== "1") return;
        clearTimeout(timer);
        if (message.exit?._tag === "Success") done(message.exit);
        else fail(new Error(`server.updateSettings failed: ${JSON.stringify(message.exit)}`));
      });
    });
  } finally {
    socket.close();
  }
}
