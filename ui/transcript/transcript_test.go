package transcript

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"staage/agent"
	"staage/themes"
	"staage/tools"
	"staage/ui/markdown"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, got string) {
	t.Helper()
	path := filepath.Join("testdata", t.Name()+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(want) != got {
		t.Errorf("differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func newT(w, h int) *Transcript {
	p := themes.DarkPalette()
	t := New(themes.New(p), markdown.New(p))
	t.SetSize(w, h)
	return t
}

func plain(s string) string {
	ls := strings.Split(ansi.Strip(s), "\n")
	for i := range ls {
		ls[i] = strings.TrimRight(ls[i], " ")
	}
	return strings.Join(ls, "\n")
}

func raw(v any) json.RawMessage { b, _ := json.Marshal(v); return b }

func conversation() []agent.Event {
	return []agent.Event{
		agent.UserMessage{Lane: "main", Text: "fix the sum"},
		agent.TextDelta{Lane: "main", Text: "Reading **tally.go**."},
		agent.AssistantMessage{Lane: "main", Message: agent.Message{Text: "Reading **tally.go**."}},
		agent.ToolCall{Lane: "main", ID: "c1", Tool: "file_read", Origin: "builtin", Effect: tools.EffectRead, Digest: "sha256:" + strings.Repeat("ab", 32), Input: raw(map[string]any{"path": "tally/tally.go"})},
		agent.ApprovalDecided{Lane: "main", ID: "c1", Decision: "approved", Scope: "session"},
		agent.ToolStarted{Lane: "main", ID: "c1"},
		agent.ToolResult{Lane: "main", ID: "c1", OK: true, Payload: raw(map[string]any{"content": "package tally\n", "truncated": true, "clippedLines": 2})},
		agent.ToolCall{Lane: "main", ID: "c2", Tool: "file_edit", Effect: tools.EffectReversible, Input: raw(map[string]any{"path": "tally/tally.go", "old": "1", "new": "0"})},
		agent.ToolResult{Lane: "main", ID: "c2", Refusal: tools.FileStale, Message: "the file changed since it was read"},
		agent.ApprovalDecided{Lane: "main", ID: "c2", Decision: "denied", Scope: "once"},
		agent.ToolCall{Lane: "main", ID: "c3", Tool: "bash", Effect: tools.EffectIrreversible, Input: raw(map[string]any{"command": "curl x | sh"})},
		agent.ApprovalAsked{Lane: "main", ID: "c3", Tool: "bash"},
		agent.ApprovalDecided{Lane: "main", ID: "c3", Decision: "denied", Scope: "once", Note: "no network"},
		agent.ToolResult{Lane: "main", ID: "c3", Refusal: tools.ApprovalDenied, Message: "denied by the operator: no network"},
		agent.Warning{Lane: "main", Message: "retrying after a 529"},
		agent.TurnDone{Lane: "main", Stop: "interrupted"},
	}
}

func TestTranscriptGoldenConversation(t *testing.T) {
	tr := newT(80, 30)
	for _, e := range conversation() {
		tr.Apply(e)
	}
	golden(t, plain(tr.View()))
}

func TestTranscriptExpandCard(t *testing.T) {
	tr := newT(80, 40)
	for _, e := range conversation()[:7] {
		tr.Apply(e)
	}
	tr.ToggleSelected()
	out := plain(tr.View())
	if !strings.Contains(out, "arguments") || !strings.Contains(out, `"path": "tally/tally.go"`) || !strings.Contains(out, "result") {
		t.Fatalf("expanded card lacks arguments or result:\n%s", out)
	}
}

func TestTranscriptStreamingRendersOncePerSettle(t *testing.T) {
	tr := newT(80, 20)
	tr.Apply(agent.UserMessage{Lane: "main", Text: "go"})
	tr.View()
	before := tr.Renders()
	for i := 0; i < 5000; i++ {
		tr.Apply(agent.TextDelta{Lane: "main", Text: "tok "})
		tr.View() // the program calls View after every message
	}
	// The streaming item was rendered once (when it appeared) and never
	// again until the frame settles it.
	if n := tr.Renders() - before; n != 1 {
		t.Fatalf("%d renders for 5000 deltas before a frame, want 1", n)
	}
	tr.Settle()
	out := tr.View()
	if n := tr.Renders() - before; n != 2 {
		t.Fatalf("%d renders after one frame, want 2", n)
	}
	if !strings.Contains(out, "tok tok") {
		t.Fatal("settled text not shown")
	}
}

func TestTranscriptScrollAndFollow(t *testing.T) {
	tr := newT(60, 10)
	for i := 0; i < 50; i++ {
		tr.Apply(agent.UserMessage{Lane: "main", Text: fmt.Sprintf("message %d", i)})
	}
	if !strings.Contains(tr.View(), "message 49") {
		t.Fatal("not following the newest item")
	}
	tr.Scroll(-20)
	if tr.Following() || strings.Contains(tr.View(), "message 49") {
		t.Fatal("scrolling up kept following")
	}
	tr.Apply(agent.UserMessage{Lane: "main", Text: "message 50"})
	if strings.Contains(tr.View(), "message 50") {
		t.Fatal("new item pulled the view while scrolled up")
	}
	if !strings.Contains(tr.View(), "new below") {
		t.Fatal("no hint that new items arrived below")
	}
	tr.Scroll(1000)
	if !tr.Following() || !strings.Contains(tr.View(), "message 50") || strings.Contains(tr.View(), "new below") {
		t.Fatal("scrolling to the end did not resume following")
	}
	tr.ScrollToTop()
	if !strings.Contains(tr.View(), "message 0") {
		t.Fatal("top not shown")
	}
}

func TestTranscriptViewIsExactlyTheWindow(t *testing.T) {
	tr := newT(40, 12)
	for _, e := range conversation() {
		tr.Apply(e)
	}
	for _, w := range []int{40, 25, 100} {
		tr.SetSize(w, 12)
		lines := strings.Split(tr.View(), "\n")
		if len(lines) != 12 {
			t.Fatalf("width %d: %d lines", w, len(lines))
		}
		for i, l := range lines {
			if ansi.StringWidth(l) > w {
				t.Fatalf("width %d: line %d is %d wide: %q", w, i, ansi.StringWidth(l), ansi.Strip(l))
			}
		}
	}
}

// TestTranscriptInjectionInert: a model message and a tool result carrying
// cursor moves, OSC 52, a title change and a bidi override render inert.
func TestTranscriptInjectionInert(t *testing.T) {
	evil := "ok\x1b[2J\x1b[H\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned\x07\u202eexe.txt\u202c\u009b31m\x9b1m"
	tr := newT(80, 30)
	tr.Apply(agent.AssistantMessage{Lane: "main", Message: agent.Message{Text: evil}})
	tr.Apply(agent.ToolCall{Lane: "main", ID: "x", Tool: "file_read" + "\x1b[31m", Effect: tools.EffectRead, Input: raw(map[string]any{"path": evil})})
	tr.Apply(agent.ToolResult{Lane: "main", ID: "x", Refusal: "file.missing\x1b]0;t\x07", Message: evil, Payload: raw(map[string]any{"content": evil})})
	tr.ToggleSelected()
	out := tr.View()
	for _, bad := range []string{"\x1b[2J", "\x1b[H", "\x1b]52", "\x1b]0;", "\u202e", "\u202c", "\u009b", "\x07"} {
		if strings.Contains(out, bad) {
			t.Fatalf("%q reached the screen", bad)
		}
	}
	// Paths show where something was removed.
	if !strings.Contains(plain(out), "ok␛␛␛␛⟦U+202E⟧exe.txt⟦U+202C⟧␛") {
		t.Fatalf("no visible marker in the key argument:\n%s", plain(out))
	}
}
