#!/usr/bin/env bash
# The README's first command on a machine where the optional parts are missing (issue 40): a clean
# copy of what is committed, installed where keytar cannot build (pkg-config finds no libsecret, as
# on a machine without libsecret-1-dev, so npm leaves the optional keytar out), runs `./fleet demo --web` until its link prints, and the page
# is loaded from that link (scripts/fresh-demo-check.ts). .ci/run runs it before `./fleet test`
# installs the Debian packages.
set -euo pipefail
cd "$(dirname "$0")/.."
copy="$(mktemp -d)"
log="$copy.log"
demo=""
cleanup() {
  if [ -n "$demo" ]; then kill -- "-$demo" 2>/dev/null || true; wait "$demo" 2>/dev/null || true; fi
  rm -rf "$copy" "$log"
}
trap cleanup EXIT
git archive HEAD | tar -xf - -C "$copy"
cd "$copy"
# CI=true: ./fleet runs npm ci in the copy, where keytar's build finds no libsecret.
export PKG_CONFIG_LIBDIR=/nonexistent PKG_CONFIG_PATH="" CI=true
set -m
./fleet demo --web --port 0 >"$log" 2>&1 &
demo=$!
set +m
# The link is the first line that carries one; tail ends with the demo if it exits first. tail
# feeds grep through a process substitution, which nothing waits for once grep has its line.
link="$(grep -m1 -Eo 'http://127\.0\.0\.1:[0-9]+/#code=[A-Za-z0-9_-]+' < <(timeout 600 tail -n +1 -f --pid="$demo" "$log") || true)"
if [ -z "$link" ]; then
  echo "fresh-demo: ./fleet demo --web printed no link without optional dependencies:" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
if [ -e node_modules/keytar ]; then
  echo "fresh-demo: keytar built in the copy, so this proves nothing about a machine without it" >&2
  exit 1
fi
echo "fresh-demo: ./fleet demo --web printed its link without keytar (its build found no libsecret)"
source scripts/env.sh
ensure_node
npx tsx scripts/fresh-demo-check.ts "$link"
