package picker

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"

	"staage/agent/journal"
)

var update = flag.Bool("update", false, "rewrite golden files")

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func rows() []journal.Summary {
	return []journal.Summary{
		{ID: "20261130T113000-aaaaaa", Workspace: "/home/op/proj", Started: now.Add(-time.Hour), Size: 42 << 10, Provider: "anthropic/claude-sonnet-4-5", LastActivity: now.Add(-5 * time.Minute), FirstPrompt: "fix the flaky test in server_test.go"},
		{ID: "20261130T090000-bbbbbb", Workspace: "/home/op/other", Provider: "openai/gpt-5", LastActivity: now.Add(-3 * time.Hour), FirstPrompt: "add a README \x1b]0;pwned\x07with\x1b[31m colour"},
		{ID: "broken", Workspace: "", LastActivity: now.Add(-4 * time.Hour), Problem: "no readable header (truncated?)"},
		{ID: "20261125T080000-cccccc", Workspace: "/srv/repo", Provider: "script", LastActivity: now.Add(-5 * 24 * time.Hour), FirstPrompt: "refactor the parser\nsecond line"},
	}
}

func newModel(t *testing.T, rs []journal.Summary) Model {
	t.Helper()
	m := New(rs, Options{Now: func() time.Time { return now }, Home: "/home/op", Location: time.UTC})
	return send(m, tea.WindowSizeMsg{Width: 90, Height: 12})
}

func send(m Model, msgs ...tea.Msg) Model {
	for _, msg := range msgs {
		nm, _ := m.Update(msg)
		m = nm.(Model)
	}
	return m
}

