// Find machines: T3 servers on this machine, on online Tailscale peers and on ssh hosts the user
// names, each with one Pair button (the service mints a pairing code with T3's own CLI, here or
// over the user's ssh) or the reason it cannot be paired.
import { useEffect, useRef, useState } from "react";
import { type FoundServer, SshDestination } from "../../../shared/bridge/contract";
import { dispatch } from "../state/dispatch";
import { useDiscovery } from "../state/discovery";
import { useFleet } from "../state/store";
import { PlaceError } from "./common";

const SOURCE_LABEL: Record<FoundServer["source"], string> = { local: "This machine", tailscale: "Tailscale", ssh: "SSH" };

function time(ms: number): string {
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

function FoundRow({ server }: { server: FoundServer }) {
  const pairedLabel = useDiscovery((s) => s.paired[server.id]);
  const pairing = useDiscovery((s) => s.pairing);
  // Already paired now: the fleet's own list is the truth, whatever the last scan said.
  const pairedNow = useFleet((s) => (server.environmentId ? s.environments.has(server.environmentId) : false));
  const paired = pairedNow || pairedLabel !== undefined;
  // Off loopback and the tailnet the pairing code and token travel as plain HTTP: only once the user says so.
  const [plainHttpAccepted, acceptPlainHttp] = useState(false);
  const waitsForConsent = server.plainHttp !== null && !plainHttpAccepted;
  return (
    <li className="found-server" data-testid="found-server" data-id={server.id} data-pairable={server.pairVia !== null}>
      <div className="found-head">
        <span className="chip">{SOURCE_LABEL[server.source]}</span>
        <strong className="clipped">{server.name}</strong>
        {server.serverVersion ? (
          <span className="hint">
            T3 {server.serverVersion} · protocol {server.protocol ?? "?"}
            {server.label ? ` · “${server.label}”` : ""}
          </span>
        ) : null}
      </div>
      <div className="found-body">
        <span className="hint clipped">{server.baseUrl}</span>
        {server.pairVia === null ? (
          <span className="found-reason" data-testid="found-reason">
            {server.reason}
          </span>
        ) : (
          <>
            {paired ? <span data-testid="found-paired">Paired{pairedLabel ? ` as ${pairedLabel}` : ""}</span> : null}
            {server.plainHttp ? (
              <span className="found-plain-http">
                <span className="error" data-testid="found-plain-http">
                  {server.plainHttp}
                </span>{" "}
                <label>
                  <input
                    type="checkbox"
                    data-testid="found-plain-http-accept"
                    checked={plainHttpAccepted}
                    onChange={(event) => acceptPlainHttp(event.target.checked)}
                  />{" "}
                  Send them over plain HTTP anyway
                </label>
              </span>
            ) : null}
            <button
              type="button"
              className={paired ? "" : "primary"}
              data-testid="found-pair"
              disabled={pairing !== null || waitsForConsent}
              title={server.pairVia === "ssh" ? `Runs t3 auth pairing create over your ssh on ${server.name}` : "Runs t3 auth pairing create on this machine"}
              onClick={() => dispatch("machines.pair-found", "button", { id: server.id, plainHttp: plainHttpAccepted })}
            >
              {pairing === server.id ? "Pairing…" : paired ? "Pair again" : "Pair"}
            </button>
            {server.reason ? <span className="hint">{server.reason}</span> : null}
          </>
        )}
        <PlaceError place={`discovery:${server.id}`} />
      </div>
    </li>
  );
}

export function FindMachines() {
  const report = useDiscovery((s) => s.report);
  const ports = useDiscovery((s) => s.ports);
  const sshHosts = useDiscovery((s) => s.sshHosts);
  const [portText, setPortText] = useState("");
  const [hostText, setHostText] = useState("");
  const [hostError, setHostError] = useState<string | null>(null);
  const dialogRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    dialogRef.current?.focus();
    dispatch("machines.scan", "button", {});
  }, []);

  return (
    <div className="dialog-backdrop">
      <div
        className="dialog find-machines"
        role="dialog"
        aria-modal="true"
        aria-labelledby="find-title"
        data-testid="find-machines"
        ref={dialogRef}
        tabIndex={-1}
        // The window's shortcuts are for the fleet tree, not for this dialog.
        onKeyDown={(event) => {
          event.stopPropagation();
          if (event.key === "Escape") dispatch("machines.find-close", "keys");
        }}
      >
        <h2 id="find-title">Find machines</h2>
        <p className="hint">
          Looks for T3 on this machine, on your online Tailscale peers (from <code>tailscale status</code>) and on ssh hosts you add, at port 3773 and the ports
          you add. Pair mints a one-time pairing code with T3's own <code>t3</code> command, here or over your own ssh (your keys and agent, never a password
          prompt).
        </p>
        <div className="inline-form">
          <input
            aria-label="Extra port"
            data-testid="find-port"
            inputMode="numeric"
            placeholder="port, e.g. 3774"
            value={portText}
            onChange={(event) => setPortText(event.target.value)}
          />
          <button
            type="button"
            onClick={() => {
              const port = Number(portText);
              if (Number.isInteger(port) && port > 0 && port < 65_536) {
                dispatch("machines.add-port", "button", { port });
                setPortText("");
              }
            }}
          >
            Add port
          </button>
          <input
            aria-label="SSH host"
            data-testid="find-ssh-host"
            list="find-ssh-config-hosts"
            placeholder="ssh host, e.g. devbox or me@10.0.0.5"
            value={hostText}
            onChange={(event) => {
              setHostText(event.target.value);
              setHostError(null);
            }}
          />
          <datalist id="find-ssh-config-hosts">
            {(report?.sshConfigHosts ?? []).map((host) => (
              <option key={host} value={host} />
            ))}
          </datalist>
          <button
            type="button"
            data-testid="find-add-ssh-host"
            onClick={() => {
              const parsed = SshDestination.safeParse(hostText);
              if (!parsed.success) return setHostError(parsed.error.issues[0]?.message ?? "Not an ssh host.");
              dispatch("machines.add-ssh-host", "button", { host: parsed.data });
              setHostText("");
            }}
          >
            Add ssh host
          </button>
        </div>
        {hostError ? <p className="error">{hostError}</p> : null}
        {ports.length + sshHosts.length > 0 ? (
          <p className="hint">
            Also looking at:{" "}
            {ports.map((port) => (
              <button
                key={port}
                type="button"
                className="link"
                aria-label={`Remove port ${port}`}
                onClick={() => dispatch("machines.remove-port", "button", { port })}
              >
                port {port} ×
              </button>
            ))}
            {sshHosts.map((host) => (
              <button
                key={host}
                type="button"
                className="link"
                aria-label={`Remove ${host}`}
                onClick={() => dispatch("machines.remove-ssh-host", "button", { host })}
              >
                {host} ×
              </button>
            ))}
          </p>
        ) : null}
        <PlaceError place="discovery" />
        {report ? (
          <>
            <ul className="found-list" data-testid="found-list">
              {report.servers.map((server) => (
                <FoundRow key={server.id} server={server} />
              ))}
            </ul>
            {report.servers.length === 0 ? <p className="hint">No T3 server found.</p> : null}
            {report.notes.map((note) => (
              <p key={note} className="hint" data-testid="find-note">
                {note}
              </p>
            ))}
            <p className="hint" data-testid="find-scanned">
              Looked at {time(report.scannedAt)}; the same search runs again after {time(report.nextScanAt)}.
            </p>
          </>
        ) : (
          <p className="hint">Looking…</p>
        )}
        <div className="dialog-actions">
          <button type="button" data-testid="find-again" onClick={() => dispatch("machines.scan", "button", { refresh: true })}>
            Look again
          </button>
          <button type="button" data-testid="find-close" onClick={() => dispatch("machines.find-close", "button")}>
            Close
          </button>
        </div>
      </div>
    </div>
  );
}
