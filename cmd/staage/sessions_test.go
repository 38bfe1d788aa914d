package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"staage/agent"
	"staage/agent/journal"
)

func seedSessions(t *testing.T) (dir string, ids []string) {
	t.Helper()
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	dir = filepath.Join(state, "staage", "sessions")
	for _, s := range []struct{ ws, prompt string }{
		{"/w/a", "fix the \x1b]0;pwned\x07bug\x1b[2J now"},
		{"/w/b", "write docs"},
	} {
		w, err := journal.Create(dir, hdrFor(s.ws))
		if err != nil {
			t.Fatal(err)
		}
		w.Publish(agent.UserMessage{Lane: "main", Text: s.prompt})
		w.Publish(agent.AssistantMessage{Lane: "main", Message: agent.Message{Role: agent.RoleAssistant, Text: "On it."}, Stop: "end_turn"})
		w.Close()
		ids = append(ids, w.ID())
	}
	return dir, ids
}

func sessions(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := runSessions(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), err
}

func TestSessionsList(t *testing.T) {
	_, ids := seedSessions(t)
	out, _, err := sessions(t)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ID", "FIRST PROMPT", ids[0], ids[1], "/w/a", "write docs", "script"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("control characters reached the terminal: %q", out)
	}
	out2, _, err := sessions(t, "list")
	if err != nil || out2 != out {
		t.Errorf("`list` differs from the default: %v", err)
	}

	out, _, err = sessions(t, "--json", "--workspace", "/w/b")
	if err != nil {
		t.Fatal(err)
	}
	var rows []journal.Summary
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(rows) != 1 || rows[0].ID != ids[1] || rows[0].FirstPrompt != "write docs" || rows[0].Size == 0 {
		t.Fatalf("rows %+v", rows)
	}
}

func TestSessionsListEmpty(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	out, _, err := sessions(t)
	if err != nil || !strings.Contains(out, "no sessions in") {
		t.Fatalf("%q %v", out, err)
	}
	out, _, err = sessions(t, "--json")
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Fatalf("%q %v", out, err)
	}
}

func TestSessionsExport(t *testing.T) {
	_, ids := seedSessions(t)
	out, _, err := sessions(t, "export", ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "# staage session "+ids[0]) || !strings.Contains(out, "## You\n\nfix the bug now") || !strings.Contains(out, "On it.") {
		t.Fatalf("export:\n%s", out)
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Fatal("export carries control characters")
	}
	file := filepath.Join(t.TempDir(), "s.md")
	if _, _, err := sessions(t, "export", "-o", file, ids[1][:len(ids[1])-2]); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), "write docs") {
		t.Fatalf("export -o wrote %q", b)
	}
}

func TestSessionsBadInput(t *testing.T) {
	seedSessions(t)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"export"}, 2, "needs a session id"},
		{[]string{"export", "nope"}, 2, "no session found"},
		{[]string{"export", "../x"}, 2, "is not a session id"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"list", "extra"}, 2, "unexpected argument"},
		{[]string{"--bogus"}, 2, ""},
	} {
		_, _, err := sessions(t, c.args...)
		if exitCode(err) != c.code || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("sessions %v: %v (code %d)", c.args, err, exitCode(err))
		}
	}
}

// TestSessionsThroughTheBinary drives the browser as an operator does: a
// headless session, then `staage sessions` and `staage sessions export`.
func TestSessionsThroughTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	dir, ws, env := t.TempDir(), t.TempDir(), testEnv(t)
	script := filepath.Join(dir, "s.json")
	os.WriteFile(script, []byte(`{"responses":[{"text":"Writing.","tool_calls":[{"id":"w1","name":"file_write","input":{"path":"a.txt","content":"hi\n"}}]},{"text":"Done."}]}`), 0o644)
	if _, stderr, code := runStaage(t, env, "exec", "--script", script, "--sandbox", "off", "--auto", "all", "--workspace", ws, "write \x1b[31ma\x1b[0m file"); code != 0 {
		t.Fatalf("exec: %d %s", code, stderr)
	}
	out, _, code := runStaage(t, env, "sessions", "--json")
	var rows []journal.Summary
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 {
		t.Fatalf("sessions --json: %d %q", code, out)
	}
	if real, _ := filepath.EvalSymlinks(ws); rows[0].Workspace != real && rows[0].Workspace != ws {
		t.Errorf("workspace %q, want %q", rows[0].Workspace, ws)
	}
	out, _, code = runStaage(t, env, "sessions")
	if code != 0 || !strings.Contains(out, rows[0].ID) || strings.Contains(out, "\x1b") {
		t.Fatalf("sessions: %d %q", code, out)
	}
	out, _, code = runStaage(t, env, "sessions", "export", rows[0].ID)
	for _, want := range []string{"# staage session " + rows[0].ID, "## You\n\nwrite a file", "**Tool** `file_write`", "→ ok", "Done."} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("export lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Error("export carries an escape sequence")
	}
}