func typeText(m Model, s string) Model {
	for _, r := range s {
		m = send(m, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return m
}

func screen(m Model) string { return ansi.Strip(m.View().Content) }

func golden(t *testing.T, got string) {
	t.Helper()
	path := filepath.Join("testdata", t.Name()+".golden")
	if *update {
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Errorf("screen differs from %s:\n%s", path, got)
	}
}

func TestListGolden(t *testing.T) {
	m := newModel(t, rows())
	s := screen(m)
	for _, bad := range []string{"\x1b", "\x07", "pwned"} {
		if strings.Contains(m.View().Content, "pwned") || strings.Contains(s, bad) {
			t.Errorf("untrusted control text reached the screen: %q", bad)
		}
	}
	golden(t, s)
}

func TestFilterNarrowsAndKeepsSelection(t *testing.T) {
	m := newModel(t, rows())
	m = send(m, tea.KeyPressMsg{Code: tea.KeyDown}) // on bbbbbb
	m = typeText(m, "op ")
	if m.Shown() != 2 {
		t.Fatalf("filter 'op' shows %d rows", m.Shown())
	}
	// The cursor stayed on the same session.
	m2, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if id, ok := m2.(Model).Chosen(); !ok || id != "20261130T090000-bbbbbb" {
		t.Fatalf("chosen %q %v", id, ok)
	}
	if msg := cmd(); msg != (Chosen{ID: "20261130T090000-bbbbbb"}) {
		t.Fatalf("cmd sent %#v", msg)
	}
	// Every word must match, in any field.
	m = newModel(t, rows())
	m = typeText(m, "PARSER script")
	if m.Shown() != 1 {
		t.Fatalf("two-word filter shows %d", m.Shown())
	}
	m = typeText(m, " nomatch")
	if m.Shown() != 0 || !strings.Contains(screen(m), "no session matches") {
		t.Fatalf("no-match screen:\n%s", screen(m))
	}
	m = send(m, tea.KeyPressMsg{Code: tea.KeyEnter})
	if _, ok := m.Chosen(); ok || m.Finished() {
		t.Fatal("enter with no rows chose something")
	}
}

func TestBrokenSessionCannotBeOpened(t *testing.T) {
	m := newModel(t, rows())
	m = send(m, tea.KeyPressMsg{Code: tea.KeyDown}, tea.KeyPressMsg{Code: tea.KeyDown}, tea.KeyPressMsg{Code: tea.KeyEnter})
	if _, ok := m.Chosen(); ok || m.Finished() {
		t.Fatal("a session without a header was chosen")
	}
	if !strings.Contains(screen(m), "cannot be resumed: no readable header") {
		t.Fatalf("no note:\n%s", screen(m))
	}
}

func TestCancel(t *testing.T) {
	m := newModel(t, rows())
	nm, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	if !nm.(Model).Finished() || cmd() != (Cancelled{}) {
		t.Fatal("esc did not cancel")
	}
	if _, ok := nm.(Model).Chosen(); ok {
		t.Fatal("cancel chose")
	}
}

func TestScrollKeepsCursorVisible(t *testing.T) {
	var many []journal.Summary
	for i := 0; i < 100; i++ {
		many = append(many, journal.Summary{ID: "s" + string(rune('A'+i%26)) + strings.Repeat("x", i/26), Provider: "script", LastActivity: now, FirstPrompt: "prompt"})
	}
	m := newModel(t, many) // 12 rows high: 7 list rows
	for i := 0; i < 30; i++ {
		m = send(m, tea.KeyPressMsg{Code: tea.KeyDown})
	}
	cur := many[30].ID
	if !strings.Contains(screen(m), cur) {
		t.Fatalf("cursor row %s not on screen:\n%s", cur, screen(m))
	}
	m = send(m, tea.KeyPressMsg{Code: tea.KeyPgDown}, tea.KeyPressMsg{Code: tea.KeyPgDown})
	m = send(m, tea.KeyPressMsg{Code: tea.KeyPgUp})
	if got := strings.Count(screen(m), "\n"); got != 11 {
		t.Fatalf("screen has %d lines, want the window height", got+1)
	}
	for i := 0; i < 200; i++ {
		m = send(m, tea.KeyPressMsg{Code: tea.KeyDown})
	}
	if !strings.Contains(screen(m), many[99].ID) {
		t.Fatal("last row not reachable")
	}
	// A narrow window clips rows instead of wrapping them.
	m = send(m, tea.WindowSizeMsg{Width: 30, Height: 8})
	for _, l := range strings.Split(screen(m), "\n") {
		if ansi.StringWidth(l) > 30 {
			t.Fatalf("line wider than the window: %q", l)
		}
	}
}

// TestRunInVirtualTerminal drives Run end to end: raw keys through a
// virtual terminal, the real renderer, the chosen ID back.
func TestRunInVirtualTerminal(t *testing.T) {
	emu := vt.NewSafeEmulator(90, 14)
	type result struct {
		id  string
		err error
	}
	done := make(chan result, 1)
	go func() {
		id, err := Run(context.Background(), rows(), Options{Now: func() time.Time { return now }, Home: "/home/op", Location: time.UTC},
			tea.WithInput(emu), tea.WithOutput(onlcr{emu}), tea.WithWindowSize(90, 14), tea.WithoutSignals())
		done <- result{id, err}
	}()
	waitFor(t, emu, "fix the flaky test")
	emu.SendText("refactor")
	waitFor(t, emu, "1 of 4")
	emu.SendText("\r")
	select {
	case r := <-done:
		if r.err != nil || r.id != "20261125T080000-cccccc" {
			t.Fatalf("Run = %q, %v", r.id, r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
}

func TestRunEmpty(t *testing.T) {
	if _, err := Run(context.Background(), nil, Options{}); err == nil {
		t.Fatal("Run with no rows succeeded")
	}
}

// onlcr does what a terminal's line discipline does to output (ONLCR):
// "\n" becomes "\r\n". The renderer relies on it; the emulator has none.
type onlcr struct{ emu *vt.SafeEmulator }

func (o onlcr) Write(p []byte) (int, error) {
	if _, err := o.emu.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}

func waitFor(t *testing.T, emu *vt.SafeEmulator, text string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(ansi.Strip(emu.Render()), text) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%q never appeared:\n%s", text, ansi.Strip(emu.Render()))
}

func TestHereFirst(t *testing.T) {
	got := HereFirst(rows(), "/srv/repo/")
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	want := "20261125T080000-cccccc,20261130T113000-aaaaaa,20261130T090000-bbbbbb,broken"
	if strings.Join(ids, ",") != want {
		t.Fatalf("order %v", ids)
	}
}

// TestPickSessionFromJournals lists real journals and picks the first row,
// which is the newest session of the given workspace.
func TestPickSessionFromJournals(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	dir, _ := journal.SessionsDir()
	var ids []string
	for _, ws := range []string{"/w/here", "/w/elsewhere"} {
		w, err := journal.Create(dir, journal.Header{Workspace: ws, Provider: "script"})
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		ids = append(ids, w.ID())
		time.Sleep(10 * time.Millisecond) // distinct mtimes: elsewhere is newer
	}
	emu := vt.NewSafeEmulator(80, 10)
	done := make(chan string, 1)
	go func() {
		id, err := PickSession(context.Background(), "/w/here", Options{},
			tea.WithInput(emu), tea.WithOutput(onlcr{emu}), tea.WithWindowSize(80, 10), tea.WithoutSignals())
		if err != nil {
			id = "error: " + err.Error()
		}
		done <- id
	}()
	waitFor(t, emu, "2 of 2")
	emu.SendText("\r")
	select {
	case id := <-done:
		if id != ids[0] {
			t.Fatalf("picked %q, want the workspace's session %s", id, ids[0])
		}
	case <-time.After(5 * time.Second):
		t.Fatal("PickSession did not return")
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	if _, err := PickSession(context.Background(), "/w", Options{}); err == nil || !strings.Contains(err.Error(), "no sessions") {
		t.Fatalf("empty: %v", err)
	}
}
