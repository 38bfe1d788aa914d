#!/usr/bin/env bash
# Measures the console's time from exec to first frame and its idle memory,
# beside peer consoles installed from npm into a private prefix (skipped
# when they cannot be installed). Usage: bench/console.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The consoles get a fresh HOME; Go keeps the operator's caches.
export GOMODCACHE="$(go env GOMODCACHE)" GOCACHE="$(go env GOCACHE)" GOPATH="$(go env GOPATH)"
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_STATE_HOME="$work/home/.state"
mkdir -p "$HOME"
go build -o "$work/staage" ./cmd/staage
go build -o "$work/measure" ./bench/console
cmds=("$work/staage --demo")

peers="${STAAGE_PEERS_DIR:-$work/peers}"
# Peers whose npm package carries the program. (@charmland/crush downloads
# its binary from a release page at install time, so it installs only where
# that page can be reached.)
if command -v npm >/dev/null && [ "${STAAGE_BENCH_PEERS:-1}" = 1 ]; then
  for pkg in @openai/codex @anthropic-ai/claude-code @google/gemini-cli opencode-ai @charmland/crush; do
    npm install --silent --no-audit --no-fund --prefix "$peers" "$pkg" >/dev/null 2>&1 || echo "# $pkg: not installable here" >&2
  done
  for b in codex claude gemini opencode crush; do
    if [ -x "$peers/node_modules/.bin/$b" ]; then cmds+=("$peers/node_modules/.bin/$b"); fi
  done
fi
proj="$work/proj"; mkdir -p "$proj"; cd "$proj"
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(uname -r)"
"$work/measure" -runs "$runs" -- "${cmds[@]}"
