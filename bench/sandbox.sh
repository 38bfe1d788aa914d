#!/usr/bin/env bash
# Sandbox overhead per command: the same `bash -lc true` under off, bench and
# product, interleaved in one run; prints each mode's median and the median
# overhead of bench and product over off (the budget is 40 ms each).
# Usage: bench/sandbox.sh [iterations]   (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-60}"
command -v bwrap >/dev/null || { echo "bench/sandbox.sh: bubblewrap is needed (apt-get install bubblewrap)" >&2; exit 1; }
uname -r
bwrap --version
go version
go test -run '^$' -bench '^BenchmarkOverhead$' -benchtime "${n}x" -count 1 ./tools/shell/sandbox/ | tee /dev/stderr |
	awk '/BenchmarkOverhead/ {
		for (i = 1; i <= NF; i++) if ($i ~ /-ms$/) printf "%-22s %8.2f ms\n", $i, $(i-1)
		for (i = 1; i <= NF; i++) {
			if ($i == "bench-overhead-ms" && $(i-1) > 40) bad = 1
			if ($i == "product-overhead-ms" && $(i-1) > 40) bad = 1
		}
	} END { if (bad) { print "over the 40 ms budget"; exit 1 } }'
