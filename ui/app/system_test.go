package app

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"staage/themes"
	"staage/ui/status"
)

func TestSystemPromptViewShowsScrollsAndIsInert(t *testing.T) {
	var b strings.Builder
	b.WriteString("You are a coding agent.\n# AGENTS.md\nRun \x1b]52;c;ZXZpbA==\x07the tests\u202e before you finish.\n")
	for i := 1; i <= 80; i++ {
		fmt.Fprintf(&b, "rule %d\n", i)
	}
	m := New(Config{Runner: &fakeRunner{}, Info: status.Info{Model: "m"}, Env: themes.Env{Override: themes.Dark}, SystemPrompt: b.String()})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	if strings.Contains(screen(m), "SYSTEM PROMPT") {
		t.Fatal("the view is open before alt+s")
	}
	send(m, tea.KeyPressMsg{Code: 's', Mod: tea.ModAlt})
	got := screen(m)
	if !strings.Contains(got, "SYSTEM PROMPT") || !strings.Contains(got, "You are a coding agent.") || !strings.Contains(got, "the tests") {
		t.Fatalf("alt+s did not show the prompt:\n%s", got)
	}
	raw := m.View().Content
	if strings.Contains(raw, "]52;") || strings.Contains(raw, "\u202e") || strings.Contains(ansi.Strip(raw), "\x07") {
		t.Fatal("control sequences from AGENTS.md reached the screen")
	}
	if strings.Contains(got, "rule 80") {
		t.Fatal("the whole prompt fit: the test needs a longer one")
	}
	send(m, key("pgdown"), key("pgdown"), key("pgdown"), key("pgdown"))
	if got = screen(m); !strings.Contains(got, "rule 80") || strings.Contains(got, "You are a coding agent.") {
		t.Fatalf("pgdown did not scroll to the end:\n%s", got)
	}
	send(m, key("esc"))
	if strings.Contains(screen(m), "SYSTEM PROMPT") {
		t.Fatal("esc did not close the view")
	}
	// Typing goes to the input again.
	send(m, key("a"))
	if m.input.Value() != "a" {
		t.Fatalf("input %q", m.input.Value())
	}
}
