package journal

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"staage/agent"
	"staage/tools"
)

// BenchmarkAppendUnsynced is the per-event cost of an event that is written
// but not fsynced (usage, tool_call, plan, desk, warnings).
func BenchmarkAppendUnsynced(b *testing.B) {
	w, err := Create(b.TempDir(), testHeader("bench"))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	call := agent.ToolCall{Lane: "main", ID: "toolu_01ABCDEF", Tool: "file_read", Policy: tools.Required, Effect: tools.EffectRead,
		Digest: "sha256:" + strings.Repeat("ab", 32), Input: json.RawMessage(`{"limit":200,"offset":1,"path":"internal/server/handler.go"}`)}
	usage := agent.UsageReport{Lane: "main", Usage: agent.Usage{InputTokens: 12000, OutputTokens: 300}, CostUSD: 0.04}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			w.Publish(call)
		} else {
			w.Publish(usage)
		}
	}
	b.StopTimer()
	if w.Err() != nil {
		b.Fatal(w.Err())
	}
}

// BenchmarkAppendTextDelta is the cost of one streamed delta (coalesced in
// memory; a line reaches the file every 16 KiB or at the next event).
func BenchmarkAppendTextDelta(b *testing.B) {
	w, err := Create(b.TempDir(), testHeader("bench"))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	d := agent.TextDelta{Lane: "main", Text: "streamed token "}
	b.ReportAllocs()
	for b.Loop() {
		w.Publish(d)
	}
}

// BenchmarkAppendSynced is a decision or result: written and fsynced before
// Publish returns (dominated by the disk).
func BenchmarkAppendSynced(b *testing.B) {
	w, err := Create(b.TempDir(), testHeader("bench"))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	res := agent.ToolResult{Lane: "main", ID: "toolu_01", Tool: "file_read", OK: true, Payload: json.RawMessage(`{"lines":"1\tpackage main\n","digest":"sha256:00"}`)}
	for b.Loop() {
		w.Publish(res)
	}
}

// writeSession journals n events of a realistic mix: turns of a prompt,
// streamed text, a message with a call, its approval, start and result, a
// plan change and usage.
func writeSession(tb testing.TB, dir string, n int) string {
	tb.Helper()
	w, err := Create(dir, testHeader("big"))
	if err != nil {
		tb.Fatal(err)
	}
	// The header comes from the writer; the events are appended as the
	// writer would encode them, through one buffer and one fsync, so the
	// fixture takes a moment instead of ten thousand fsyncs.
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	f, err := os.OpenFile(w.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		tb.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	count := 0
	pub := func(e agent.Event) {
		line, err := agent.EncodeEvent(e)
		if err != nil {
			tb.Fatal(err)
		}
		bw.Write(append(line, '\n'))
		count++
	}
	for turn := 0; count < n; turn++ {
		id := fmt.Sprintf("call-%d", turn)
		input := json.RawMessage(fmt.Sprintf(`{"path":"pkg/file%d.go","limit":200}`, turn))
		pub(agent.UserMessage{Lane: "main", Text: fmt.Sprintf("step %d: read the next file and summarize it", turn)})
		pub(agent.TextDelta{Lane: "main", Text: strings.Repeat("Reading the file now. ", 8)})
		pub(agent.AssistantMessage{Lane: "main", Message: agent.Message{Role: agent.RoleAssistant, Text: strings.Repeat("Reading the file now. ", 8),
			ToolCalls: []agent.ToolCallPart{{ID: id, Name: "file_read", Input: input}}}, Stop: "tool_use"})
		pub(agent.ToolCall{Lane: "main", ID: id, Tool: "file_read", Digest: "sha256:" + strings.Repeat("ab", 32), Input: input})
		pub(agent.ApprovalDecided{Lane: "main", ID: id, Tool: "file_read", Digest: "sha256:" + strings.Repeat("ab", 32), Decision: "approved", Scope: "auto"})
		pub(agent.ToolStarted{Lane: "main", ID: id, Tool: "file_read"})
		pub(agent.ToolResult{Lane: "main", ID: id, Tool: "file_read", OK: true, Payload: json.RawMessage(`{"content":"` + strings.Repeat(`1\tpackage x\n`, 40) + `","digest":"sha256:00"}`)})
		pub(agent.PlanChanged{Lane: "main", Steps: []tools.PlanStep{{Title: "read", Status: "done"}, {Title: "summarize", Status: "in_progress"}}})
		pub(agent.UsageReport{Lane: "main", Usage: agent.Usage{InputTokens: 1000, OutputTokens: 50}})
		pub(agent.TurnDone{Lane: "main", Stop: "end_turn"})
	}
	if err := bw.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return w.Path()
}

// BenchmarkResume10k opens a 10,000-event session (lock, read, parse,
// settle) and folds it through the live reducer, which is everything
// resume does before the console draws its first frame.
func BenchmarkResume10k(b *testing.B) {
	path := writeSession(b, b.TempDir(), 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w, r, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		st := agent.NewState()
		for _, e := range r.Events {
			st.Apply(e)
		}
		if len(st.History("main")) == 0 {
			b.Fatal("empty history")
		}
		w.Close()
	}
}

// BenchmarkList50 lists a directory of 50 sessions (the browser's cost).
func BenchmarkList50(b *testing.B) {
	dir := b.TempDir()
	for i := 0; i < 50; i++ {
		h := testHeader(fmt.Sprintf("s%02d", i))
		w, err := Create(dir, h)
		if err != nil {
			b.Fatal(err)
		}
		for j := 0; j < 100; j++ {
			w.Publish(agent.UsageReport{Lane: "main"})
		}
		w.Publish(agent.UserMessage{Lane: "main", Text: "prompt"})
		w.Close()
	}
	for b.Loop() {
		if l, err := List(dir); err != nil || len(l) != 50 {
			b.Fatal(err)
		}
	}
}

func TestWriteSessionHas10kEvents(t *testing.T) {
	path := writeSession(t, t.TempDir(), 10000)
	r, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Events) < 10000 || len(r.Problems) != 0 || len(r.Unanswered) != 0 {
		t.Fatalf("%d events, problems %v, unanswered %d", len(r.Events), r.Problems, len(r.Unanswered))
	}
	_ = filepath.Base(path)
}

// BenchmarkRead10k is the reader alone (split, decode, fold).
func BenchmarkRead10k(b *testing.B) {
	path := writeSession(b, b.TempDir(), 10000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(path); err != nil {
			b.Fatal(err)
		}
	}
}
