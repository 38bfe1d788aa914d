// Package picker is the session picker: a small Bubble Tea model that lists
// journaled sessions (journal.Summary rows), narrows them with a typed
// filter and answers with the chosen session's ID. It runs on its own (Run,
// for `staage --resume` without an ID) or inside the console, where the
// parent reacts to the Chosen and Cancelled messages.
package picker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"staage/agent/journal"
	"staage/ui/sanitize"
)

// ErrCancelled is returned by Run when the operator closes the picker
// without choosing.
var ErrCancelled = errors.New("no session chosen")

// Chosen is sent when the operator opens a session.
type Chosen struct{ ID string }

// Cancelled is sent when the operator closes the picker.
type Cancelled struct{}

// Options configure a picker.
type Options struct {
	// Now is the clock for "2h ago" (time.Now when nil).
	Now func() time.Time
	// Home is shortened to "~" in workspace paths ($HOME when empty).
	Home string
	// Title heads the list ("Resume a session" when empty).
	Title string
	// Location shows times (time.Local when nil).
	Location *time.Location
}

type keyMap struct {
	Up, Down, PageUp, PageDown, Open, Cancel key.Binding
}

func defaultKeys() keyMap {
	return keyMap{
		Up:       key.NewBinding(key.WithKeys("up", "ctrl+p", "ctrl+k")),
		Down:     key.NewBinding(key.WithKeys("down", "ctrl+n", "ctrl+j")),
		PageUp:   key.NewBinding(key.WithKeys("pgup")),
		PageDown: key.NewBinding(key.WithKeys("pgdown")),
		Open:     key.NewBinding(key.WithKeys("enter")),
		Cancel:   key.NewBinding(key.WithKeys("esc", "ctrl+c")),
	}
}

// row is a Summary made safe and cheap to filter and draw.
type row struct {
	s        journal.Summary
	haystack string // lower-cased text the filter matches
	model    string
	ws       string
	prompt   string
}

// Model is the picker.
type Model struct {
	rows     []row
	shown    []int // indexes into rows that pass the filter
	cursor   int   // index into shown
	offset   int   // first shown row on screen
	filter   textinput.Model
	keys     keyMap
	opts     Options
	width    int
	height   int
	note     string // a one-line message (why a row cannot be opened)
	chosen   string
	finished bool

	selStyle, dimStyle, titleStyle lipgloss.Style
}

// New builds a picker over rows, most recent first as journal.List gives.
func New(rows []journal.Summary, opts Options) Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Home == "" {
		opts.Home, _ = os.UserHomeDir()
	}
	if opts.Title == "" {
		opts.Title = "Resume a session"
	}
	if opts.Location == nil {
		opts.Location = time.Local
	}
	ti := textinput.New()
	ti.Prompt = "filter › "
	ti.Placeholder = "type to filter by prompt, model, workspace or id"
	ti.Focus()
	m := Model{
		filter: ti, keys: defaultKeys(), opts: opts, width: 80, height: 20,
		selStyle:   lipgloss.NewStyle().Reverse(true),
		dimStyle:   lipgloss.NewStyle().Faint(true),
		titleStyle: lipgloss.NewStyle().Bold(true),
	}
	for _, s := range rows {
		r := row{
			s:      s,
			model:  sanitize.Line(s.Provider),
			ws:     sanitize.Line(shortHome(s.Workspace, opts.Home)),
			prompt: sanitize.Line(s.FirstPrompt),
		}
		if s.Problem != "" {
			r.prompt = "(" + sanitize.Line(s.Problem) + ")"
		}
		r.haystack = strings.ToLower(strings.Join([]string{sanitize.Line(s.ID), r.model, r.ws, sanitize.Line(s.Workspace), r.prompt}, "\x00"))
		m.rows = append(m.rows, r)
	}
	m.refilter()
	return m
}

// Run shows the picker on the terminal until the operator chooses (the
// session's ID) or cancels (ErrCancelled).
func Run(ctx context.Context, rows []journal.Summary, opts Options, progOpts ...tea.ProgramOption) (string, error) {
	if len(rows) == 0 {
		return "", errors.New("no sessions to pick from")
	}
	p := tea.NewProgram(standalone{New(rows, opts)}, append([]tea.ProgramOption{tea.WithContext(ctx)}, progOpts...)...)
	final, err := p.Run()
	if err != nil {
		return "", fmt.Errorf("picker: %w", err)
	}
	if id, ok := final.(standalone).Chosen(); ok {
		return id, nil
	}
	return "", ErrCancelled
}

