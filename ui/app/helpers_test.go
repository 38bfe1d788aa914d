package app

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"staage/agent"
	"staage/approvals"
	"staage/themes"
	"staage/tools"
	"staage/ui"
	"staage/ui/modal"
	"staage/ui/status"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/<name>.golden.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
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
		t.Errorf("%s differs from golden:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fakeRunner records prompts and blocks until released or cancelled.
type fakeRunner struct {
	mu      sync.Mutex
	prompts []string
	release chan struct{}
}

func (f *fakeRunner) Run(ctx context.Context, lane, prompt string) (agent.TurnDone, error) {
	f.mu.Lock()
	f.prompts = append(f.prompts, prompt)
	f.mu.Unlock()
	if f.release != nil {
		select {
		case <-f.release:
		case <-ctx.Done():
			return agent.TurnDone{Lane: lane, Stop: "interrupted"}, nil
		}
	}
	return agent.TurnDone{Lane: lane, Stop: "end_turn"}, nil
}

func newTestModel(t *testing.T, w, h int) (*Model, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	m := New(Config{
		Runner: &fakeRunner{},
		Info:   status.Info{Model: "scripted", Sandbox: "product", Workspace: "~/proj", Demo: true},
		Env:    themes.Env{Override: themes.Dark},
		Now:    c.Now,
	})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m, c
}

// screen is the plain text of the frame.
func screen(m *Model) string {
	lines := strings.Split(ansi.Strip(m.View().Content), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.Join(lines, "\n")
}

func send(m *Model, msgs ...tea.Msg) {
	for _, msg := range msgs {
		_, cmd := m.Update(msg)
		drain(m, cmd, 0)
	}
}

// drain runs commands that finish at once (not ticks or turns).
func drain(m *Model, cmd tea.Cmd, depth int) {
	if cmd == nil || depth > 3 {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	select {
	case msg := <-done:
		switch msg := msg.(type) {
		case tea.BatchMsg:
			for _, c := range msg {
				drain(m, c, depth+1)
			}
		case nil:
		default:
			if isInternal(msg) {
				return
			}
			_, next := m.Update(msg)
			drain(m, next, depth+1)
		}
	case <-time.After(50 * time.Millisecond):
	}
}

func isInternal(msg tea.Msg) bool {
	n := strings.ToLower(fmt.Sprintf("%T", msg))
	return strings.Contains(n, "raw") || strings.Contains(n, "background") || strings.Contains(n, "sequence")
}

func key(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(s)
	return tea.KeyPressMsg{Code: r[0], Text: s}
}

func ev(e agent.Event) ui.EventMsg { return ui.EventMsg{Event: e} }

func raw(v any) json.RawMessage { b, _ := json.Marshal(v); return b }

// editDescriptor is a reversible file tool's descriptor.
func descriptor(name string, effect tools.EffectClass) tools.Descriptor {
	return tools.Descriptor{Name: name, Origin: "builtin", RawName: name, Policy: tools.Required, Effect: effect,
		Digest: tools.Digest{0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89}, Description: "a tool"}
}

func openReq(m *Model, key uint64, req approvals.Request) chan approvals.Decision {
	ch := make(chan approvals.Decision, 1)
	send(m, modal.OpenMsg{Request: modal.Request{Key: key, Req: req, Answer: ch}})
	return ch
}
