package app

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"staage/ui/panes"
	"staage/ui/status"
	"staage/ui/transcript"
)

// geom is the layout of one frame.
type geom struct {
	top          int // first row of the middle area
	midH         int // rows of the middle area
	mainW, sideW int
	planH        int
	inputTop     int
	inputH       int
}

func (m *Model) planShown() bool { return m.showPlan && m.sideWidth() > 0 }
func (m *Model) deskShown() bool { return m.showDesk && m.sideWidth() > 0 }

// sideWidth is the width of the plan/desk column; narrow terminals give
// the transcript everything below 60 columns.
func (m *Model) sideWidth() int {
	switch {
	case !m.showPlan && !m.showDesk:
		return 0
	case m.w >= 140:
		return 44
	case m.w >= 100:
		return 36
	case m.w >= 60:
		return 28
	}
	return 0
}

func (m *Model) geometry() geom {
	var g geom
	g.top = 1
	g.inputH = m.input.Height()
	// status(1) + rule(1) + input + lanes bar(1)
	g.midH = max(m.h-3-g.inputH, 3)
	g.inputTop = g.top + g.midH + 1
	g.sideW = m.sideWidth()
	g.mainW = m.w - g.sideW
	switch {
	case m.showPlan && m.showDesk && g.sideW > 0:
		steps := len(m.plans[m.lane].Steps())
		g.planH = min(max(steps+2, 4), g.midH/2)
	case m.showPlan && g.sideW > 0:
		g.planH = g.midH
	}
	return g
}

func (m *Model) layout() {
	if m.input == nil {
		return
	}
	g := m.geometry()
	for _, t := range m.transcripts {
		t.SetSize(g.mainW, g.midH)
	}
	m.input.SetWidth(m.w)
	if m.modal != nil {
		m.modal.SetSize(m.w, m.h)
	}
}

func (m *Model) cur() *transcript.Transcript { return m.transcripts[m.lane] }

func (m *Model) pageSize() int { return max(m.geometry().midH-2, 1) }

// View renders the frame.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "staage"
	if m.modal.Active() {
		v.WindowTitle = "staage · approval needed"
	}
	return v
}

// render builds the frame's text (exactly h lines of w cells).
func (m *Model) render() string {
	g := m.geometry()
	info := m.info
	info.Note = m.flash
	if f := m.modal.Flash(); f != "" && m.modal.Visible() {
		info.Note = ""
	}
	lines := make([]string, 0, m.h)
	lines = append(lines, status.Bar(m.theme, info, m.w))

	main := strings.Split(m.cur().View(), "\n")
	if m.focus == FocusTranscript {
		main[0] = m.theme.Accent.Render("▎") + ansi.TruncateLeft(main[0], 1, "")
	}
	var side []string
	if g.sideW > 0 {
		if m.showPlan {
			side = append(side, strings.Split(m.plans[m.lane].View(g.sideW, g.planH, m.focus == FocusPlan), "\n")...)
		}
		if m.showDesk {
			side = append(side, strings.Split(m.desks[m.lane].View(g.sideW, g.midH-g.planH, m.focus == FocusDesk), "\n")...)
		}
	}
	for i := 0; i < g.midH; i++ {
		l := ""
		if i < len(main) {
			l = main[i]
		}
		if g.sideW > 0 {
			l = pad(l, g.mainW)
			if i < len(side) {
				l += side[i]
			}
		}
		lines = append(lines, l)
	}
	lines = append(lines, m.theme.Subtle.Render(strings.Repeat("─", m.w)))
	lines = append(lines, strings.Split(m.input.View(), "\n")...)
	hints := "? help · esc interrupt · ctrl+c quit"
	if m.modal.Hidden() {
		hints = "approval pending · v to return"
	}
	lines = append(lines, status.Lanes(m.theme, m.laneStates(), m.lane, hints, m.w))
	for len(lines) < m.h {
		lines = append(lines, "")
	}
	lines = lines[:m.h]

	if m.help {
		lines = m.overlay(lines, m.helpBox(), false)
	}
	if m.system.open {
		lines = m.overlay(lines, m.systemBox(), false)
	}
	if m.modal.Visible() {
		lines = m.overlay(lines, m.modal.View(), true)
	}
	return strings.Join(lines, "\n")
}

func (m *Model) laneStates() []status.Lane {
	out := make([]status.Lane, len(m.lanes))
	copy(out, m.lanes)
	for i := range out {
		if out[i].Name == m.lane && m.running && out[i].State == "" {
			out[i].State = "running"
		}
	}
	return out
}

