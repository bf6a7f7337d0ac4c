#!/usr/bin/env bash
# The discovery tests: installs the pinned T3 executable (npm registry, outside the namespace), then
# runs the given command inside a private network namespace with only loopback up. The tests create
# further namespaces inside it (veth pairs, addresses they assign), so nothing can reach any other
# address.
#   bash scripts/discovery-netns.sh npx vitest run -c vitest.discovery.config.ts
# Needs root (sshd runs as the test user's host), `ip` and `nsenter`/`unshare` (iproute2,
# util-linux) and Debian's openssh-server and openssh-client.
set -euo pipefail
cd "$(dirname "$0")/.."
export T3_FLEET_CACHE="${T3_FLEET_CACHE:-$HOME/.cache/t3-fleet}"
npx tsx integration/realt3/install.ts
export PATH="$PATH:/usr/sbin:/sbin"
for tool in ip nsenter unshare ssh ssh-keygen; do
  command -v "$tool" >/dev/null 2>&1 || { echo "discovery: \`$tool\` is missing (Debian packages iproute2, util-linux, openssh-client)" >&2; exit 1; }
done
[ -x /usr/sbin/sshd ] || { echo "discovery: /usr/sbin/sshd is missing (Debian package openssh-server)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "discovery: needs root (sshd and namespaces for the test hosts)" >&2; exit 1; }
exec unshare --net sh -c 'ip link set lo up && exec "$@"' sh "$@"