// PickSession lists the sessions in the journal directory, those of
// workspace first (each group most recent first), and runs the picker: what
// `staage --resume` without an ID shows. It returns the chosen session's ID,
// or ErrCancelled.
func PickSession(ctx context.Context, workspace string, opts Options, progOpts ...tea.ProgramOption) (string, error) {
	dir, err := journal.SessionsDir()
	if err != nil {
		return "", err
	}
	rows, err := journal.List(dir)
	if err != nil {
		return "", err
	}
	if len(rows) == 0 {
		return "", fmt.Errorf("no sessions in %s", dir)
	}
	return Run(ctx, HereFirst(rows, workspace), opts, progOpts...)
}

// HereFirst orders rows with the sessions of workspace first, keeping each
// group's order.
func HereFirst(rows []journal.Summary, workspace string) []journal.Summary {
	want := filepath.Clean(workspace)
	out := make([]journal.Summary, 0, len(rows))
	for _, r := range rows {
		if r.Workspace != "" && filepath.Clean(r.Workspace) == want {
			out = append(out, r)
		}
	}
	for _, r := range rows {
		if r.Workspace == "" || filepath.Clean(r.Workspace) != want {
			out = append(out, r)
		}
	}
	return out
}

// standalone quits the program when the picker finishes.
type standalone struct{ Model }

func (s standalone) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg.(type) {
	case Chosen, Cancelled:
		return s, tea.Quit
	}
	m, cmd := s.Model.Update(msg)
	return standalone{m.(Model)}, cmd
}

// Chosen returns the chosen session's ID once the operator has opened one.
func (m Model) Chosen() (string, bool) { return m.chosen, m.chosen != "" }

// Finished reports whether the operator chose or cancelled.
func (m Model) Finished() bool { return m.finished }

// Shown counts the rows passing the filter.
func (m Model) Shown() int { return len(m.shown) }

// Init starts the filter's cursor.
func (m Model) Init() tea.Cmd { return textinput.Blink }

// Update handles keys and resizes; other keys go to the filter.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if m.finished {
		return m, nil
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.filter.SetWidth(max(10, m.width-len(m.filter.Prompt)-2))
		m.scroll()
		return m, nil
	case tea.KeyPressMsg:
		m.note = ""
		switch {
		case key.Matches(msg, m.keys.Cancel):
			m.finished = true
			return m, func() tea.Msg { return Cancelled{} }
		case key.Matches(msg, m.keys.Open):
			return m.open()
		case key.Matches(msg, m.keys.Up):
			m.move(-1)
			return m, nil
		case key.Matches(msg, m.keys.Down):
			m.move(1)
			return m, nil
		case key.Matches(msg, m.keys.PageUp):
			m.move(-m.listHeight())
			return m, nil
		case key.Matches(msg, m.keys.PageDown):
			m.move(m.listHeight())
			return m, nil
		}
	}
	before := m.filter.Value()
	var cmd tea.Cmd
	m.filter, cmd = m.filter.Update(msg)
	if m.filter.Value() != before {
		m.refilter()
	}
	return m, cmd
}

func (m Model) open() (tea.Model, tea.Cmd) {
	if len(m.shown) == 0 {
		m.note = "no session matches the filter"
		return m, nil
	}
	r := m.rows[m.shown[m.cursor]]
	if r.s.Problem != "" {
		m.note = "this session cannot be resumed: " + sanitize.Line(r.s.Problem)
		return m, nil
	}
	m.chosen, m.finished = r.s.ID, true
	id := r.s.ID
	return m, func() tea.Msg { return Chosen{ID: id} }
}

func (m *Model) move(d int) {
	if len(m.shown) == 0 {
		return
	}
	m.cursor = min(max(m.cursor+d, 0), len(m.shown)-1)
	m.scroll()
}

