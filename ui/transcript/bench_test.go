package transcript

import (
	"fmt"
	"testing"

	"staage/agent"
	"staage/tools"
)

// fill adds n items: a mix of prompts, markdown answers and tool cards.
func fill(tr *Transcript, n int) {
	for i := 0; len(tr.items) < n; i++ {
		switch i % 3 {
		case 0:
			tr.Apply(agent.UserMessage{Lane: "main", Text: fmt.Sprintf("prompt %d: please look at the handler", i)})
		case 1:
			tr.Apply(agent.AssistantMessage{Lane: "main", Message: agent.Message{Text: fmt.Sprintf("Answer %d with **bold** and `code`.\n\n- one\n- two", i)}})
		case 2:
			id := fmt.Sprint("c", i)
			tr.Apply(agent.ToolCall{Lane: "main", ID: id, Tool: "file_read", Effect: tools.EffectRead, Input: raw(map[string]any{"path": "internal/handler.go"})})
			tr.Apply(agent.ToolResult{Lane: "main", ID: id, OK: true, Payload: raw(map[string]any{"truncated": true})})
		}
	}
}

// BenchmarkTranscriptView10k is a frame of a 10,000-item transcript at
// 120×40 (the transcript's share of it), following the newest items.
func BenchmarkTranscriptView10k(b *testing.B) {
	tr := newT(120, 40)
	fill(tr, 10000)
	tr.View()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr.View()
	}
}

// BenchmarkTranscriptView10kScrolled is the same frame scrolled into the
// middle of the session.
func BenchmarkTranscriptView10kScrolled(b *testing.B) {
	tr := newT(120, 40)
	fill(tr, 10000)
	tr.ScrollToTop()
	tr.Scroll(15000)
	tr.View()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr.View()
	}
}

// BenchmarkTranscriptResize10k re-renders after a width change: only the
// visible items are rendered again.
func BenchmarkTranscriptResize10k(b *testing.B) {
	tr := newT(120, 40)
	fill(tr, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr.SetSize(100+i%2, 40)
		tr.View()
	}
}

// BenchmarkSettleLongStream is one frame of a long streaming answer (about
// 20 KB of markdown so far): the re-render the frame tick pays for.
func BenchmarkSettleLongStream(b *testing.B) {
	tr := newT(120, 40)
	var md string
	for i := 0; len(md) < 20000; i++ {
		md += fmt.Sprintf("Paragraph %d has **bold**, `code` and a [link](https://example.com/%d).\n\n- item one\n- item two\n\n", i, i)
	}
	tr.Apply(agent.TextDelta{Lane: "main", Text: md})
	tr.View()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr.Apply(agent.TextDelta{Lane: "main", Text: "x"})
		tr.Settle()
		tr.View()
	}
}
