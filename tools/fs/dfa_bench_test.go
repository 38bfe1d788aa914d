package fs

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func BenchmarkLineDFA(b *testing.B) {
	// A typical source file, not a generated one.
	data, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "net", "http", "server.go"))
	if err != nil {
		b.Skip(err)
	}
	q, err := compileQuery(`\b[a-z]+_[a-z]+\(`, false)
	if err != nil || q.prog == nil || q.required != nil {
		b.Fatal("want the DFA path", err)
	}
	d := newLineDFA(q.prog)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		pos := 0
		for {
			_, le, ok := d.nextMatchLine(data, pos)
			if !ok {
				break
			}
			pos = le + 1
		}
	}
	b.ReportMetric(float64(len(d.states)), "states")
}
