package modal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"staage/approvals"
	"staage/themes"
	"staage/tools"
	"staage/ui/diffview"
	"staage/ui/sanitize"
)

// entry is a queued request with what was computed for it once.
type entry struct {
	Request
	diff    *diffview.View
	args    []string // pretty, sanitized argument lines
	command []string // sanitized command lines (CommandPreview)
	// edited holds the operator's edited content and the arguments that
	// carry it; approving sends them instead of the proposal.
	edited     *string
	editedArgs json.RawMessage
	// wrapped caches args wrapped at wrapW: an argument is never cut
	// off on the approval screen, it continues on the next line.
	wrapW   int
	wrapped []string
}

// argLines returns the argument lines wrapped to w cells.
func (e *entry) argLines(w int) []string {
	if e.wrapped != nil && e.wrapW == w {
		return e.wrapped
	}
	e.wrapW, e.wrapped = w, make([]string, 0, len(e.args))
	for _, l := range e.args {
		if ansi.StringWidth(l) <= w {
			e.wrapped = append(e.wrapped, l)
			continue
		}
		for i, part := range strings.Split(ansi.Hardwrap(l, w-2, true), "\n") {
			if i > 0 {
				part = "↪ " + part
			}
			e.wrapped = append(e.wrapped, part)
		}
	}
	return e.wrapped
}

// Model is the approval modal and its queue.
type Model struct {
	theme themes.Theme
	hl    *diffview.Highlighter
	now   func() time.Time

	queue  []*entry
	w, h   int
	hidden bool
	armAt  time.Time

	noting     bool
	note       []rune
	fullDigest bool
	allArgs    bool
	help       bool
	argsOff    int
	flash      string
}

// New returns an empty modal. now is the clock (time.Now in the console).
func New(theme themes.Theme, hl *diffview.Highlighter, now func() time.Time) *Model {
	if now == nil {
		now = time.Now
	}
	return &Model{theme: theme, hl: hl, now: now}
}

// SetTheme changes the theme.
func (m *Model) SetTheme(theme themes.Theme, hl *diffview.Highlighter) {
	m.theme, m.hl = theme, hl
	for _, e := range m.queue {
		e.diff, e.wrapped = nil, nil
		m.prepare(e)
		if e.edited != nil {
			fd, _ := editable(e)
			fd.New, fd.Unified = *e.edited, ""
			e.diff = newDiff(m, fd)
		}
	}
	m.layout()
}

// Len is the number of queued requests.
func (m *Model) Len() int { return len(m.queue) }

// Active reports whether a request is waiting (shown or hidden).
func (m *Model) Active() bool { return len(m.queue) > 0 }

// Visible reports whether the modal is on screen.
func (m *Model) Visible() bool { return len(m.queue) > 0 && !m.hidden }

// Hidden reports whether the operator put the modal aside with v.
func (m *Model) Hidden() bool { return len(m.queue) > 0 && m.hidden }

// Head returns the request on screen.
func (m *Model) Head() (Request, bool) {
	if len(m.queue) == 0 {
		return Request{}, false
	}
	return m.queue[0].Request, true
}

// SetSize gives the modal the terminal size.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h; m.layout() }

// Open queues r at the end. Only when the queue was empty does it reach
// the screen (and the grace period start).
func (m *Model) Open(r Request) tea.Cmd {
	e := &entry{Request: r}
	m.prepare(e)
	m.queue = append(m.queue, e)
	if len(m.queue) == 1 {
		m.show()
	}
	m.layout()
	return m.highlightCmd()
}

// Cancel removes a withdrawn request.
func (m *Model) Cancel(key uint64) tea.Cmd {
	for i, e := range m.queue {
		if e.Key != key {
			continue
		}
		m.queue = append(m.queue[:i], m.queue[i+1:]...)
		if i == 0 {
			m.show()
			m.layout()
			return m.highlightCmd()
		}
		return nil
	}
	return nil
}

// show resets per-request state and starts the grace period for the new
// head.
func (m *Model) show() {
	m.hidden, m.noting, m.note = false, false, nil
	m.fullDigest, m.allArgs, m.argsOff, m.flash, m.help = false, false, 0, "", false
	m.armAt = m.now().Add(Grace)
}

func (m *Model) prepare(e *entry) {
	e.args = prettyArgs(e.Req.Args)
	switch p := e.Req.Preview.(type) {
	case tools.DiffPreview:
		e.diff = diffview.New(m.theme, m.hl, p)
	case *tools.DiffPreview:
		if p != nil {
			e.diff = diffview.New(m.theme, m.hl, *p)
		}
	case tools.CommandPreview:
		e.command = strings.Split(sanitize.Marked(p.Command), "\n")
	case *tools.CommandPreview:
		if p != nil {
			e.command = strings.Split(sanitize.Marked(p.Command), "\n")
		}
	}
}

// prettyArgs decodes the canonical arguments once and shows them as
// "key: value" lines (multi-line strings indented below their key), with
// every removed control character marked.
func prettyArgs(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return strings.Split(sanitize.Marked(string(raw)), "\n")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		name := sanitize.Line(k)
		var s string
		if json.Unmarshal(obj[k], &s) == nil {
			if !strings.Contains(s, "\n") {
				out = append(out, name+": "+sanitize.Line(s))
				continue
			}
			out = append(out, name+": |")
			for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
				out = append(out, "    "+sanitize.Marked(l))
			}
			continue
		}
		var buf bytes.Buffer
		if json.Indent(&buf, obj[k], "", "  ") != nil {
			buf.Reset()
			buf.Write(obj[k])
		}
		ls := strings.Split(sanitize.Marked(buf.String()), "\n")
		out = append(out, name+": "+ls[0])
		for _, l := range ls[1:] {
			out = append(out, "  "+l)
		}
	}
	return out
}

