#!/usr/bin/env bash
# The real-server tests: installs the pinned T3 executable and the harness CLIs (npm registry,
# outside the namespace), then runs the given command inside a private network namespace
# with only loopback up, so neither the T3 servers nor the tests can reach any other address.
#   bash scripts/realt3.sh npx vitest run -c vitest.realt3.config.ts
# Needs root or unprivileged user namespaces, and `ip` (Debian package iproute2).
set -euo pipefail
cd "$(dirname "$0")/.."
export T3_FLEET_CACHE="${T3_FLEET_CACHE:-$HOME/.cache/t3-fleet}"
npx tsx integration/realt3/install.ts
export PATH="$PATH:/usr/sbin:/sbin"
command -v ip >/dev/null 2>&1 || { echo "realt3: \`ip\` is missing (Debian package iproute2)" >&2; exit 1; }
if [ "$(id -u)" -eq 0 ]; then namespace=(unshare --net --mount); else namespace=(unshare --net --mount --map-root-user); fi
# Inside, name lookups go to 127.0.0.1:53, where the suites record what anything tried to resolve
# (integration/harnesses/offline.testkit.ts); npm's own update check stays off.
resolv="$(mktemp)"
trap 'rm -f "$resolv"' EXIT
echo "nameserver 127.0.0.1" >"$resolv"
export npm_config_update_notifier=false
"${namespace[@]}" sh -c 'ip link set lo up && mount --bind "$0" /etc/resolv.conf && exec "$@"' "$resolv" "$@"
