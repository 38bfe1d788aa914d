package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"staage/agent"
	"staage/agent/journal"
	"staage/tools"
)

func hdrFor(ws string) journal.Header {
	return journal.Header{Version: journal.Version, Workspace: ws, Provider: "script", Sandbox: "off",
		Tools: map[string]string{"file_write": "sha256:" + strings.Repeat("1", 64)}}
}

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return -1
}

func TestOpenJournalNewContinueResume(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	ctx := context.Background()
	ws, other := "/w/proj", "/w/other"

	// A new session.
	w, r, err := openJournal(ctx, bootOptions{Workspace: ws}, hdrFor(ws))
	if err != nil || r != nil {
		t.Fatalf("new: %v %v", r, err)
	}
	id := w.ID()
	w.Publish(agent.UserMessage{Lane: "main", Text: "first"})
	w.Publish(agent.ToolStarted{Lane: "main", ID: "c1", Tool: "file_write"})
	w.Close()
	if filepath.Dir(w.Path()) != filepath.Join(state, "staage", "sessions") {
		t.Fatalf("journal at %s", w.Path())
	}

	// --continue picks it up, reports the interrupted call, and records
	// the resume.
	w, r, err = openJournal(ctx, bootOptions{Continue: true}, hdrFor(ws))
	if err != nil {
		t.Fatal(err)
	}
	if w.ID() != id || len(r.Events) != 3 {
		t.Fatalf("continue: id %s, %d events", w.ID(), len(r.Events))
	}
	if !strings.Contains(strings.Join(r.Problems, "\n"), "call c1 (file_write) on lane main was interrupted") {
		t.Fatalf("problems %q", r.Problems)
	}
	// While it is open, a second open is refused with exit code 1.
	_, _, err = openJournal(ctx, bootOptions{Resume: id}, hdrFor(ws))
	if exitCode(err) != 1 || !strings.Contains(err.Error(), "open in another staage process") {
		t.Fatalf("second open: %v", err)
	}
	w.Close()

	// --resume with a unique prefix.
	w, r, err = openJournal(ctx, bootOptions{Resume: id[:12]}, hdrFor(ws))
	if err != nil || r.Resumes != 1 {
		t.Fatalf("resume by prefix: %v (resumes %v)", err, r)
	}
	w.Close()

	for _, c := range []struct {
		name string
		opts bootOptions
		ws   string
		code int
		msg  string
	}{
		{"both flags", bootOptions{Continue: true, Resume: id}, ws, 2, "not both"},
		{"no session here", bootOptions{Continue: true}, other, 2, "no session found for workspace /w/other"},
		{"unknown id", bootOptions{Resume: "nope"}, ws, 2, `no session found with id "nope"`},
		{"path as id", bootOptions{Resume: "../../etc/passwd"}, ws, 2, "is not a session id"},
		{"other workspace", bootOptions{Resume: id}, other, 2, "belongs to workspace /w/proj"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := openJournal(ctx, c.opts, hdrFor(c.ws))
			if err == nil || exitCode(err) != c.code || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err %v (code %d), want code %d and %q", err, exitCode(err), c.code, c.msg)
			}
		})
	}
	// The refused opens released the lock.
	w, _, err = openJournal(ctx, bootOptions{Continue: true}, hdrFor(ws))
	if err != nil {
		t.Fatalf("after refusals: %v", err)
	}
	w.Close()
}

func TestOpenJournalSweepsTempJournals(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	dir := filepath.Join(state, "staage", "sessions")
	os.MkdirAll(dir, 0o700)
	tmp := filepath.Join(dir, journal.TempPrefix+"20261130T000000-abcdef-123")
	os.WriteFile(tmp, []byte(`{"type":"header"`), 0o600)
	old := time.Now().Add(-time.Minute)
	os.Chtimes(tmp, old, old)
	w, _, err := openJournal(context.Background(), bootOptions{}, hdrFor("/w"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatal("temp journal of an interrupted start was not swept")
	}
}

// TestSecondStaageOnOneSessionIsRefused runs two real staage processes on
// one session: while the first holds it (a slow bash call), the second is
// refused with a clear message; once the first is gone, it resumes.
func TestSecondStaageOnOneSessionIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	bin := staageBinary(t)
	dir, ws, env := t.TempDir(), t.TempDir(), testEnv(t)
	slow := filepath.Join(dir, "slow.json")
	os.WriteFile(slow, []byte(`{"responses":[{"text":"Waiting.","tool_calls":[{"id":"s1","name":"bash","input":{"command":"sleep 30"}}]},{"text":"Done."}]}`), 0o644)
	done := filepath.Join(dir, "done.json")
	os.WriteFile(done, []byte(`{"responses":[{"text":"Resumed."}]}`), 0o644)
	args := func(script string, extra ...string) []string {
		return append([]string{"exec", "--script", script, "--json", "--sandbox", "off", "--auto", "all", "--workspace", ws}, extra...)
	}
	first := exec.Command(bin, args(slow, "hold it")...)
	first.Env = env
	out := &syncBuffer{}
	first.Stdout = out
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for !bytes.Contains(out.bytes(), []byte(`"type":"tool_started"`)) {
		if time.Now().After(deadline) {
			t.Fatal("first staage never started its tool")
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, stderr, code := runStaage(t, env, args(done, "--continue", "me too")...)
	if code != 1 || !strings.Contains(stderr, "open in another staage process") {
		t.Fatalf("second staage: exit %d, %q", code, stderr)
	}
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()
	stdout, stderr, code := runStaage(t, env, args(done, "--continue", "me now")...)
	if code != 0 || !strings.Contains(stdout, `"text":"me now"`) {
		t.Fatalf("resume after the holder died: exit %d\n%s\n%s", code, stdout, stderr)
	}
	list, err := journal.List(filepath.Join(envValue(env, "XDG_STATE_HOME"), "staage", "sessions"))
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions %v %v", list, err)
	}
	r, err := journal.Read(list[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	var settled *agent.ToolResult
	for _, e := range r.Events {
		if res, ok := e.(agent.ToolResult); ok && res.ID == "s1" {
			settled = &res
		}
	}
	if settled == nil || settled.Refusal != tools.ToolInterrupted {
		t.Fatalf("the killed bash call was not answered as interrupted: %+v", settled)
	}
}

func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// syncBuffer is a bytes.Buffer a subprocess writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}
