#!/usr/bin/env bash
# Runs a command inside a private D-Bus session with an unlocked gnome-keyring (a real Secret
# Service for keytar), under a throwaway HOME so no real keyring is touched.
set -euo pipefail
for tool in dbus-run-session gnome-keyring-daemon; do
  command -v "$tool" >/dev/null 2>&1 || { echo "with-keyring: $tool is missing (Debian packages dbus-x11, gnome-keyring)" >&2; exit 1; }
done
keyring_home="$(mktemp -d)"
trap 'rm -rf "$keyring_home"' EXIT
status=0
HOME="$keyring_home" dbus-run-session -- sh -c '
  printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
  exec "$@"
' sh "$@" || status=$?
exit "$status"
