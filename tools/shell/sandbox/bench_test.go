package sandbox

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"
)

// BenchmarkOverhead runs the same command (bash -lc true with an empty HOME,
// what the bash tool runs) under off, bench and product, interleaved in one
// run so that the three see the same machine, and reports each mode's median
// and the median overhead of bench and product over off.
func BenchmarkOverhead(b *testing.B) {
	modes := []Mode{Off, Bench, Product}
	sbs := map[Mode]Sandbox{}
	for _, m := range modes {
		sb, err := Probe(context.Background(), string(m))
		if err != nil {
			b.Fatalf("probe %s: %v", m, err)
		}
		defer sb.Close()
		sbs[m] = sb
	}
	ws := b.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir()}
	times := map[Mode][]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, m := range modes {
			start := time.Now()
			res, err := sbs[m].Run(context.Background(), Exec{Workspace: ws, Argv: []string{"/bin/bash", "-lc", "true"}, Env: env, Timeout: time.Minute})
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("%s: %v %+v", m, err, res)
			}
			times[m] = append(times[m], time.Since(start))
		}
	}
	b.StopTimer()
	med := map[Mode]float64{}
	for _, m := range modes {
		med[m] = median(times[m])
		b.ReportMetric(med[m], string(m)+"-ms")
	}
	b.ReportMetric(med[Bench]-med[Off], "bench-overhead-ms")
	b.ReportMetric(med[Product]-med[Off], "product-overhead-ms")
}

func median(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	m := s[n/2]
	if n%2 == 0 {
		m = (s[n/2-1] + s[n/2]) / 2
	}
	return float64(m) / float64(time.Millisecond)
}
