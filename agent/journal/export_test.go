package journal

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"staage/agent"
	"staage/tools"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestExportMarkdownGolden(t *testing.T) {
	dir := t.TempDir()
	w := create(t, dir, "export-1")
	w.Publish(agent.UserMessage{Lane: "main", Text: "Fix the \x1b[31mred\x1b[0m bug\x07 please"})
	w.Publish(agent.TextDelta{Lane: "main", Text: "I'll look."})
	w.Publish(agent.AssistantMessage{Lane: "main", Message: agent.Message{Role: agent.RoleAssistant, Text: "I'll look.",
		Thinking:  []agent.ThinkingBlock{{Text: "check\nthe file"}},
		ToolCalls: []agent.ToolCallPart{{ID: "c1", Name: "file_write"}, {ID: "c2", Name: "bash"}}}, Stop: "tool_use"})
	w.Publish(agent.ToolCall{Lane: "main", ID: "c1", Tool: "file_write", Input: json.RawMessage(`{"content":"x := ` + "```" + `\n","path":"a.go"}`)})
	w.Publish(agent.ApprovalDecided{Lane: "main", ID: "c1", Tool: "file_write", Decision: "approved", Scope: "session", Note: "careful\u202e"})
	w.Publish(agent.ToolStarted{Lane: "main", ID: "c1", Tool: "file_write"})
	w.Publish(agent.ToolResult{Lane: "main", ID: "c1", Tool: "file_write", OK: true, Payload: json.RawMessage(`{"digest":"sha256:1"}`)})
	w.Publish(agent.PlanChanged{Lane: "main", Steps: []tools.PlanStep{{Title: "read", Status: "done"}, {Title: "edit", Status: "in_progress"}, {Title: "test", Status: "pending"}}})
	w.Publish(agent.DeskChanged{Lane: "main", Page: "# Desk\n- note \x1b]52;c;AAAA\x07copied"})
	w.Publish(agent.ChildStarted{Lane: "main", Child: "scout-1", Mode: "scout", Objective: "find callers"})
	w.Publish(agent.TextDelta{Lane: "scout-1", Text: "searching…"})
	w.Publish(agent.ChildFinished{Lane: "main", Child: "scout-1", Status: "done", Envelope: json.RawMessage(`{"status":"done","summary":"2 callers"}`)})
	w.Publish(agent.ToolCall{Lane: "main", ID: "c2", Tool: "bash", Input: json.RawMessage(`{"command":"go test ./..."}`)})
	w.Publish(agent.ToolStarted{Lane: "main", ID: "c2", Tool: "bash"})
	w.f.Close() // killed mid-call
	w2, r, err := Open(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	w2.Close()
	var b bytes.Buffer
	if err := ExportMarkdown(r, &b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"\x1b", "\x07", "\u202e"} {
		if strings.Contains(out, bad) {
			t.Errorf("export contains %q", bad)
		}
	}
	if !strings.Contains(out, "**interrupted**") {
		t.Error("interrupted call not marked")
	}
	golden(t, "export.md", b.Bytes())

	// Read back later (the calls are settled now), the export still says
	// the call was interrupted.
	later, err := Read(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	var b2 bytes.Buffer
	if err := ExportMarkdown(later, &b2); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b2.String(), "**interrupted**") {
		t.Error("a settled interrupted call is not marked in a later export")
	}
}

func TestSanitize(t *testing.T) {
	cases := map[string]string{
		"plain\ttext\n":                   "plain\ttext\n",
		"\x1b[2J\x1b[Hclear":              "clear",
		"a\x1b]0;title\x07b":              "ab",
		"a\x1b]52;c;Zm9v\x1b\\b":          "ab",
		"a\x1bPdcs\x1b\\b":                "ab",
		"cr\r\nlf":                        "cr\nlf",
		"over\rwrite":                     "overwrite",
		"bidi\u202eevil\u2066x\u2069":     "bidievilx",
		"zero\u200bwidth\ufeff":           "zerowidth",
		"c1\u009b31mred":                  "c1red",
		"del\x7f nul\x00":                 "del nul",
		"bad utf8 \xff!":                  "bad utf8 \uFFFD!",
		"esc at end \x1b":                 "esc at end ",
		"charset \x1b(Bok":                "charset ok",
		"emoji 世界 ✓":                      "emoji 世界 ✓",
		"unterminated \x1b]8;;http://x y": "unterminated ",
	}
	for in, want := range cases {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"a\x1b[31mb", "\x1b]0;x\x07", "\u202e", "\xff\xfe", "ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		for _, r := range out {
			if r == 0x1b || r == 0x9b || (r < 0x20 && r != '\n' && r != '\t') || dropRune(r) {
				t.Fatalf("Sanitize(%q) left %U", s, r)
			}
		}
		if Sanitize(out) != out {
			t.Fatalf("not idempotent on %q", s)
		}
	})
}

func TestFenceOutlastsBackticks(t *testing.T) {
	got := fence("json", "a ```` b")
	if !strings.HasPrefix(got, "`````json\n") || !strings.HasSuffix(got, "\n`````\n") {
		t.Fatalf("fence %q", got)
	}
	if inlineCode("a`b") != "`` a`b ``" || inlineCode("ab") != "`ab`" {
		t.Fatalf("inlineCode %q %q", inlineCode("a`b"), inlineCode("ab"))
	}
	long := strings.Repeat("é", exportClip)
	c := clip(long)
	if !strings.Contains(c, "more bytes in the journal") || !strings.HasPrefix(c, "é") {
		t.Fatal("clip")
	}
}
