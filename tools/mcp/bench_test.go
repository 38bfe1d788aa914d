package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"staage/tools"
)

// BenchmarkCall is one approved call end to end over a real stdio pipe:
// bind, the rug-pull listing, tools/call, the bounded payload.
func BenchmarkCall(b *testing.B) {
	o, err := Connect(context.Background(), []Server{testServer(b, "bench", "basic")}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer o.Close()
	ts, _ := tools.NewToolset(o.Declarations())
	tool, ok := ts.Lookup("bench__echo")
	if !ok {
		b.Fatal("bench__echo not offered")
	}
	c, ref := tool.Bind("1", "main", json.RawMessage(`{"text":"hello"}`))
	if ref != nil {
		b.Fatal(ref)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, ok := tool.Handler().Run(context.Background(), c).(tools.Ok); !ok {
			b.Fatal("call failed")
		}
	}
}

// BenchmarkListTools is the rug-pull check alone.
func BenchmarkListTools(b *testing.B) {
	o, err := Connect(context.Background(), []Server{testServer(b, "bench", "basic")}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer o.Close()
	s := o.servers[0]
	for b.Loop() {
		if _, err := s.list(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConnect is one server's boot: start, initialize, tools/list.
func BenchmarkConnect(b *testing.B) {
	srv := testServer(b, "bench", "basic")
	for b.Loop() {
		o, err := Connect(context.Background(), []Server{srv}, Options{})
		if err != nil || len(o.Declarations()) == 0 {
			b.Fatal(err, o.Report())
		}
		_ = o.Close()
	}
}

// BenchmarkStrip is the stripper over 64 KiB of text: plain, and with an
// escape sequence every line.
func BenchmarkStrip(b *testing.B) {
	plain := strings.Repeat("an ordinary line of tool output, nothing hidden\n", 1365)
	dirty := strings.Repeat("an \x1b[31mordinary\x1b[0m line of tool output, ünïcode\n", 1200)
	b.Run("plain", func(b *testing.B) {
		b.SetBytes(int64(len(plain)))
		for b.Loop() {
			strip(plain)
		}
	})
	b.Run("escapes", func(b *testing.B) {
		b.SetBytes(int64(len(dirty)))
		for b.Loop() {
			strip(dirty)
		}
	})
}
