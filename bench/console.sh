#!/usr/bin/env bash
# Measures the console's time from exec to first frame and its idle memory,
# beside peer consoles installed from npm into a private prefix (skipped
# when they cannot be installed). Usage: bench/console.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_STATE_HOME="$work/home/.state"
mkdir -p "$HOME"
go build -o "$work/staage" ./cmd/staage
go build -o "$work/measure" ./bench/console
cmds=("$work/staage --demo")

peers="${STAAGE_PEERS_DIR:-$work/peers}"
if command -v npm >/dev/null && [ "${STAAGE_BENCH_PEERS:-1}" = 1 ]; then
  npm install --silent --no-audit --no-fund --prefix "$peers" \
    @charmland/crush @openai/codex @anthropic-ai/claude-code >/dev/null 2>&1 || true
  for b in crush codex claude; do
    [ -x "$peers/node_modules/.bin/$b" ] && cmds+=("$peers/node_modules/.bin/$b")
  done
fi
proj="$work/proj"; mkdir -p "$proj"; cd "$proj"
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(uname -r)"
"$work/measure" -runs "$runs" -- "${cmds[@]}"
