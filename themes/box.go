package themes

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Box draws lines inside a border of exactly w×h cells, with a title set
// into the top edge. It is built by hand rather than with Style.Render,
// which re-wraps every line on every frame: the panes and the modal are
// drawn on every frame.
func Box(border lipgloss.Border, style lipgloss.Style, title string, lines []string, w, h, padX int) string {
	w, h = max(w, 2+2*padX+1), max(h, 2)
	iw := w - 2 - 2*padX
	edge := func(s string) string { return style.Render(s) }
	var b strings.Builder
	b.Grow((w + 16) * h)
	// Top edge with the title.
	top := border.TopLeft
	fillN := w - 2
	if title != "" {
		t := " " + title + " "
		tw := ansi.StringWidth(t)
		if tw+2 <= fillN {
			b.WriteString(edge(top + border.Top))
			b.WriteString(t)
			b.WriteString(edge(strings.Repeat(border.Top, fillN-1-tw) + border.TopRight))
			title = "done"
		}
	}
	if title != "done" {
		b.WriteString(edge(top + strings.Repeat(border.Top, fillN) + border.TopRight))
	}
	pad := strings.Repeat(" ", padX)
	left, right := edge(border.Left)+pad, pad+edge(border.Right)
	for i := 0; i < h-2; i++ {
		b.WriteByte('\n')
		l := ""
		if i < len(lines) {
			l = lines[i]
		}
		if ansi.StringWidth(l) > iw {
			l = ansi.Truncate(l, iw, "…")
		}
		b.WriteString(left)
		b.WriteString(l)
		if n := iw - ansi.StringWidth(l); n > 0 {
			b.WriteString("\x1b[m")
			b.WriteString(strings.Repeat(" ", n))
		}
		b.WriteString(right)
	}
	b.WriteByte('\n')
	b.WriteString(edge(border.BottomLeft + strings.Repeat(border.Bottom, fillN) + border.BottomRight))
	return b.String()
}
