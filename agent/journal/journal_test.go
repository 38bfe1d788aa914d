package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"staage/agent"
	"staage/tools"
)

func testHeader(id string) Header {
	return Header{
		ID: id, Workspace: "/work/proj", Provider: "script/demo", Sandbox: "product",
		Tools:   map[string]string{"file_write": "sha256:" + strings.Repeat("a", 64)},
		Started: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC),
	}
}

func create(t *testing.T, dir, id string) *Writer {
	t.Helper()
	w, err := Create(dir, testHeader(id))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestCreateWritesHeaderThenEvents(t *testing.T) {
	dir := t.TempDir()
	w := create(t, dir, "s1")
	if w.Path() != filepath.Join(dir, "s1.jsonl") || w.ID() != "s1" {
		t.Fatalf("path %s id %s", w.Path(), w.ID())
	}
	in := []agent.Event{
		agent.UserMessage{Lane: "main", Text: "hello"},
		agent.AssistantMessage{Lane: "main", Message: agent.Message{Role: agent.RoleAssistant, Text: "hi", ToolCalls: []agent.ToolCallPart{{ID: "c1", Name: "file_write", Input: json.RawMessage(`{"path":"a"}`)}}}, Stop: "tool_use"},
		agent.ToolCall{Lane: "main", ID: "c1", Tool: "file_write", Input: json.RawMessage(`{"path":"a"}`)},
		agent.ApprovalDecided{Lane: "main", ID: "c1", Tool: "file_write", Digest: "sha256:x", Decision: "approved", Scope: "session"},
		agent.ToolStarted{Lane: "main", ID: "c1", Tool: "file_write"},
		agent.ToolResult{Lane: "main", ID: "c1", Tool: "file_write", OK: true, Payload: json.RawMessage(`{"bytes":1}`)},
		agent.PlanChanged{Lane: "main", Steps: []tools.PlanStep{{Title: "write", Status: "done"}}},
		agent.DeskChanged{Lane: "main", Page: "# notes"},
		agent.TurnDone{Lane: "main", Stop: "end_turn"},
	}
	for _, e := range in {
		w.Publish(e)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ls := lines(t, w.Path())
	if !strings.HasPrefix(ls[0], `{"type":"header","version":1,"id":"s1"`) {
		t.Fatalf("header line: %s", ls[0])
	}
	r, err := Read(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 0 || len(r.Unanswered) != 0 {
		t.Fatalf("problems %v unanswered %v", r.Problems, r.Unanswered)
	}
	if r.Header.Workspace != "/work/proj" || r.Header.Tools["file_write"] == "" || r.Header.Version != Version {
		t.Fatalf("header %+v", r.Header)
	}
	if len(r.Events) != len(in) {
		t.Fatalf("got %d events, want %d", len(r.Events), len(in))
	}
	for i := range in {
		a, _ := agent.EncodeEvent(in[i])
		b, _ := agent.EncodeEvent(r.Events[i])
		if !bytes.Equal(a, b) {
			t.Errorf("event %d:\n got %s\nwant %s", i, b, a)
		}
	}
}

func TestCreateRefusesBadOrTakenID(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"../x", "a/b", ".hidden", strings.Repeat("x", 65), "a b"} {
		if _, err := Create(dir, testHeader(id)); err == nil {
			t.Errorf("Create(%q) succeeded", id)
		}
	}
	create(t, dir, "taken")
	if _, err := Create(dir, testHeader("taken")); err == nil {
		t.Error("second Create of one id succeeded")
	}
	// A minted ID is valid and sorts by time.
	h := testHeader("")
	w, err := Create(dir, h)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if !ValidID(w.ID()) || !strings.HasPrefix(w.ID(), time.Now().UTC().Format("2006")) {
		t.Errorf("minted id %q", w.ID())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, TempPrefix+"*")); len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}
}

