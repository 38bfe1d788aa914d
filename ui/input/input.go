// Package input is the prompt editor: a multi-line textarea where enter
// sends, shift+enter and ctrl+j insert a newline, and up/down on the first
// and last line walk the history of sent prompts.
package input

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"staage/themes"
)

// MaxHeight is the most lines the input grows to before it scrolls.
const MaxHeight = 6

// SubmitMsg is sent when the operator presses enter on a non-empty input.
type SubmitMsg struct{ Text string }

// Model is the input.
type Model struct {
	ta      textarea.Model
	history []string
	// hpos indexes history while browsing; len(history) is "the draft".
	hpos  int
	draft string
	width int
}

// New returns a focused input.
func New(th themes.Theme) *Model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = "› "
	ta.Placeholder = "ask, or type a task · enter sends · shift+enter newline · ? help"
	ta.CharLimit = 0
	ta.MaxHeight = MaxHeight
	ta.SetHeight(1)
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("shift+enter", "ctrl+j", "alt+enter"))
	// up/down walk history at the edges; keep the rest of the keymap.
	ta.SetStyles(styles(th))
	ta.Focus()
	return &Model{ta: ta}
}

// SetTheme restyles the textarea.
func (m *Model) SetTheme(th themes.Theme) { m.ta.SetStyles(styles(th)) }

// styles are bubbles' defaults, or no colour at all under NO_COLOR.
func styles(th themes.Theme) textarea.Styles {
	st := textarea.DefaultStyles(th.IsDark)
	if th.Colored() {
		return st
	}
	plain := textarea.StyleState{
		Base: lipgloss.NewStyle(), Text: lipgloss.NewStyle(), LineNumber: lipgloss.NewStyle(),
		CursorLineNumber: lipgloss.NewStyle(), CursorLine: lipgloss.NewStyle(),
		EndOfBuffer: lipgloss.NewStyle(), Placeholder: lipgloss.NewStyle().Faint(true), Prompt: lipgloss.NewStyle().Bold(true),
		Selection: lipgloss.NewStyle().Reverse(true),
	}
	st.Focused, st.Blurred = plain, plain
	st.Cursor.Color = nil
	return st
}

// SetWidth sets the width.
func (m *Model) SetWidth(w int) { m.width = w; m.ta.SetWidth(w) }

// Height is the number of lines the input takes now.
func (m *Model) Height() int { return min(max(m.ta.LineCount(), 1), MaxHeight) }

// Value is the text typed so far.
func (m *Model) Value() string { return m.ta.Value() }

// Reset clears the input.
func (m *Model) Reset() { m.ta.Reset(); m.ta.SetHeight(1) }

// Focus and Blur move the cursor in and out of the input.
func (m *Model) Focus() tea.Cmd { return m.ta.Focus() }

// Blur removes focus.
func (m *Model) Blur() { m.ta.Blur() }

// Update handles a message while the input is focused.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "enter":
			text := strings.TrimRight(m.ta.Value(), "\n")
			if strings.TrimSpace(text) == "" {
				return nil
			}
			if len(m.history) == 0 || m.history[len(m.history)-1] != text {
				m.history = append(m.history, text)
			}
			m.hpos = len(m.history)
			m.Reset()
			return func() tea.Msg { return SubmitMsg{Text: text} }
		case "up":
			if m.ta.Line() == 0 && m.hpos > 0 {
				if m.hpos == len(m.history) {
					m.draft = m.ta.Value()
				}
				m.hpos--
				m.set(m.history[m.hpos])
				return nil
			}
		case "down":
			if m.ta.Line() == m.ta.LineCount()-1 && m.hpos < len(m.history) {
				m.hpos++
				if m.hpos == len(m.history) {
					m.set(m.draft)
				} else {
					m.set(m.history[m.hpos])
				}
				return nil
			}
		}
	}
	var cmd tea.Cmd
	m.ta, cmd = m.ta.Update(msg)
	m.ta.SetHeight(m.Height())
	return cmd
}

func (m *Model) set(s string) {
	m.ta.SetValue(s)
	m.ta.SetHeight(m.Height())
	m.ta.MoveToEnd()
}

// View renders the input.
func (m *Model) View() string { return m.ta.View() }

// Cursor is the real terminal cursor for the input, relative to its top
// left corner, or nil.
func (m *Model) Cursor() *tea.Cursor { return m.ta.Cursor() }