// overlay centres box over the frame; with dim set the frame behind it is
// drawn faint and without its colours. Only the rows the box covers are
// spliced, which is far cheaper than a compositor, and the dimmed
// background is reused while it does not change (it rarely does while the
// operator reads a dialog).
func (m *Model) overlay(bg []string, box string, dim bool) []string {
	if dim {
		bg = m.dimmed(bg)
	}
	fl := strings.Split(box, "\n")
	bw := ansi.StringWidth(fl[0])
	x := max((m.w-bw)/2, 0)
	y := max((m.h-len(fl))/2, 0)
	out := make([]string, len(bg))
	copy(out, bg)
	for i, l := range fl {
		row := y + i
		if row >= len(out) {
			break
		}
		b := out[row]
		left := ansi.Truncate(b, x, "")
		if lw := ansi.StringWidth(left); lw < x {
			// A wide character straddled the edge: blank its half.
			left += strings.Repeat(" ", x-lw)
		}
		out[row] = left + "\x1b[m" + l + "\x1b[m" + after(b, x+bw, m.w-x-bw)
	}
	return out
}

// dimmed returns the frame without colours in the dim style, cached by
// content.
func (m *Model) dimmed(bg []string) []string {
	src := strings.Join(bg, "\n")
	if m.dimSrc == src && m.dimOut != nil {
		return m.dimOut
	}
	on, off := sgrOf(m.theme.Dim)
	out := make([]string, len(bg))
	for i, l := range bg {
		out[i] = on + ansi.Strip(l) + off
	}
	m.dimSrc, m.dimOut = src, out
	return out
}

// sgrOf returns the escape sequences a style opens and closes text with.
func sgrOf(st lipgloss.Style) (on, off string) {
	r := st.Render("x")
	i := strings.IndexByte(r, 'x')
	if i < 0 {
		return "", ""
	}
	return r[:i], r[i+1:]
}

// after returns what b shows from cell n on, exactly want cells wide: a
// wide character cut by the edge is replaced by spaces, never kept whole
// (which would push the line past the screen's edge).
func after(b string, n, want int) string {
	if want <= 0 {
		return ""
	}
	for k := 0; k < 4; k++ {
		r := ansi.TruncateLeft(b, n+k, "")
		if ansi.StringWidth(r) <= want-k {
			return strings.Repeat(" ", k) + r
		}
	}
	return strings.Repeat(" ", want)
}

// pad makes s exactly w cells wide (a wide character cut at the edge
// leaves a space).
func pad(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw > w {
		s = ansi.Truncate(s, w, "")
		sw = ansi.StringWidth(s)
	}
	return s + strings.Repeat(" ", max(w-sw, 0))
}

// helpBox lists the key bindings.
func (m *Model) helpBox() string {
	th := m.theme
	sec := func(title string, rows [][2]string) []string {
		out := []string{th.Accent.Render(title)}
		for _, r := range rows {
			out = append(out, "  "+th.Key.Render(pad(r[0], 14))+" "+th.Text.Render(r[1]))
		}
		return out
	}
	var ls []string
	ls = append(ls, sec("console", [][2]string{
		{"enter", "send the prompt"},
		{"shift+enter ^j", "new line"},
		{"up/down", "prompt history (first/last line)"},
		{"esc", "interrupt the running turn"},
		{"ctrl+c ×2", "quit"},
		{"tab/shift+tab", "focus transcript, plan, desk, input"},
		{"pgup/pgdn", "scroll the transcript"},
		{"ctrl+o", "expand the selected (or last) tool card"},
		{"alt+p alt+d", "toggle the plan / desk pane"},
		{"alt+[ alt+]", "previous / next lane"},
		{"alt+s", "show the system prompt the model is given"},
	})...)
	ls = append(ls, sec("transcript focus", [][2]string{
		{"j/k g/G", "scroll, top, bottom"},
		{"[ ]", "select the previous / next card"},
		{"enter o", "expand / collapse the card"},
	})...)
	ls = append(ls, sec("approval", [][2]string{
		{"y s a", "approve once / session / always"},
		{"1-9", "approve a proposed command prefix for the session"},
		{"n d", "deny / deny with a note"},
		{"e", "edit the proposed content in $EDITOR"},
		{"v", "hide / show the dialog"},
		{"tab [ ] j/k", "split view, files, scroll"},
		{"# o", "full digest / all arguments"},
	})...)
	ls = append(ls, th.Muted.Render("enter and space never answer an approval · ? or esc closes"))
	return panes.Frame(th, "HELP", true, ls, min(m.w-2, 64), min(m.h-2, len(ls)+2))
}
