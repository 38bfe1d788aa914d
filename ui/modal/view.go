package modal

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"

	"staage/themes"
	"staage/tools"
	"staage/ui/sanitize"
)

// footerLines is the height of the hint and status lines at the bottom.
const footerLines = 2

// box returns the outer size of the dialog for the terminal size.
func (m *Model) box() (w, h int) {
	// Two cells of margin where there is room; on a tiny terminal the
	// dialog takes the whole screen rather than spilling past it.
	w, h = min(m.w-2, 120), m.h-2
	if w < 30 {
		w = max(m.w, 12)
	}
	if h < 12 {
		h = max(m.h, 8)
	}
	return w, h
}

// inner is the text area inside the border and padding.
func (m *Model) inner() (w, h int) {
	bw, bh := m.box()
	return bw - 4, bh - 2
}

// argsBudget is how many argument lines are shown above a preview.
func (m *Model) argsBudget(e *entry, ih int) int {
	if e.diff == nil && len(e.command) == 0 {
		return max(ih-6-footerLines, 3)
	}
	if m.allArgs {
		return max(ih/2, 3)
	}
	return min(4, max(ih/5, 2))
}

// layout sizes the diff view of the head to what is left of the box.
func (m *Model) layout() {
	if len(m.queue) == 0 || m.w == 0 {
		return
	}
	e := m.queue[0]
	if e.diff == nil {
		return
	}
	iw, ih := m.inner()
	used := len(m.header(e, iw)) + 1 + m.shownArgs(e, ih) + 1 + footerLines
	avail := max(ih-used, 3)
	// A short diff gets a short dialog; a long one scrolls in what is left.
	e.diff.SetSize(iw, min(avail, max(e.diff.Rows()+1, 3)))
}

func (m *Model) shownArgs(e *entry, ih int) int {
	iw, _ := m.inner()
	args := e.argLines(iw)
	n := min(len(args), m.argsBudget(e, ih))
	if len(args) > n {
		n++ // the "more" line
	}
	return n
}

func (m *Model) header(e *entry, iw int) []string {
	th := m.theme
	d := e.Req.Descriptor
	title := th.Accent.Render("Approve ") + th.Bold.Render(sanitize.Line(d.Name)) + th.Accent.Render("?")
	count := th.Warn.Render("1 of " + strconv.Itoa(len(m.queue)))
	gap := iw - lipgloss.Width(title) - lipgloss.Width(count)
	lines := []string{truncate(title+strings.Repeat(" ", max(gap, 1))+count, iw)}
	meta := th.Muted.Render("origin ") + sanitize.Line(d.Origin) + th.Muted.Render(" · ") + th.Badge(d.Effect) +
		th.Muted.Render(" · ") + digestText(d.Digest, m.fullDigest)
	if e.Req.Lane != "" && e.Req.Lane != "main" {
		meta += th.Muted.Render(" · lane ") + sanitize.Line(e.Req.Lane)
	}
	lines = append(lines, truncate(meta, iw))
	if m.fullDigest && d.Description != "" {
		for _, l := range wrapText(sanitize.Marked(d.Description), iw) {
			lines = append(lines, th.Muted.Render(l))
		}
	}
	return lines
}

// View renders the dialog box (not the background).
func (m *Model) View() string {
	if !m.Visible() {
		return ""
	}
	th := m.theme
	e := m.queue[0]
	bw, _ := m.box()
	iw, ih := m.inner()
	lines := m.header(e, iw)

	lines = append(lines, rule(th.Muted.Render("arguments"), iw, th.Subtle.Render("─")))
	budget := m.argsBudget(e, ih)
	args := e.argLines(iw)
	off := 0
	if e.diff == nil && len(e.command) == 0 {
		off = min(m.argsOff, max(len(args)-budget, 0))
	}
	shown := args[off:min(off+budget, len(args))]
	for _, l := range shown {
		lines = append(lines, truncate(th.Text.Render(l), iw))
	}
	if rest := len(args) - off - len(shown); rest > 0 {
		hint := "… " + plural(rest, "more line", "more lines")
		if e.diff != nil || len(e.command) > 0 {
			hint += " (o: more)"
		} else {
			hint += " (j/k scroll)"
		}
		lines = append(lines, th.Muted.Render(hint))
	}

	switch {
	case m.help:
		lines = append(lines, rule(th.Muted.Render("keys"), iw, th.Subtle.Render("─")))
		lines = append(lines, m.helpLines(iw)...)
	case e.diff != nil:
		lines = append(lines, rule(th.Muted.Render("preview"), iw, th.Subtle.Render("─")))
		lines = append(lines, strings.Split(e.diff.View(), "\n")...)
	case len(e.command) > 0:
		lines = append(lines, rule(th.Muted.Render("command"), iw, th.Subtle.Render("─")))
		for i, l := range e.command {
			code := th.Text.Render(l)
			if hl, ok := m.hl.Lookup("command.sh", l); ok {
				code = hl
			}
			prompt := "$ "
			if i > 0 {
				prompt = "  "
			}
			lines = append(lines, truncate(th.Accent.Render(prompt)+code, iw))
		}
		lines = append(lines, "")
		lines = append(lines, m.commandMeta(e, iw)...)
	}
	if len(e.Req.Prefixes) > 0 {
		lines = append(lines, "")
		lines = append(lines, m.prefixLine(e, iw))
	}
	// The dialog is as tall as what it shows, up to the screen.
	body := min(ih-footerLines, max(len(lines)+1, 8))
	for len(lines) < body {
		lines = append(lines, "")
	}
	lines = lines[:body]
	// The answers always fit on the last line; the other keys go on the
	// line above it when no status needs that line.
	answers, more := m.hints(e, iw)
	status := m.statusLine(e, iw)
	if status == "" {
		status = more
	}
	lines = append(lines, status, answers)
	edge := lipgloss.NewStyle().Foreground(th.Modal.GetBorderTopForeground())
	return themes.Box(lipgloss.DoubleBorder(), edge, "", lines, bw, len(lines)+2, 1)
}

