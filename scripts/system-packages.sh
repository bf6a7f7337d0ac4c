#!/usr/bin/env bash
# Debian packages the tests need, installed only when missing:
#   chromium (renderer end-to-end tests), gnome-keyring + dbus-x11 (real Secret Service for keytar),
#   libsecret-1-dev (to build keytar), iproute2 (`ip`: loopback in the real-server tests' network namespace),
#   openssh-server + openssh-client (the discovery tests' ssh hosts, scripts/discovery-netns.sh),
#   libfaketime (the soak's laptop waking after an hour: the service's and machines' wall clocks jump, bench/soak/clock.ts).
set -euo pipefail
needed=()
command -v chromium >/dev/null 2>&1 || needed+=(chromium)
command -v gnome-keyring-daemon >/dev/null 2>&1 || needed+=(gnome-keyring)
command -v dbus-run-session >/dev/null 2>&1 || needed+=(dbus-x11)
dpkg -s libsecret-1-dev >/dev/null 2>&1 || needed+=(libsecret-1-dev)
command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || needed+=(iproute2)
[ -x /usr/sbin/sshd ] || needed+=(openssh-server)
command -v ssh >/dev/null 2>&1 || needed+=(openssh-client)
[ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1 ] || needed+=(libfaketime)
[ ${#needed[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "fleet: please install these Debian packages first: ${needed[*]}" >&2
  exit 1
fi

# Another package manager may hold apt's or dpkg's lock (unattended-upgrades right after boot, a
# second terminal): wait for it, up to half an hour, instead of failing. DPkg::Lock::Timeout covers
# dpkg's lock; the loop also covers the lists lock of `apt-get update` and older apt.
APT_WAIT_LIMIT_S="${T3_FLEET_APT_WAIT_S:-1800}"
apt_get() {
  local waited=0 errors
  errors="$(mktemp)"
  while true; do
    if apt-get -o DPkg::Lock::Timeout="$APT_WAIT_LIMIT_S" "$@" 2>"$errors"; then
      rm -f "$errors"
      return 0
    fi
    if grep -qE "Could not get lock|Unable to (acquire|lock)|is another process using it" "$errors" && [ "$waited" -lt "$APT_WAIT_LIMIT_S" ]; then
      [ "$waited" -eq 0 ] && echo "fleet: another package manager (apt/dpkg) is busy; waiting for it to finish…" >&2
      sleep 5
      waited=$((waited + 5))
      continue
    fi
    cat "$errors" >&2
    rm -f "$errors"
    return 1
  done
}

echo "fleet: installing ${needed[*]}"
export DEBIAN_FRONTEND=noninteractive
# The tests run their own sshd inside network namespaces; the package must not start a system one
# listening on port 22. Debian's invoke-rc.d asks policy-rc.d first: exit 101 forbids every start.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt_get update -qq
apt_get install -y -qq --no-install-recommends "${needed[@]}" >/dev/null