// refilter keeps the rows whose text holds every word of the filter, and
// keeps the cursor on the same session when it is still shown.
func (m *Model) refilter() {
	var current string
	if m.cursor < len(m.shown) {
		current = m.rows[m.shown[m.cursor]].s.ID
	}
	words := strings.Fields(strings.ToLower(m.filter.Value()))
	m.shown = make([]int, 0, len(m.rows))
	m.cursor = 0
	for i, r := range m.rows {
		if matches(r.haystack, words) {
			if r.s.ID == current {
				m.cursor = len(m.shown)
			}
			m.shown = append(m.shown, i)
		}
	}
	m.offset = 0
	m.scroll()
}

func matches(haystack string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(haystack, w) {
			return false
		}
	}
	return true
}

// listHeight is how many rows fit: the screen less title, filter, a blank
// line, the status line and the help line.
func (m Model) listHeight() int { return max(1, m.height-5) }

func (m *Model) scroll() {
	h := m.listHeight()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+h {
		m.offset = m.cursor - h + 1
	}
	m.offset = max(0, min(m.offset, max(0, len(m.shown)-h)))
}

// View draws only the visible rows.
func (m Model) View() tea.View {
	var b strings.Builder
	count := fmt.Sprintf("%d of %d", len(m.shown), len(m.rows))
	title := m.titleStyle.Render(m.opts.Title)
	gap := max(1, m.width-ansi.StringWidth(m.opts.Title)-len(count))
	b.WriteString(title + strings.Repeat(" ", gap) + m.dimStyle.Render(count) + "\n")
	b.WriteString(m.filter.View() + "\n\n")
	h := m.listHeight()
	now := m.opts.Now()
	for i := m.offset; i < min(m.offset+h, len(m.shown)); i++ {
		r := m.rows[m.shown[i]]
		line := m.line(r, now)
		switch {
		case i == m.cursor:
			line = m.selStyle.Render(line)
		case r.s.Problem != "":
			line = m.dimStyle.Render(line)
		}
		b.WriteString(line + "\n")
	}
	if len(m.shown) == 0 {
		b.WriteString(m.dimStyle.Render("  no session matches") + "\n")
	}
	for i := max(len(m.shown), 1); i < h; i++ {
		b.WriteString("\n")
	}
	b.WriteString(m.dimStyle.Render(ansi.Truncate(m.status(), m.width, "…")) + "\n")
	b.WriteString(m.dimStyle.Render(ansi.Truncate("↑/↓ move · enter open · esc cancel · type to filter", m.width, "…")))
	v := tea.NewView(b.String())
	v.AltScreen = true
	return v
}

// status is the note, or the selected session's details.
func (m Model) status() string {
	if m.note != "" || len(m.shown) == 0 {
		return m.note
	}
	s := m.rows[m.shown[m.cursor]].s
	parts := []string{sanitize.Line(s.ID)}
	if !s.Started.IsZero() {
		parts = append(parts, "started "+s.Started.In(m.opts.Location).Format("2006-01-02 15:04"))
	}
	parts = append(parts, HumanSize(s.Size))
	if s.Workspace != "" {
		parts = append(parts, sanitize.Line(s.Workspace))
	}
	return strings.Join(parts, " · ")
}

// HumanSize words a journal size for session lists.
func HumanSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}

// line is one row: marker, age, model, workspace, first prompt, clipped to
// the width and padded so the selection bar spans it.
func (m Model) line(r row, now time.Time) string {
	mark := "  "
	if r.s.Problem != "" {
		mark = "! "
	}
	s := mark + pad(Ago(now, r.s.LastActivity), 9) + "  " + pad(r.model, 22) + "  " + pad(r.ws, 24) + "  " + r.prompt
	s = ansi.Truncate(s, m.width, "…")
	return s + strings.Repeat(" ", max(0, m.width-ansi.StringWidth(s)))
}

func pad(s string, w int) string {
	s = ansi.Truncate(s, w, "…")
	return s + strings.Repeat(" ", max(0, w-ansi.StringWidth(s)))
}

func shortHome(p, home string) string {
	if home == "" || p == "" {
		return p
	}
	if p == home {
		return "~"
	}
	if rel, ok := strings.CutPrefix(p, home+string(filepath.Separator)); ok {
		return "~" + string(filepath.Separator) + rel
	}
	return p
}

// Ago words how long ago t was, for session lists.
func Ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return "-"
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
}
