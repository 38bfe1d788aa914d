package themes

import (
	"image/color"

	"charm.land/lipgloss/v2"

	"staage/tools"
)

// Theme is a palette with the styles derived from it. Build it once with
// New and share it: styles are plain values.
type Theme struct {
	Palette

	Text, Muted, Subtle, Accent, Bold lipgloss.Style
	StatusBar, StatusKey, StatusWarn  lipgloss.Style
	UserLabel, AssistantLabel         lipgloss.Style
	Thinking                          lipgloss.Style
	OK, Warn, Error                   lipgloss.Style
	Marker                            lipgloss.Style
	// Pane borders, plain and focused, and a pane title.
	Pane, PaneFocused, PaneTitle lipgloss.Style
	// Diff rows.
	DiffAdd, DiffDel, DiffContext, DiffHunk, LineNo lipgloss.Style
	// Modal box and the dimmed background behind it.
	Modal, Dim lipgloss.Style
	// Selected marks the selected transcript item.
	Selected lipgloss.Style
	// Key renders a key name in hints.
	Key lipgloss.Style
}

// New derives the styles of p.
func New(p Palette) Theme {
	s := lipgloss.NewStyle
	t := Theme{Palette: p}
	t.Text = fg(s(), p.Fg)
	t.Muted = fg(s(), p.Muted)
	t.Subtle = fg(s(), p.Subtle)
	t.Accent = fg(s().Bold(true), p.Accent)
	t.Bold = s().Bold(true)
	t.StatusBar = bg(fg(s(), p.StatusFg), p.StatusBg)
	t.StatusKey = bg(fg(s().Bold(true), p.StatusFg), p.StatusBg)
	t.StatusWarn = bg(fg(s().Bold(true), p.Warn), p.StatusBg)
	if !p.Colored() {
		t.StatusBar = s().Reverse(true)
		t.StatusKey = s().Reverse(true).Bold(true)
		t.StatusWarn = s().Reverse(true).Bold(true)
	}
	t.UserLabel = fg(s().Bold(true), p.User)
	t.AssistantLabel = fg(s().Bold(true), p.Assistant)
	t.Thinking = fg(s().Italic(true), p.Thinking)
	t.OK = fg(s(), p.OK)
	t.Warn = fg(s().Bold(true), p.Warn)
	t.Error = fg(s().Bold(true), p.Error)
	t.Marker = fg(s().Reverse(true), p.Marker)
	t.Pane = bc(s().Border(lipgloss.RoundedBorder()), p.Border)
	t.PaneFocused = bc(s().Border(lipgloss.RoundedBorder()), p.FocusBorder)
	if !p.Colored() {
		t.PaneFocused = s().Border(lipgloss.ThickBorder())
	}
	t.PaneTitle = fg(s().Bold(true), p.Accent)
	t.DiffAdd = bg(fg(s(), p.Add), p.AddBg)
	t.DiffDel = bg(fg(s(), p.Del), p.DelBg)
	t.DiffContext = fg(s(), p.Fg)
	t.DiffHunk = fg(s(), p.Hunk)
	t.LineNo = fg(s(), p.Muted)
	t.Modal = bc(s().Border(lipgloss.DoubleBorder()).Padding(0, 1), p.FocusBorder)
	t.Dim = fg(s(), p.Subtle)
	if !p.Colored() {
		t.Dim = s().Faint(true)
	}
	t.Selected = fg(s().Bold(true), p.Accent)
	t.Key = fg(s().Bold(true), p.Accent)
	return t
}

// Badge renders an effect class as a badge: reverse video in the class's
// colour, or bracketed text without colour.
func (t Theme) Badge(e tools.EffectClass) string {
	name := string(e)
	if !e.Valid() {
		name = string(tools.EffectIrreversible)
	}
	if !t.Colored() {
		return "[" + name + "]"
	}
	return lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#000000")).
		Background(t.EffectColor(e)).Render(" " + name + " ")
}

func fg(s lipgloss.Style, c color.Color) lipgloss.Style {
	if c == nil {
		return s
	}
	return s.Foreground(c)
}

func bg(s lipgloss.Style, c color.Color) lipgloss.Style {
	if c == nil {
		return s
	}
	return s.Background(c)
}

func bc(s lipgloss.Style, c color.Color) lipgloss.Style {
	if c == nil {
		return s
	}
	return s.BorderForeground(c)
}
