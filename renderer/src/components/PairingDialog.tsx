import { useEffect, useRef } from "react";
import { commands } from "../state/effects";
import { useFleet } from "../state/store";

export function PairingDialog() {
  const pairing = useFleet((s) => s.pairing);
  const localServer = useFleet((s) => s.localServer);
  const setPairing = useFleet((s) => s.setPairing);
  const inputRef = useRef<HTMLTextAreaElement>(null);
  useEffect(() => inputRef.current?.focus(), []);
  const preview = pairing.preview;

  return (
    <div className="dialog-backdrop">
      <form
        className="dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="pair-title"
        data-testid="pairing-dialog"
        onSubmit={(event) => {
          event.preventDefault();
          void (preview ? commands.confirmPairing() : commands.inspectPairing());
        }}
      >
        <h2 id="pair-title">{pairing.environmentId ? "Pair this machine again" : "Pair a T3 environment"}</h2>
        <label>
          Pairing link or host
          <textarea
            ref={inputRef}
            data-testid="pair-input"
            rows={2}
            value={pairing.input}
            placeholder="http://100.101.102.103:3773/pair#token=… or https://box.tailnet.ts.net"
            onChange={(event) => setPairing({ input: event.target.value, preview: null, error: null })}
          />
        </label>
        <label>
          Pairing code or token (only when the link has none)
          <input type="password" data-testid="pair-token" autoComplete="off" value={pairing.token} onChange={(event) => setPairing({ token: event.target.value, preview: null, error: null })} />
        </label>
        {localServer && !localServer.alreadyPaired && !pairing.input ? (
          <p className="hint">
            A T3 server answers on this machine ({localServer.label}).{" "}
            <button type="button" onClick={() => setPairing({ input: localServer.baseUrl })}>
              Use it
            </button>
          </p>
        ) : null}
        {preview ? (
          <div className="preview" data-testid="pair-preview">
            <p>
              <strong>{preview.label}</strong> · T3 {preview.serverVersion} · {preview.generation === "upstream" ? "scoped tokens" : "bearer sessions"}
            </p>
            <p>
              Environment <code>{preview.environmentId}</code> at {preview.baseUrl}
            </p>
            {preview.alreadyPaired ? <p className="hint">Already paired: pairing again updates it.</p> : null}
            {!preview.hasToken && !pairing.token ? <p className="error">Add the pairing code or a token to pair.</p> : null}
            <label>
              Name on this desk (optional)
              <input value={pairing.label} onChange={(event) => setPairing({ label: event.target.value })} placeholder={preview.label} />
            </label>
          </div>
        ) : null}
        {pairing.error ? (
          <p className="error" role="alert" data-testid="pair-error">
            {pairing.error}
          </p>
        ) : null}
        <div className="dialog-actions">
          <button type="button" onClick={() => commands.closePairing()}>
            Cancel
          </button>
          <button type="submit" className="primary" data-testid="pair-submit" disabled={pairing.busy || pairing.input.trim() === ""}>
            {pairing.busy ? "Checking…" : preview ? "Pair" : "Check server"}
          </button>
        </div>
      </form>
    </div>
  );
}
