// Package journal measures resuming a long session the way the console
// does it: lock and read the journal, fold its events through the agent's
// reducer (Session.Restore), build the console from the same events and
// draw its first frame. Run it with bench/journal.sh.
package journal

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"staage/agent"
	"staage/agent/journal"
	"staage/themes"
	"staage/tools"
	"staage/ui/app"
)

// writeSession journals at least n events of a realistic mix: a prompt,
// streamed text, a message with a call, its approval, start and result, a
// plan change, usage and the end of the turn.
func writeSession(tb testing.TB, dir string, n int) string {
	tb.Helper()
	w, err := journal.Create(dir, journal.Header{ID: "big", Workspace: "/w", Provider: "script", Sandbox: "off"})
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
	digest := "sha256:" + strings.Repeat("ab", 32)
	for turn := 0; count < n; turn++ {
		id := fmt.Sprintf("call-%d", turn)
		input := json.RawMessage(fmt.Sprintf(`{"path":"pkg/file%d.go","limit":200}`, turn))
		text := fmt.Sprintf("Step %d. Reading `pkg/file%d.go` now, then I will **summarize** it.", turn, turn)
		pub(agent.UserMessage{Lane: agent.MainLane, Text: fmt.Sprintf("step %d: read the next file and summarize it", turn)})
		pub(agent.TextDelta{Lane: agent.MainLane, Text: text})
		pub(agent.AssistantMessage{Lane: agent.MainLane, Message: agent.Message{Role: agent.RoleAssistant, Text: text,
			ToolCalls: []agent.ToolCallPart{{ID: id, Name: "file_read", Input: input}}}, Stop: "tool_use"})
		pub(agent.ToolCall{Lane: agent.MainLane, ID: id, Tool: "file_read", Policy: tools.Required, Effect: tools.EffectRead, Digest: digest, Input: input})
		pub(agent.ApprovalDecided{Lane: agent.MainLane, ID: id, Tool: "file_read", Digest: digest, Decision: "approved", Scope: "auto"})
		pub(agent.ToolStarted{Lane: agent.MainLane, ID: id, Tool: "file_read"})
		pub(agent.ToolResult{Lane: agent.MainLane, ID: id, Tool: "file_read", OK: true,
			Payload: json.RawMessage(`{"content":"` + strings.Repeat(`1\tpackage x\n`, 40) + `","digest":"sha256:00"}`)})
		pub(agent.PlanChanged{Lane: agent.MainLane, Steps: []tools.PlanStep{{Title: "read", Status: "done"}, {Title: "summarize", Status: "in_progress"}}})
		pub(agent.UsageReport{Lane: agent.MainLane, Usage: agent.Usage{InputTokens: 1000, OutputTokens: 50}})
		pub(agent.TurnDone{Lane: agent.MainLane, Stop: "end_turn"})
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

// resume is everything between `staage --continue` finding the session and
// the console's first frame.
func resume(tb testing.TB, path string) string {
	w, r, err := journal.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Close()
	sess := agent.NewSession(agent.SessionConfig{})
	sess.Restore(r.Events)
	m := app.New(app.Config{History: r.Events, Env: themes.Env{DarkBackground: true}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	return m.View().Content
}

// BenchmarkResumeToFirstFrame10k is the budget: a 10,000-event
// session to the first frame in under 300 ms.
func BenchmarkResumeToFirstFrame10k(b *testing.B) {
	path := writeSession(b, b.TempDir(), 10000)
	b.ReportAllocs()
	for b.Loop() {
		resume(b, path)
	}
}

func TestResumeDrawsTheLatestTurn(t *testing.T) {
	path := writeSession(t, t.TempDir(), 200)
	frame := resume(t, path)
	if !strings.Contains(frame, "summarize") {
		t.Fatalf("first frame lacks the session:\n%s", frame)
	}
}
