package fs

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"

	"staage/tools"
	"staage/tools/workspace"
)

// The benchmarks run the tools on the Go source tree, through Bind and
// Run as the loop calls them, paging to the end. bench/search.sh times the
// same work against ripgrep and fd.

func gorootTool(b *testing.B, name string) *tools.Tool {
	b.Helper()
	ws, err := workspace.Open(runtime.GOROOT() + "/src")
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { ws.Close() })
	ts, _ := tools.NewToolset(Declarations(ws))
	t, ok := ts.Lookup(name)
	if !ok {
		b.Fatal("no tool", name)
	}
	return t
}

func runAllPages(b *testing.B, t *tools.Tool, args map[string]any) int {
	n := 0
	delete(args, "cursor")
	for {
		raw, _ := json.Marshal(args)
		call, ref := t.Bind("b", "bench", raw)
		if ref != nil {
			b.Fatal(ref)
		}
		ok, isOk := t.Handler().Run(context.Background(), call).(tools.Ok)
		if !isOk {
			b.Fatal("refused")
		}
		var bo tools.Bounds
		switch p := ok.Payload.(type) {
		case SearchPayload:
			n += len(p.Matches)
			bo = p.Bounds
		case FindPayload:
			n += len(p.Paths)
			bo = p.Bounds
		}
		if bo.NextCursor == "" {
			return n
		}
		args["cursor"] = bo.NextCursor
	}
}

func BenchmarkSearchGorootLiteral(b *testing.B) {
	t := gorootTool(b, "file_search")
	for b.Loop() {
		runAllPages(b, t, map[string]any{"pattern": "func main", "literal": true, "limit": MaxSearchLimit})
	}
}

func BenchmarkSearchGorootRegexp(b *testing.B) {
	t := gorootTool(b, "file_search")
	for b.Loop() {
		runAllPages(b, t, map[string]any{"pattern": `func \(\w+ \*\w+\) Close\(`, "limit": MaxSearchLimit})
	}
}

func BenchmarkSearchGorootRegexpManyHits(b *testing.B) {
	t := gorootTool(b, "file_search")
	for b.Loop() {
		runAllPages(b, t, map[string]any{"pattern": `err(or)?\s*!= nil`, "limit": MaxSearchLimit})
	}
}

func BenchmarkFindGoroot(b *testing.B) {
	t := gorootTool(b, "file_find")
	for b.Loop() {
		runAllPages(b, t, map[string]any{"pattern": "**/*.go", "limit": MaxFindLimit})
	}
}

// BenchmarkSearchGorootOnePass is the engine alone: one page holding every
// match, no paging.
func BenchmarkSearchGorootOnePass(b *testing.B) {
	ws, err := workspace.Open(runtime.GOROOT() + "/src")
	if err != nil {
		b.Skip(err)
	}
	defer ws.Close()
	for _, c := range []struct {
		name, pattern string
		literal       bool
	}{{"literal", "func main", true}, {"regexp", `func \(\w+ \*\w+\) Close\(`, false}, {"regexpManyHits", `err(or)?\s*!= nil`, false}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Search(context.Background(), ws, c.pattern, c.literal, "", 1<<30); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSearchGorootDFA is a regexp with no literal to look for first:
// the line DFA reads every byte.
func BenchmarkSearchGorootDFA(b *testing.B) {
	ws, err := workspace.Open(runtime.GOROOT() + "/src")
	if err != nil {
		b.Skip(err)
	}
	defer ws.Close()
	for b.Loop() {
		if _, err := Search(context.Background(), ws, `\b[a-z]+_[a-z]+\(`, false, "", 1<<30); err != nil {
			b.Fatal(err)
		}
	}
}
