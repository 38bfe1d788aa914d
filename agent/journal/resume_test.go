package journal

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"staage/agent"
	"staage/tools"
)

// baseJournal writes a small finished conversation and returns its path.
func baseJournal(t *testing.T, dir string) string {
	t.Helper()
	w := create(t, dir, "base")
	w.Publish(agent.UserMessage{Lane: "main", Text: "write a"})
	w.Publish(agent.AssistantMessage{Lane: "main", Message: agent.Message{Role: agent.RoleAssistant, Text: "ok"}, Stop: "end_turn"})
	w.Publish(agent.TurnDone{Lane: "main", Stop: "end_turn"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.Path()
}

func appendBytes(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func hasProblem(r *Replay, substr string) bool {
	for _, p := range r.Problems {
		if strings.Contains(p, substr) {
			return true
		}
	}
	return false
}

func TestDamagedJournalsResumeOrRefuseClearly(t *testing.T) {
	cases := []struct {
		name    string
		damage  func(t *testing.T, path string)
		refuse  string // substring of Open's error; "" = resumes
		problem string // substring of a reported problem
		events  int    // events after Open (3 intact + any appended)
	}{
		{name: "torn tail", damage: func(t *testing.T, p string) {
			appendBytes(t, p, `{"type":"user","lane":"main","te`)
		}, problem: "torn last line", events: 3},
		{name: "torn tail of NUL bytes", damage: func(t *testing.T, p string) {
			appendBytes(t, p, strings.Repeat("\x00", 40))
		}, problem: "torn last line", events: 3},
		{name: "garbage tail", damage: func(t *testing.T, p string) {
			appendBytes(t, p, "#!@ not json at all\n")
		}, problem: "garbage last line", events: 3},
		{name: "unknown event type", damage: func(t *testing.T, p string) {
			appendBytes(t, p, `{"type":"hologram","lane":"main","x":1}`+"\n"+`{"type":"hologram"}`+"\n"+`{"type":"user","lane":"main","text":"later"}`+"\n")
		}, problem: `2 event(s) of unknown type "hologram"`, events: 4},
		{name: "garbage in the middle", damage: func(t *testing.T, p string) {
			appendBytes(t, p, "{{{\n"+`{"type":"user","lane":"main","text":"later"}`+"\n")
		}, problem: "line 5: unreadable line", events: 4},
		{name: "known type with wrong fields", damage: func(t *testing.T, p string) {
			appendBytes(t, p, `{"type":"user","lane":7}`+"\n"+`{"type":"turn_done","lane":"main","stop":"end_turn"}`+"\n")
		}, problem: "decode user event", events: 4},
		{name: "truncated header", damage: func(t *testing.T, p string) {
			os.WriteFile(p, []byte(`{"type":"header","version":1,"id":"ba`), 0o600)
		}, refuse: "header line is torn", problem: "torn last line"},
		{name: "garbage header", damage: func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append([]byte("hello\n"), b[strings.IndexByte(string(b), '\n')+1:]...), 0o600)
		}, refuse: "header line is unreadable", problem: "line 1"},
		{name: "not a header", damage: func(t *testing.T, p string) {
			os.WriteFile(p, []byte(`{"type":"user","lane":"main","text":"x"}`+"\n"), 0o600)
		}, refuse: "not a staage session header"},
		{name: "empty file", damage: func(t *testing.T, p string) {
			os.WriteFile(p, nil, 0o600)
		}, refuse: "the file is empty"},
		{name: "newer format", damage: func(t *testing.T, p string) {
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), `"version":1`, `"version":9`, 1)), 0o600)
		}, refuse: "written by a newer staage (journal format 9; this build reads up to 1)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := baseJournal(t, t.TempDir())
			c.damage(t, path)
			r, err := Read(path)
			if err != nil {
				t.Fatalf("Read is never fatal on damage: %v", err)
			}
			if c.problem != "" && !hasProblem(r, c.problem) {
				t.Errorf("problems %q lack %q", r.Problems, c.problem)
			}
			w, r2, err := Open(path)
			if c.refuse != "" {
				if err == nil || !strings.Contains(err.Error(), c.refuse) {
					t.Fatalf("Open: %v, want refusal containing %q", err, c.refuse)
				}
				// The refusal released the lock: nothing is left held.
				if _, _, err2 := Open(path); err2 != nil && strings.Contains(err2.Error(), "another staage") {
					t.Fatal("refused Open kept the lock")
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if len(r2.Events) != c.events {
				t.Errorf("events %d, want %d", len(r2.Events), c.events)
			}
			// Appending after the damage yields a journal that reads back
			// with the new event and without a torn tail.
			w.Publish(agent.UserMessage{Lane: "main", Text: "resumed"})
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r3, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if hasProblem(r3, "torn") {
				t.Errorf("torn tail survived Open: %q", r3.Problems)
			}
			last := r3.Events[len(r3.Events)-1]
			if u, ok := last.(agent.UserMessage); !ok || u.Text != "resumed" {
				t.Errorf("last event %#v", last)
			}
		})
	}
}

