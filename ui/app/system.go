package app

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"staage/ui/panes"
	"staage/ui/sanitize"
)

// systemView shows the system prompt the model is given (the default prompt
// plus the workspace's AGENTS.md / CLAUDE.md), so the operator can read what
// steers the agent. alt+s opens and closes it; j/k and pgup/pgdn scroll.
type systemView struct {
	text   string
	open   bool
	offset int
}

// key handles a key while the view is open; ok is false when the key is not
// the view's.
func (v *systemView) key(s string, page int) bool {
	switch s {
	case "alt+s", "esc", "q":
		v.open = false
	case "j", "down":
		v.offset++
	case "k", "up":
		v.offset--
	case "pgdown", "space":
		v.offset += page
	case "pgup":
		v.offset -= page
	case "g", "home":
		v.offset = 0
	default:
		return false
	}
	v.offset = max(v.offset, 0)
	return true
}

// box renders the view for a w×h screen.
func (m *Model) systemBox() string {
	th := m.theme
	w := min(m.w-2, 100)
	h := max(m.h-2, 5)
	inner := max(w-4, 10)
	text := m.system.text
	if strings.TrimSpace(text) == "" {
		text = "(no system prompt)"
	}
	var lines []string
	for _, l := range strings.Split(sanitize.Text(text), "\n") {
		lines = append(lines, strings.Split(ansi.Wrap(l, inner, ""), "\n")...)
	}
	body := h - 3
	top := min(m.system.offset, max(len(lines)-body, 0))
	m.system.offset = top
	end := min(top+body, len(lines))
	var out []string
	for _, l := range lines[top:end] {
		out = append(out, th.Text.Render(l))
	}
	out = append(out, th.Muted.Render(fmt.Sprintf("lines %d–%d of %d · j/k pgup/pgdn scroll · alt+s or esc closes", top+1, end, len(lines))))
	return panes.Frame(th, "SYSTEM PROMPT", true, out, w, min(h, len(out)+2))
}
