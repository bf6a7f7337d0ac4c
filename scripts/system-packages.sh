#!/usr/bin/env bash
# Debian packages the tests need, installed only when missing:
#   chromium (renderer end-to-end tests), gnome-keyring + dbus-x11 (real Secret Service for keytar),
#   libsecret-1-dev (to build keytar).
set -euo pipefail
needed=()
command -v chromium >/dev/null 2>&1 || needed+=(chromium)
command -v gnome-keyring-daemon >/dev/null 2>&1 || needed+=(gnome-keyring)
command -v dbus-run-session >/dev/null 2>&1 || needed+=(dbus-x11)
dpkg -s libsecret-1-dev >/dev/null 2>&1 || needed+=(libsecret-1-dev)
[ ${#needed[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "fleet: please install these Debian packages first: ${needed[*]}" >&2
  exit 1
fi
echo "fleet: installing ${needed[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${needed[@]}" >/dev/null