func TestOpenSettlesUnansweredCallsOnce(t *testing.T) {
	dir := t.TempDir()
	w := create(t, dir, "s")
	w.Publish(agent.UserMessage{Lane: "main", Text: "do three things"})
	w.Publish(agent.AssistantMessage{Lane: "main", Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCallPart{
		{ID: "done", Name: "file_read"}, {ID: "running", Name: "file_write"}, {ID: "never", Name: "bash"},
	}}, Stop: "tool_use"})
	w.Publish(agent.ToolCall{Lane: "main", ID: "done", Tool: "file_read", Input: json.RawMessage(`{}`)})
	w.Publish(agent.ToolStarted{Lane: "main", ID: "done", Tool: "file_read"})
	w.Publish(agent.ToolResult{Lane: "main", ID: "done", Tool: "file_read", OK: true})
	w.Publish(agent.ToolCall{Lane: "main", ID: "running", Tool: "file_write", Input: json.RawMessage(`{"path":"sub/a.txt"}`)})
	w.Publish(agent.ToolStarted{Lane: "main", ID: "running", Tool: "file_write"})
	// SIGKILL here: no Close.
	w.f.Close()

	w2, r, err := Open(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Unanswered) != 2 || r.Unanswered[0].ID != "running" || !r.Unanswered[0].Started || r.Unanswered[1].ID != "never" || r.Unanswered[1].Started {
		t.Fatalf("unanswered %+v", r.Unanswered)
	}
	if !r.Interrupted("main", "running") || r.Interrupted("main", "never") {
		t.Fatal("Interrupted() disagrees with Unanswered")
	}
	tail := r.Events[len(r.Events)-2:]
	if res := tail[0].(agent.ToolResult); res.ID != "running" || res.Refusal != tools.ToolInterrupted || res.OK {
		t.Errorf("settled running: %+v", res)
	}
	if res := tail[1].(agent.ToolResult); res.ID != "never" || res.Refusal != tools.ToolCancelled {
		t.Errorf("settled never: %+v", res)
	}
	// The reducer sees every call answered: nothing would be re-run.
	st := agent.NewState()
	for _, e := range r.Events {
		st.Apply(e)
	}
	if u := st.Unanswered(); len(u) != 0 {
		t.Errorf("state still has unanswered calls: %+v", u)
	}
	w2.Close()
	// The settlement is durable: a second resume finds nothing to settle.
	w3, r3, err := Open(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer w3.Close()
	if len(r3.Unanswered) != 0 || len(r3.Events) != len(r.Events) {
		t.Fatalf("second open: unanswered %v, %d events (first had %d)", r3.Unanswered, len(r3.Events), len(r.Events))
	}
}

