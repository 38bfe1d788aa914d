#!/usr/bin/env bash
# bench/search.sh — file_search and file_find against ripgrep and fd on the
# Go source tree, side by side in one run. For each case it alternates runs
# of ours and theirs (so both see the same machine load), after one warm-up
# each, and prints the median wall time, the median CPU time (user+sys: a
# figure machine load disturbs less) and the ratios ours/theirs.
#
# Usage: bench/search.sh [runs] [dir]
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${1:-15}
DIR=$(cd "${2:-$(go env GOROOT)/src}" && pwd)

if ! command -v rg >/dev/null || ! command -v fdfind >/dev/null; then
	apt-get install -y ripgrep fd-find >/dev/null
fi
TIMEBIN=/usr/bin/time
if [ ! -x "$TIMEBIN" ]; then
	apt-get install -y time >/dev/null
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
BIN=$WORK/fsbench
go build -o "$BIN" ./bench/cmd/fsbench

# measure CMD: one run in $DIR, output discarded; prints "wall_ms cpu_ms".
measure() {
	(cd "$DIR" && "$TIMEBIN" -f '%e %U %S' -o "$WORK/t" bash -c "$1" >/dev/null)
	awk '{printf "%d %d\n", $1*1000, ($2+$3)*1000}' "$WORK/t"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# compare NAME OURS THEIRS
compare() {
	local name=$1 ours=$2 theirs=$3
	: >"$WORK/o"
	: >"$WORK/th"
	measure "$ours" >/dev/null
	measure "$theirs" >/dev/null
	for ((i = 0; i < RUNS; i++)); do
		measure "$ours" >>"$WORK/o"
		measure "$theirs" >>"$WORK/th"
	done
	local ow oc tw tc lo lt
	ow=$(cut -d' ' -f1 "$WORK/o" | median)
	oc=$(cut -d' ' -f2 "$WORK/o" | median)
	tw=$(cut -d' ' -f1 "$WORK/th" | median)
	tc=$(cut -d' ' -f2 "$WORK/th" | median)
	lo=$(cd "$DIR" && bash -c "$ours" | wc -l)
	lt=$(cd "$DIR" && bash -c "$theirs" | wc -l)
	printf '| %-40s | %5s | %5s | %5s | %5s | **%s** | %s | %s / %s |\n' "$name" "$ow" "$tw" "$oc" "$tc" \
		"$(awk -v a="$ow" -v b="$tw" 'BEGIN{printf "%.2f", a/b}')" \
		"$(awk -v a="$oc" -v b="$tc" 'BEGIN{printf "%.2f", (b>0)?a/b:0}')" "$lo" "$lt"
}

echo "tree: $DIR ($(find "$DIR" -type f | wc -l) files), runs: $RUNS, cores: $(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rg: $(rg --version 2>/dev/null | sed -n 1p), fd: $(fdfind --version), go: $(go env GOVERSION)"
echo
echo "| case | ours wall ms | theirs wall ms | ours cpu ms | theirs cpu ms | wall ratio | cpu ratio | lines ours / theirs |"
echo "|---|---|---|---|---|---|---|---|"
RG="rg -n --no-heading --hidden --no-config"
# file_search through the tool (Bind + Run, pages of 1000) against rg.
compare "search literal 'func main' (tool)" "$BIN -literal -pattern 'func main'" "$RG -F 'func main'"
compare "search literal 'context.Context' (tool)" "$BIN -literal -pattern 'context.Context'" "$RG -F 'context.Context'"
compare "search regexp 'func \\(\\w+ \\*\\w+\\) Close\\(' (tool)" "$BIN -pattern 'func \\(\\w+ \\*\\w+\\) Close\\('" "$RG 'func \\(\\w+ \\*\\w+\\) Close\\('"
# One rare byte ('-') to look for first.
compare "search regexp '[0-9]{4}-[0-9]{2}-[0-9]{2}' (tool)" "$BIN -pattern '[0-9]{4}-[0-9]{2}-[0-9]{2}'" "$RG '[0-9]{4}-[0-9]{2}-[0-9]{2}'"
# No literal at all: the line DFA scans every byte.
compare "search regexp '\\b[a-z]+_[a-z]+\\(' (tool, DFA)" "$BIN -pattern '\\b[a-z]+_[a-z]+\\('" "$RG '\\b[a-z]+_[a-z]+\\('"
# 23,730 hits: 24 pages through the tool, or the engine in one pass.
compare "search regexp 'err(or)?\\s*!= nil' (tool, 24 pages)" "$BIN -pattern 'err(or)?\\s*!= nil'" "$RG 'err(or)?\\s*!= nil'"
compare "search regexp 'err(or)?\\s*!= nil' (engine, 1 pass)" "$BIN -onepass -pattern 'err(or)?\\s*!= nil'" "$RG 'err(or)?\\s*!= nil'"
# file_find through the tool (pages of 2000) against fd.
compare "find '**/*.go' (tool)" "$BIN -mode find -pattern '**/*.go'" "fdfind --hidden --type f --glob '**/*.go'"