// answer hands the head its decision and shows the next request.
func (m *Model) answer(d approvals.Decision) tea.Cmd {
	e := m.queue[0]
	if e.editedArgs != nil && d.Verdict == approvals.Approve {
		d.EditedArgs = e.editedArgs
	}
	select {
	case e.Answer <- d:
	default:
	}
	m.queue = m.queue[1:]
	m.show()
	m.layout()
	key := e.Key
	return tea.Batch(m.highlightCmd(), func() tea.Msg { return AnsweredMsg{Key: key, Decision: d} })
}

// Update handles messages for the modal. handled is false when the app
// should handle the message itself (esc interrupts the turn; keys while
// the modal is hidden belong to the console).
func (m *Model) Update(msg tea.Msg) (cmd tea.Cmd, handled bool) {
	switch msg := msg.(type) {
	case diffview.HighlightedMsg:
		if m.hl != nil {
			m.hl.Merge(msg.Result)
		}
		return nil, true
	case editedMsg:
		return m.edited(msg), true
	case tea.KeyPressMsg:
		if len(m.queue) == 0 {
			return nil, false
		}
		return m.key(msg)
	}
	return nil, false
}

func (m *Model) key(k tea.KeyPressMsg) (tea.Cmd, bool) {
	s := k.String()
	if m.hidden {
		if s == "v" {
			m.hidden = false
			m.armAt = m.now().Add(Grace)
			return nil, true
		}
		return nil, false
	}
	if s == "esc" && !m.noting {
		return nil, false
	}
	if now := m.now(); now.Before(m.armAt) {
		// Typed ahead: discard, and wait for another quiet period.
		m.armAt = now.Add(Grace)
		m.flash = "keys ignored until the dialog has been on screen for a moment"
		return nil, true
	}
	m.flash = ""
	if m.noting {
		return m.noteKey(k), true
	}
	e := m.queue[0]
	switch s {
	case "y":
		return m.answer(approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeOnce}), true
	case "s":
		return m.answer(approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeSession}), true
	case "a":
		return m.answer(approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeAlways}), true
	case "n":
		return m.answer(approvals.Decision{Verdict: approvals.Deny}), true
	case "1", "2", "3", "4", "5", "6", "7", "8", "9":
		// A session grant narrowed to one of the prefixes the tool proposed.
		if i := int(s[0] - '1'); i < len(e.Req.Prefixes) {
			return m.answer(approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeSession, Prefix: e.Req.Prefixes[i]}), true
		}
	case "d":
		m.noting, m.note = true, nil
	case "e":
		return m.editCmd(e), true
	case "v":
		m.hidden = true
	case "tab":
		if e.diff != nil {
			e.diff.ToggleSplit()
		}
	case "j", "down":
		m.scroll(e, 1)
	case "k", "up":
		m.scroll(e, -1)
	case "pgdown", "ctrl+d":
		if e.diff != nil {
			e.diff.Page(1)
		} else {
			m.scroll(e, 10)
		}
	case "pgup", "ctrl+u":
		if e.diff != nil {
			e.diff.Page(-1)
		} else {
			m.scroll(e, -10)
		}
	case "]":
		if e.diff != nil {
			e.diff.NextFile(1)
		}
	case "[":
		if e.diff != nil {
			e.diff.NextFile(-1)
		}
	case "#":
		m.fullDigest = !m.fullDigest
		m.layout()
	case "?":
		m.help = !m.help
	case "o":
		m.allArgs = !m.allArgs
		m.argsOff = 0
		m.layout()
	case "enter", "space":
		m.flash = "no default answer: y once · s session · a always · n deny · d deny with a note"
	}
	m.layout()
	return m.highlightCmd(), true
}

// Scroll scrolls the preview of the request on screen (the mouse wheel).
// Scrolling answers nothing, so it ignores the grace period.
func (m *Model) Scroll(n int) {
	if m.Visible() {
		m.scroll(m.queue[0], n)
	}
}

func (m *Model) scroll(e *entry, n int) {
	if e.diff != nil {
		e.diff.Scroll(n)
		return
	}
	iw, _ := m.inner()
	m.argsOff = max(0, min(m.argsOff+n, len(e.argLines(iw))-1))
}

func (m *Model) noteKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc":
		m.noting, m.note = false, nil
	case "enter":
		note := strings.TrimSpace(string(m.note))
		m.noting = false
		return m.answer(approvals.Decision{Verdict: approvals.Deny, Note: note})
	case "backspace":
		if len(m.note) > 0 {
			m.note = m.note[:len(m.note)-1]
		}
	case "space":
		m.note = append(m.note, ' ')
	default:
		if k.Text != "" {
			m.note = append(m.note, []rune(sanitize.Text(k.Text))...)
		}
	}
	return nil
}

func (m *Model) highlightCmd() tea.Cmd {
	if len(m.queue) == 0 || m.hidden {
		return nil
	}
	e := m.queue[0]
	if e.diff != nil {
		return e.diff.HighlightCmd()
	}
	if len(e.command) > 0 && m.hl != nil {
		if job := m.hl.Job("command.sh", e.command); job != nil {
			return func() tea.Msg { return diffview.HighlightedMsg{Result: job.Run()} }
		}
	}
	return nil
}

// Flash is the last hint the modal gave (a discarded key, no default).
func (m *Model) Flash() string { return m.flash }

func digestText(d tools.Digest, full bool) string {
	if full {
		return d.String()
	}
	return d.Short()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func truncate(s string, w int) string { return ansi.Truncate(s, max(w, 1), "…") }