func TestMarkResumedUpdatesHeaderAndChangedTools(t *testing.T) {
	path := baseJournal(t, t.TempDir())
	w, r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	now := map[string]string{"file_write": "sha256:" + strings.Repeat("b", 64), "bash": "sha256:c"}
	if got := ChangedTools(r.Header.Tools, now); len(got) != 1 || got[0] != "file_write" {
		t.Fatalf("ChangedTools %v", got)
	}
	if err := w.MarkResumed(Header{Provider: "anthropic/claude", Sandbox: "bench", Tools: now}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r2, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Resumes != 1 || r2.Header.Provider != "anthropic/claude" || r2.Header.Tools["bash"] != "sha256:c" || r2.Header.ID != "base" {
		t.Fatalf("after resume: %+v (resumes %d)", r2.Header, r2.Resumes)
	}
	if len(r2.Problems) != 0 || len(r2.Events) != 3 {
		t.Fatalf("problems %v events %d", r2.Problems, len(r2.Events))
	}
	if ChangedTools(r2.Header.Tools, now) != nil {
		t.Error("tools changed against themselves")
	}
}

func TestManyBadLinesAreSummarized(t *testing.T) {
	path := baseJournal(t, t.TempDir())
	appendBytes(t, path, strings.Repeat("junk\n", 100)+`{"type":"turn_done","lane":"main","stop":"end_turn"}`+"\n")
	r, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) > maxLineProblems+1 || !hasProblem(r, "80 more unreadable lines") {
		t.Fatalf("%d problems: %q", len(r.Problems), r.Problems[len(r.Problems)-1])
	}
	if len(r.Events) != 4 {
		t.Fatalf("events %d", len(r.Events))
	}
}

func TestOpenMissingSession(t *testing.T) {
	_, _, err := Open(filepath.Join(t.TempDir(), "nope.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "no session at") {
		t.Fatalf("err %v", err)
	}
}

// FuzzReadNeverFails appends arbitrary bytes to a valid journal: reading
// never fails or panics, and Open either refuses with an error or leaves a
// journal that reads back without a torn tail.
func FuzzReadNeverFails(f *testing.F) {
	for _, s := range []string{"", "{", "\n\n", `{"type":"user","lane":1}` + "\n", "\x00\x00", `{"type":"x"}`, `{"type":"resumed","tools":7}` + "\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, tail []byte) {
		path := baseJournal(t, t.TempDir())
		appendBytes(t, path, string(tail))
		if _, err := Read(path); err != nil {
			t.Fatalf("Read: %v", err)
		}
		w, _, err := Open(path)
		if err != nil {
			return
		}
		w.Publish(agent.UserMessage{Lane: "main", Text: "after"})
		w.Close()
		r, err := Read(path)
		if err != nil || hasProblem(r, "torn") {
			t.Fatalf("after Open: %v %q", err, r.Problems)
		}
	})
}

// TestLargeJournalKeepsOrderAndLineNumbers reads a large journal with
// damage inside: events keep their order and problems their line numbers.
func TestLargeJournalKeepsOrderAndLineNumbers(t *testing.T) {
	w := create(t, t.TempDir(), "large")
	w.Close()
	var b strings.Builder
	for i := 0; i < 4000; i++ {
		switch i {
		case 1500:
			b.WriteString("not json\n")
		case 3000:
			b.WriteString(`{"type":"hologram"}` + "\n")
		}
		fmt.Fprintf(&b, `{"type":"user","lane":"main","text":"%d"}`+"\n", i)
	}
	appendBytes(t, w.Path(), b.String())
	r, err := Read(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Events) != 4000 {
		t.Fatalf("%d events", len(r.Events))
	}
	for i, e := range r.Events {
		if e.(agent.UserMessage).Text != strconv.Itoa(i) {
			t.Fatalf("event %d is %q", i, e.(agent.UserMessage).Text)
		}
	}
	if !hasProblem(r, "line 1502: unreadable line") || !hasProblem(r, `1 event(s) of unknown type "hologram"`) || len(r.Problems) != 2 {
		t.Fatalf("problems %q", r.Problems)
	}
}
