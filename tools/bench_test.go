package tools_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"staage/tools"
)

// benchDecls is a boot's worth of declarations: the spec's catalog with
// real-sized schemas, plus two from an MCP origin.
func benchDecls() []tools.Declaration {
	var out []tools.Declaration
	for i, d := range catalogDecls() {
		d.Schema = json.RawMessage(fileEditSchema)
		if i%3 == 0 {
			d.Schema = json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"q%d":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":500},"cursor":{"type":"string"}},"required":["q%d"],"additionalProperties":false}`, i, i))
		}
		out = append(out, d)
	}
	out = append(out, decl("gh", "list-issues"), decl("gh", "get_issue"))
	return out
}

func BenchmarkNewToolset(b *testing.B) {
	decls := benchDecls()
	b.ReportMetric(float64(len(decls)), "decls")
	b.ReportAllocs()
	for b.Loop() {
		ts, _ := tools.NewToolset(decls)
		if ts.Len() != len(decls) {
			b.Fatalf("offered %d of %d", ts.Len(), len(decls))
		}
	}
}

// typicalEditArgs is a file_edit call of a realistic size (a ~1 KiB
// replacement in a Go file).
func typicalEditArgs() json.RawMessage {
	old := "func (s *Server) handle(w http.ResponseWriter, r *http.Request) {\n\tif r.Method != http.MethodGet {\n\t\thttp.Error(w, \"method\", 405)\n\t\treturn\n\t}\n"
	nw := old + "\tctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)\n\tdefer cancel()\n\tif err := s.store.Ping(ctx); err != nil {\n\t\thttp.Error(w, err.Error(), 503)\n\t\treturn\n\t}\n"
	for len(nw) < 1024 {
		nw += "\t// keep the handler small; the store does the work.\n"
	}
	b, _ := json.Marshal(map[string]any{
		"path":   "internal/server/handler.go",
		"digest": "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"old":    old,
		"new":    nw,
	})
	return b
}

func BenchmarkBind(b *testing.B) {
	tool := editTool(b)
	raw := typicalEditArgs()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ref := tool.Bind("c", "main", raw); ref != nil {
			b.Fatal(ref)
		}
	}
}
