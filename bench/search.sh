#!/usr/bin/env bash
# bench/search.sh — file_search and file_find against ripgrep and fd on the
# Go source tree, side by side in one run. Prints median wall times and the
# ratio ours/theirs. Usage: bench/search.sh [runs] [dir]
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${1:-15}
DIR=${2:-$(go env GOROOT)/src}

if ! command -v rg >/dev/null || ! command -v fdfind >/dev/null; then
	apt-get install -y ripgrep fd-find >/dev/null
fi

BIN=$(mktemp -d)/fsbench
trap 'rm -rf "$(dirname "$BIN")"' EXIT
go build -o "$BIN" ./bench/cmd/fsbench

# time_ms CMD... : wall time of one run in milliseconds, output discarded.
time_ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# compare NAME "OURS..." "THEIRS..." : alternate runs so both see the same
# machine load, after one warm-up each.
compare() {
	local name=$1 ours=$2 theirs=$3 o=() t=()
	bash -c "$ours" >/dev/null
	bash -c "$theirs" >/dev/null
	for ((i = 0; i < RUNS; i++)); do
		o+=("$(time_ms bash -c "$ours")")
		t+=("$(time_ms bash -c "$theirs")")
	done
	local mo mt
	mo=$(printf '%s\n' "${o[@]}" | median)
	mt=$(printf '%s\n' "${t[@]}" | median)
	local lo lt
	lo=$(bash -c "$ours" | wc -l)
	lt=$(bash -c "$theirs" | wc -l)
	printf '%-28s ours %6s ms (%6s lines)   theirs %6s ms (%6s lines)   ratio %s\n' \
		"$name" "$mo" "$lo" "$mt" "$lt" "$(awk -v a="$mo" -v b="$mt" 'BEGIN{printf "%.2f", a/b}')"
}

echo "tree: $DIR ($(find "$DIR" -type f | wc -l) files), runs: $RUNS, cores: $(nproc)"
echo "rg: $(rg --version | head -1), fd: $(fdfind --version)"
compare "search literal 'func main'" \
	"$BIN -dir '$DIR' -mode search -literal -pattern 'func main'" \
	"rg -n --no-heading --hidden -F 'func main' '$DIR'"
compare "search literal 'context.Context'" \
	"$BIN -dir '$DIR' -mode search -literal -pattern 'context.Context'" \
	"rg -n --no-heading --hidden -F 'context.Context' '$DIR'"
compare "search regex 'func \\(\\w+ \\*\\w+\\) Close\\('" \
	"$BIN -dir '$DIR' -mode search -pattern 'func \\(\\w+ \\*\\w+\\) Close\\('" \
	"rg -n --no-heading --hidden 'func \\(\\w+ \\*\\w+\\) Close\\(' '$DIR'"
compare "search regex 'err(or)?\\s*!= nil'" \
	"$BIN -dir '$DIR' -mode search -pattern 'err(or)?\\s*!= nil'" \
	"rg -n --no-heading --hidden 'err(or)?\\s*!= nil' '$DIR'"
compare "find '**/*.go'" \
	"$BIN -dir '$DIR' -mode find -pattern '**/*.go'" \
	"fdfind --hidden --type f --glob '**/*.go' . '$DIR'"
