package app

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"staage/agent"
	"staage/approvals"
	"staage/themes"
	"staage/tools"
	"staage/ui/modal"
)

func benchModel(b *testing.B, items int) *Model {
	m := New(Config{Env: themes.Env{Override: themes.Dark}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	for _, msg := range demoEvents() {
		m.Update(msg)
	}
	t := m.cur()
	for i := 0; t.Len() < items; i++ {
		switch i % 3 {
		case 0:
			m.Update(ev(agent.UserMessage{Lane: "main", Text: fmt.Sprintf("prompt %d", i)}))
		case 1:
			m.Update(ev(agent.AssistantMessage{Lane: "main", Message: agent.Message{Text: fmt.Sprintf("Answer %d with **bold**.", i)}}))
		case 2:
			id := fmt.Sprint("c", i)
			m.Update(ev(agent.ToolCall{Lane: "main", ID: id, Tool: "file_read", Effect: tools.EffectRead, Input: raw(map[string]any{"path": "a.go"})}))
			m.Update(ev(agent.ToolResult{Lane: "main", ID: id, OK: true}))
		}
	}
	m.View()
	return m
}

// BenchmarkAppView10k is the console's whole frame at 120×40 with 10,000
// transcript items, plan and desk panes, input and bars.
func BenchmarkAppView10k(b *testing.B) {
	m := benchModel(b, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.View()
	}
}

// BenchmarkAppStreamDelta is one streamed delta: Update plus the View the
// program calls after it (the delta is shown at the next frame).
func BenchmarkAppStreamDelta(b *testing.B) {
	m := benchModel(b, 10000)
	m.Update(ev(agent.TextDelta{Lane: "main", Text: "start "}))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Update(ev(agent.TextDelta{Lane: "main", Text: "word "}))
		m.View()
	}
}

// bigEdit is a 5,000-line Go file with 50 scattered one-line edits.
func bigEdit() tools.FileDiff {
	var old, nw strings.Builder
	for i := 0; i < 5000; i++ {
		line := fmt.Sprintf("\tx%d := compute(%d, \"value %d\") // line %d\n", i, i, i, i)
		old.WriteString(line)
		if i%100 == 50 {
			line = fmt.Sprintf("\tx%d := computeFaster(%d, \"value %d\")\n", i, i, i)
		}
		nw.WriteString(line)
	}
	return tools.FileDiff{Path: "big/gen.go", Op: tools.FileModify, Old: "package big\n\nfunc f() {\n" + old.String() + "}\n", New: "package big\n\nfunc f() {\n" + nw.String() + "}\n"}
}

// BenchmarkModalOpen5000 is the first paint of the approval modal for a
// 5,000-line file with 50 scattered edits: the diff is computed once (no
// precomputed unified text) and nothing is highlighted before the paint.
func BenchmarkModalOpen5000(b *testing.B) {
	m := benchModel(b, 100)
	fd := bigEdit()
	req := approvals.Request{ID: "x", Descriptor: descriptor("file_edit", tools.EffectReversible),
		Args: raw(map[string]any{"path": fd.Path}), Preview: tools.DiffPreview{Files: []tools.FileDiff{fd}}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ch := make(chan approvals.Decision, 1)
		m.Update(modal.OpenMsg{Request: modal.Request{Key: uint64(i + 1), Req: req, Answer: ch}})
		m.View()
		b.StopTimer()
		m.Update(modal.CancelMsg{Key: uint64(i + 1)})
		b.StartTimer()
	}
}

// BenchmarkModalScroll5000 is one scroll step in that modal (the visible
// lines come from the highlight cache or plain).
func BenchmarkModalScroll5000(b *testing.B) {
	m := benchModel(b, 100)
	fd := bigEdit()
	ch := make(chan approvals.Decision, 1)
	m.Update(modal.OpenMsg{Request: modal.Request{Key: 1, Req: approvals.Request{ID: "x", Descriptor: descriptor("file_edit", tools.EffectReversible),
		Args: raw(map[string]any{"path": fd.Path}), Preview: tools.DiffPreview{Files: []tools.FileDiff{fd}}}, Answer: ch}})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.modal.Scroll(1 - 2*(i/200%2))
		m.View()
	}
}