func (m *Model) commandMeta(e *entry, iw int) []string {
	th := m.theme
	var out []string
	add := func(k, v string) {
		if v != "" {
			out = append(out, truncate(th.Muted.Render(k+" ")+sanitize.Line(v), iw))
		}
	}
	switch p := e.Req.Preview.(type) {
	case tools.CommandPreview:
		add("workdir", p.Workdir)
		add("sandbox", firstNonEmpty(p.Sandbox, e.Req.Sandbox))
		add("network", p.Network)
	case *tools.CommandPreview:
		add("workdir", p.Workdir)
		add("sandbox", firstNonEmpty(p.Sandbox, e.Req.Sandbox))
		add("network", p.Network)
	}
	return out
}

// helpLines explain every key of the dialog.
func (m *Model) helpLines(iw int) []string {
	th := m.theme
	rows := [][2]string{
		{"y", "approve this call once"},
		{"s", "approve this tool (this digest) for the session"},
		{"a", "approve this tool always in this workspace"},
		{"1-9", "approve commands starting with a proposed prefix, for the session"},
		{"n", "deny"},
		{"d", "deny with a note the model reads"},
		{"e", "edit the proposed content in $EDITOR, then approve the edited version"},
		{"v", "hide the dialog to read the transcript; v again brings it back"},
		{"tab", "unified / side-by-side diff"},
		{"j k pgup pgdn", "scroll the preview"},
		{"[ ]", "previous / next file"},
		{"# o", "full digest and description / more arguments"},
		{"esc", "interrupt the turn (withdraws this request)"},
		{"enter space", "nothing: there is no default answer"},
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, truncate(th.Key.Render(fmt.Sprintf("%-14s", r[0]))+" "+th.Text.Render(r[1]), iw))
	}
	return out
}

// prefixLine offers the narrowed session grants the tool proposed.
func (m *Model) prefixLine(e *entry, iw int) string {
	th := m.theme
	parts := []string{th.Muted.Render("allow for the session every command starting with:")}
	for i, p := range e.Req.Prefixes {
		if i == 9 {
			break
		}
		parts = append(parts, th.Key.Render(strconv.Itoa(i+1))+" "+sanitize.Line(p))
	}
	return truncate(strings.Join(parts, "  "), iw)
}

func (m *Model) statusLine(e *entry, iw int) string {
	th := m.theme
	switch {
	case m.noting:
		return truncate(th.Warn.Render("deny with a note ▸ ")+sanitize.Line(string(m.note))+"█"+th.Muted.Render("  (enter send · esc back)"), iw)
	case m.flash != "":
		return truncate(th.Warn.Render(m.flash), iw)
	case e.edited != nil:
		return truncate(th.Warn.Render("content edited in $EDITOR: approving runs the edited version"), iw)
	}
	return ""
}

func (m *Model) hints(e *entry, iw int) (answers, more string) {
	th := m.theme
	k := func(key, what string) string { return th.Key.Render(key) + " " + th.Muted.Render(what) }
	parts := []string{k("y", "once"), k("s", "session"), k("a", "always"), k("n", "deny"), k("d", "deny+note")}
	if m.canEdit(e) {
		parts = append(parts, k("e", "edit"))
	}
	parts = append(parts, k("v", "hide"))
	if e.diff != nil {
		parts = append(parts, k("tab", "split"), k("j/k", "scroll"))
		if e.diff.Files() > 1 {
			parts = append(parts, k("[ ]", "file"))
		}
	}
	parts = append(parts, k("#", "digest"), k("o", "args"), k("?", "keys"))
	sep := th.Subtle.Render(" · ")
	n, width := 0, 0
	for n < len(parts) {
		w := lipgloss.Width(parts[n])
		if n > 0 {
			w += 3
		}
		if width+w > iw {
			break
		}
		width += w
		n++
	}
	if n == 0 {
		n = 1
	}
	return truncate(strings.Join(parts[:n], sep), iw), truncate(strings.Join(parts[n:], sep), iw)
}

func rule(title string, w int, dash string) string {
	tw := lipgloss.Width(title)
	if w-tw-3 <= 0 {
		return title
	}
	return dash + " " + title + " " + strings.Repeat(dash, w-tw-3)
}

func wrapText(s string, w int) []string {
	return strings.Split(lipgloss.Wrap(s, max(w, 1), " "), "\n")
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
