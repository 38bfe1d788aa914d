#!/usr/bin/env bash
# Session journal figures: append cost per event (unsynced, streamed delta,
# fsynced), resume of a 10,000-event session (journal + reducer, and to the
# console's first frame), and listing 50 sessions. Checks the two budgets of
# issue 5: unsynced append < 20 µs, resume to first frame < 300 ms.
# Usage: bench/journal.sh [count]   (default 3 runs of each benchmark)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-3}"
go version
uname -r
nproc
{
	go test -run '^$' -bench 'Append|Resume10k|List50' -benchtime 1s -count "$n" ./agent/journal/
	go test -run '^$' -bench 'ResumeToFirstFrame10k' -benchtime 10x -count "$n" ./bench/journal/
} | tee /dev/stderr | awk '
	/^Benchmark/ {
		name = $1; sub(/-[0-9]+$/, "", name)
		v = $3 + 0
		if (!(name in best) || v < best[name]) best[name] = v
	}
	END {
		for (k in best) printf "%-40s best %12.1f µs\n", k, best[k] / 1000
		if (best["BenchmarkAppendUnsynced"] > 20000) { print "unsynced append over 20 µs"; bad = 1 }
		if (best["BenchmarkResumeToFirstFrame10k"] > 300000000) { print "resume to first frame over 300 ms"; bad = 1 }
		exit bad
	}'
