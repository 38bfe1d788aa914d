package approvals_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"staage/approvals"
	"staage/tools"
)

// editSchema and editArgs are shaped like file_edit's: the hottest REQUIRED
// tool in a session.
const editSchema = `{"type":"object","properties":{"path":{"type":"string","minLength":1},"digest":{"type":"string","pattern":"^sha256:[0-9a-f]{64}$"},"old":{"type":"string"},"new":{"type":"string"},"replaceAll":{"type":"boolean"}},"required":["path","old","new"],"additionalProperties":false}`

func editArgs() json.RawMessage {
	old := "func (s *Server) handle(w http.ResponseWriter, r *http.Request) {\n\tif r.Method != http.MethodGet {\n\t\thttp.Error(w, \"method\", 405)\n\t\treturn\n\t}\n"
	nw := old + "\tctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)\n\tdefer cancel()\n"
	for len(nw) < 1024 {
		nw += "\t// keep the handler small; the store does the work.\n"
	}
	b, _ := json.Marshal(map[string]any{
		"path": "internal/server/handler.go", "old": old, "new": nw,
		"digest": "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	})
	return b
}

func editTool(b *testing.B) *tools.Tool {
	return toolWith(b, tools.Declaration{RawName: "file_edit", Policy: tools.Required, Effect: tools.EffectReversible,
		Schema: json.RawMessage(editSchema)})
}

// BenchmarkBindAndGate is the target: what one tool call pays
// before its handler runs — decode, strictness checks, schema validation and
// the gate on a session-granted REQUIRED tool. Budget: 50 µs.
func BenchmarkBindAndGate(b *testing.B) {
	tool := editTool(b)
	gate := approvals.NewGate(approvals.GateConfig{})
	gate.GrantSession(approvals.Grant{Tool: tool.Name, Digest: tool.Digest})
	// A realistic number of other standing grants to scan past.
	for i := range 15 {
		gate.GrantSession(approvals.Grant{Tool: fmt.Sprint("t", i), Digest: tools.Digest{byte(i + 1)}})
	}
	raw := editArgs()
	ctx := context.Background()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		call, ref := tool.Bind("c1", "main", raw)
		if ref != nil {
			b.Fatal(ref)
		}
		if out := gate.Check(ctx, approvals.Pending{Tool: tool, Call: call}); !out.Approved {
			b.Fatal(out.Refusal)
		}
	}
}

// BenchmarkBindAndGateParallel is the same with every core checking at once
// (lanes share one gate).
func BenchmarkBindAndGateParallel(b *testing.B) {
	tool := editTool(b)
	gate := approvals.NewGate(approvals.GateConfig{})
	gate.GrantSession(approvals.Grant{Tool: tool.Name, Digest: tool.Digest})
	raw := editArgs()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			call, ref := tool.Bind("c1", "main", raw)
			if ref != nil {
				b.Error(ref)
				return
			}
			if out := gate.Check(context.Background(), approvals.Pending{Tool: tool, Call: call}); !out.Approved {
				b.Error(out.Refusal)
				return
			}
		}
	})
}

// BenchmarkGateCheck isolates the gate by the rule that answers.
func BenchmarkGateCheck(b *testing.B) {
	tool := editTool(b)
	never := toolWith(b, tools.Declaration{RawName: "plan", Policy: tools.Never, Effect: tools.EffectIdempotentWrite})
	call, ref := tool.Bind("c1", "main", editArgs())
	if ref != nil {
		b.Fatal(ref)
	}
	ws, key := b.TempDir(), b.TempDir()+"/k"
	gf, err := approvals.OpenGrantFile(ws, key)
	if err != nil {
		b.Fatal(err)
	}
	if err := gf.Add(approvals.Grant{Tool: tool.Name, Digest: tool.Digest}); err != nil {
		b.Fatal(err)
	}
	sessionGate := approvals.NewGate(approvals.GateConfig{})
	sessionGate.GrantSession(approvals.Grant{Tool: tool.Name, Digest: tool.Digest})
	cases := []struct {
		name string
		gate *approvals.Gate
		tool *tools.Tool
	}{
		{"never", approvals.NewGate(approvals.GateConfig{}), never},
		{"auto", approvals.NewGate(approvals.GateConfig{Auto: []tools.EffectClass{tools.EffectReversible}}), tool},
		{"session", sessionGate, tool},
		{"always", approvals.NewGate(approvals.GateConfig{Always: gf}), tool},
		// The operator answers at once: the cost of building the request
		// (preview fallback, prefixes) around the human's time.
		{"asked", approvals.NewGate(approvals.GateConfig{Approver: approvals.ApproverFunc(
			func(context.Context, approvals.Request) (approvals.Decision, error) { return once, nil })}), tool},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			p := approvals.Pending{Tool: c.tool, Call: call}
			b.ReportAllocs()
			for b.Loop() {
				if out := c.gate.Check(context.Background(), p); !out.Approved {
					b.Fatal(out.Refusal)
				}
			}
		})
	}
}