func TestDeltasAreCoalescedInOrder(t *testing.T) {
	dir := t.TempDir()
	w := create(t, dir, "s")
	w.Publish(agent.UserMessage{Lane: "main", Text: "go"})
	for i := 0; i < 500; i++ {
		w.Publish(agent.ThinkingDelta{Lane: "main", Text: "t"})
	}
	for i := 0; i < 500; i++ {
		w.Publish(agent.TextDelta{Lane: "main", Text: "ab"})
	}
	w.Publish(agent.ToolStarted{Lane: "main", ID: "c", Tool: "task"})
	// Two lanes streaming at once each coalesce; any other event writes
	// both runs first, in the order the lanes started.
	w.Publish(agent.TextDelta{Lane: "kid", Text: "k1"})
	w.Publish(agent.TextDelta{Lane: "main", Text: "m1"})
	w.Publish(agent.TextDelta{Lane: "kid", Text: "k2"})
	w.Publish(agent.ThinkingDelta{Lane: "other", Text: "o1"})
	w.Publish(agent.TextDelta{Lane: "main", Text: "m2"})
	w.Publish(agent.UsageReport{Lane: "main"})
	w.Close()
	r, err := Read(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range r.Events {
		switch v := e.(type) {
		case agent.TextDelta:
			got = append(got, "text:"+v.Lane+":"+v.Text)
		case agent.ThinkingDelta:
			got = append(got, "thinking:"+v.Lane+":"+v.Text)
		default:
			got = append(got, e.Type())
		}
	}
	want := []string{"user", "thinking:main:" + strings.Repeat("t", 500), "text:main:" + strings.Repeat("ab", 500),
		"tool_started", "text:kid:k1k2", "text:main:m1m2", "thinking:other:o1", "usage"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
}

func TestLongStreamFlushesWithoutLosingText(t *testing.T) {
	dir := t.TempDir()
	w := create(t, dir, "s")
	var want strings.Builder
	for i := 0; i < 3000; i++ {
		s := "word " + strings.Repeat("é", i%7) + " "
		want.WriteString(s)
		w.Publish(agent.TextDelta{Lane: "main", Text: s})
	}
	// Before any other event, long text has reached the file in pieces.
	if n := len(lines(t, w.Path())); n < 2 {
		t.Fatalf("nothing flushed after %d bytes of text", want.Len())
	}
	w.Close()
	r, _ := Read(w.Path())
	var got strings.Builder
	for _, e := range r.Events {
		got.WriteString(e.(agent.TextDelta).Text)
	}
	if got.String() != want.String() {
		t.Fatal("coalesced text differs from what streamed")
	}
}

func TestNonDeltaEventsReachTheFileBeforePublishReturns(t *testing.T) {
	dir := t.TempDir()
	w := create(t, dir, "s")
	w.Publish(agent.TextDelta{Lane: "main", Text: "partial"})
	w.Publish(agent.ToolStarted{Lane: "main", ID: "c1", Tool: "bash"})
	// No Close: what a SIGKILL would leave is what is on disk now.
	r, err := Read(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Events) != 2 || r.Events[0].(agent.TextDelta).Text != "partial" || r.Events[1].Type() != "tool_started" {
		t.Fatalf("events on disk: %#v", r.Events)
	}
	if len(r.Unanswered) != 1 || !r.Unanswered[0].Started {
		t.Fatalf("unanswered %+v", r.Unanswered)
	}
}

func TestSecondOpenIsRefused(t *testing.T) {
	dir := t.TempDir()
	w := create(t, dir, "s")
	if _, _, err := Open(w.Path()); !errors.Is(err, ErrLocked) {
		t.Fatalf("Open while created: %v, want ErrLocked", err)
	}
	w.Close()
	w2, _, err := Open(w.Path())
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	defer w2.Close()
	_, _, err = Open(w.Path())
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "another staage process") {
		t.Fatalf("second Open: %v", err)
	}
	// Reading is always allowed.
	if _, err := Read(w.Path()); err != nil {
		t.Fatal(err)
	}
}

func TestWriteFailureIsRecordedNotFatal(t *testing.T) {
	dir := t.TempDir()
	w := create(t, dir, "s")
	var reported []error
	w.OnError(func(err error) {
		reported = append(reported, err)
		// The hook may publish (the console shows the failure); it must
		// not deadlock, and the failed writer drops it.
		w.Publish(agent.Error{Lane: "main", Kind: "journal", Message: err.Error()})
	})
	// Swap the file for a read-only descriptor: every write now fails.
	ro, err := os.Open(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	good := w.f
	w.f = ro
	w.Publish(agent.UserMessage{Lane: "main", Text: "lost"})
	w.Publish(agent.ToolStarted{Lane: "main", ID: "c", Tool: "bash"})
	if w.Err() == nil || len(reported) != 1 {
		t.Fatalf("Err %v, reported %v", w.Err(), reported)
	}
	w.f = good
	ro.Close()
	w.Publish(agent.UserMessage{Lane: "main", Text: "after"}) // dropped: the writer is failed
	if err := w.Close(); err == nil {
		t.Error("Close did not report the write failure")
	}
	r, _ := Read(w.Path())
	if len(r.Events) != 0 {
		t.Errorf("events after a failure: %v", r.Events)
	}
}

func TestPlantedSecretNeverReachesTheJournal(t *testing.T) {
	const key = "sk-ant-api03-PLANTED-journal-secret-0123456789"
	t.Setenv("ANTHROPIC_API_KEY", key)
	t.Setenv("WEIRD_TOKEN", `tok"with\quote-and-more`)
	dir := t.TempDir()
	w := create(t, dir, "s")
	w.Publish(agent.UserMessage{Lane: "main", Text: "my key is " + key})
	// Split across many deltas and past the flush threshold.
	w.Publish(agent.TextDelta{Lane: "main", Text: strings.Repeat("x", flushAt-10)})
	for _, c := range key {
		w.Publish(agent.TextDelta{Lane: "main", Text: string(c)})
	}
	w.Publish(agent.ToolResult{Lane: "main", ID: "c", OK: true, Payload: json.RawMessage(`{"stdout":"ANTHROPIC_API_KEY=` + key + `\n","t":"tok\"with\\quote-and-more"}`)})
	w.Publish(agent.Error{Lane: "main", Kind: "provider", Message: "401 for key " + key})
	w.Close()
	b, _ := os.ReadFile(w.Path())
	if bytes.Contains(b, []byte(key)) || bytes.Contains(b, []byte("PLANTED")) {
		t.Fatalf("planted key found in the journal:\n%s", b)
	}
	if bytes.Contains(b, []byte(`with\\quote`)) {
		t.Fatalf("escaped secret found in the journal")
	}
	if !bytes.Contains(b, []byte(redacted)) {
		t.Fatal("nothing was redacted")
	}
	if _, err := Read(w.Path()); err != nil {
		t.Fatal(err)
	}
}

func TestSecretsFromEnvPicksCredentialNames(t *testing.T) {
	got := SecretsFromEnv([]string{"ANTHROPIC_API_KEY=sk-123456789", "GITHUB_TOKEN=ghp_abcdefgh", "HOME=/root/somewhere",
		"MY_PASSWORD=short", "OPENAI_API_KEY=", "noequals", "db_secret=supersecretvalue"})
	want := []string{"sk-123456789", "ghp_abcdefgh", "supersecretvalue"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %q want %q", got, want)
	}
}

func TestConcurrentLanesKeepTheirOwnOrder(t *testing.T) {
	w := create(t, t.TempDir(), "lanes")
	lanes := []string{"main", "scout-1", "scout-2", "write-3"}
	var wg sync.WaitGroup
	for _, lane := range lanes {
		wg.Go(func() {
			for i := 0; i < 200; i++ {
				w.Publish(agent.TextDelta{Lane: lane, Text: fmt.Sprintf("%d,", i)})
				if i%50 == 49 {
					w.Publish(agent.UsageReport{Lane: lane})
				}
			}
			w.Publish(agent.TurnDone{Lane: lane, Stop: "end_turn"})
		})
	}
	wg.Wait()
	w.Close()
	r, err := Read(w.Path())
	if err != nil || len(r.Problems) != 0 {
		t.Fatalf("%v %v", err, r.Problems)
	}
	text := map[string]string{}
	done := map[string]bool{}
	for _, e := range r.Events {
		switch v := e.(type) {
		case agent.TextDelta:
			if done[v.Lane] {
				t.Fatalf("text of %s after its turn ended", v.Lane)
			}
			text[v.Lane] += v.Text
		case agent.TurnDone:
			done[v.Lane] = true
		}
	}
	var want strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&want, "%d,", i)
	}
	for _, lane := range lanes {
		if text[lane] != want.String() || !done[lane] {
			t.Errorf("lane %s: done %v, text %q", lane, done[lane], text[lane])
		}
	}
}
