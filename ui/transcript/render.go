package transcript

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// gutter is the column left of every item: a bar marks the selection.
const gutter = 2

type anchor struct{ idx, off int }

// lines returns item i rendered at the current width, from the cache when
// it is valid.
func (t *Transcript) lines(i int) []string {
	it := t.items[i]
	w := t.width - gutter
	if it.cacheOK && it.cacheW == w {
		return it.rendered
	}
	it.rendered = t.render(it, max(w, 4))
	it.cacheW, it.cacheOK = w, true
	t.renders++
	return it.rendered
}

// windowStart is the first visible line: computed from the bottom while
// following, else the stored anchor.
func (t *Transcript) windowStart() (anchor, bool) {
	if !t.follow {
		return anchor{t.topIdx, t.topOff}, false
	}
	rows := 0
	for j := len(t.items) - 1; j >= 0; j-- {
		n := len(t.lines(j))
		if rows+n >= t.height {
			return anchor{j, rows + n - t.height}, true
		}
		rows += n
	}
	return anchor{0, 0}, true
}

// View renders exactly the window: height lines, each at most width cells.
func (t *Transcript) View() string {
	out := make([]string, 0, t.height)
	start, _ := t.windowStart()
	for j := start.idx; j < len(t.items) && len(out) < t.height; j++ {
		ls := t.lines(j)
		if j == start.idx {
			ls = ls[min(start.off, len(ls)):]
		}
		bar := "  "
		if j == t.selected {
			bar = t.theme.Selected.Render("▌") + " "
		}
		for _, l := range ls {
			if len(out) == t.height {
				break
			}
			if l == "" {
				out = append(out, "")
				continue
			}
			out = append(out, bar+l)
		}
	}
	for len(out) < t.height {
		out = append(out, "")
	}
	if t.unseen && !t.follow && t.height > 2 {
		out[t.height-1] = ansi.Truncate(t.theme.Warn.Render("  ↓ new below · pgdn or G to follow"), t.width, "…")
	}
	return strings.Join(out, "\n")
}

// Following reports whether the view sticks to the newest line.
func (t *Transcript) Following() bool { return t.follow }

// Scroll moves the window by n lines (negative is up). Scrolling to the
// bottom resumes following.
func (t *Transcript) Scroll(n int) {
	if len(t.items) == 0 || n == 0 {
		return
	}
	a, _ := t.windowStart()
	a.off += n
	for a.off < 0 && a.idx > 0 {
		a.idx--
		a.off += len(t.lines(a.idx))
	}
	if a.off < 0 {
		a.off = 0
	}
	for a.idx < len(t.items)-1 && a.off >= len(t.lines(a.idx)) {
		a.off -= len(t.lines(a.idx))
		a.idx++
	}
	t.follow = false
	t.topIdx, t.topOff = a.idx, a.off
	t.clampBottom()
}

// ScrollToBottom resumes following.
func (t *Transcript) ScrollToBottom() { t.follow, t.unseen = true, false }

// ScrollToTop shows the first line.
func (t *Transcript) ScrollToTop() {
	t.follow = false
	t.topIdx, t.topOff = 0, 0
	t.clampBottom()
}

// clampBottom switches to following when fewer than a window of lines is
// left below the anchor, so the view never shows blank space at the end.
func (t *Transcript) clampBottom() {
	rows := -t.topOff
	for j := t.topIdx; j < len(t.items); j++ {
		rows += len(t.lines(j))
		if rows > t.height {
			return
		}
	}
	t.follow, t.unseen = true, false
}

func (t *Transcript) render(it *Item, w int) []string {
	var ls []string
	switch it.Kind {
	case KindUser:
		ls = append(ls, t.theme.UserLabel.Render("› you"))
		ls = append(ls, wrap(it.Text, w)...)
	case KindAssistant:
		ls = it.blocks.Render(t.md, it.Text, w)
		if it.Streaming {
			ls = append(ls, t.theme.Muted.Render("…"))
		}
	case KindThinking:
		text := wrap(it.Text, w-2)
		if !it.Expanded && len(text) > 3 {
			text = append(text[:3:3], "… ("+itoa(len(text)-3)+" more lines, ctrl+o)")
		}
		ls = append(ls, t.theme.Thinking.Render("✻ thinking"))
		for _, l := range text {
			ls = append(ls, t.theme.Thinking.Render("  "+l))
		}
	case KindTool:
		ls = t.renderTool(it, w)
	case KindNotice:
		style, glyph := t.theme.Muted, "·"
		switch it.Level {
		case LevelWarn:
			style, glyph = t.theme.Warn, "⚠"
		case LevelError:
			style, glyph = t.theme.Error, "✗"
		}
		for i, l := range wrap(it.Text, w-2) {
			if i == 0 {
				ls = append(ls, style.Render(glyph+" "+l))
			} else {
				ls = append(ls, style.Render("  "+l))
			}
		}
	}
	return append(ls, "")
}

func (t *Transcript) renderTool(it *Item, w int) []string {
	tc := it.Tool
	th := t.theme
	glyph, gs := "○", th.Muted
	switch tc.Status {
	case ToolAwaiting:
		glyph, gs = "?", th.Warn
	case ToolRunning:
		glyph, gs = "●", th.Accent
	case ToolOK:
		glyph, gs = "✓", th.OK
	case ToolRefused:
		glyph, gs = "✗", th.Error
	}
	head := gs.Render(glyph) + " " + th.Bold.Render(tc.Name) + " " + th.Badge(tc.Effect)
	if tc.Digest != "" {
		head += " " + th.Muted.Render(tc.Digest)
	}
	if tc.KeyArg != "" {
		head += " " + th.Text.Render(tc.KeyArg)
	}
	ls := []string{ansi.Truncate(head, w, "…")}

	var tail []string
	if tc.Decision != "" {
		tail = append(tail, tc.Decision)
	}
	if tc.Edited {
		tail = append(tail, "edited by operator")
	}
	switch tc.Status {
	case ToolOK:
		tail = append(tail, th.OK.Render("ok"))
	case ToolRefused:
		tail = append(tail, th.Error.Render(tc.Refusal))
	case ToolRunning:
		tail = append(tail, th.Accent.Render("running…"))
	case ToolAwaiting:
		tail = append(tail, th.Warn.Render("awaiting approval"))
	}
	for _, b := range tc.Bounds {
		tail = append(tail, th.Warn.Render(b))
	}
	if len(tail) > 0 {
		ls = append(ls, ansi.Truncate(th.Muted.Render("  └ ")+strings.Join(tail, th.Muted.Render(" · ")), w, "…"))
	}
	if tc.Status == ToolRefused && tc.Message != "" {
		msg := wrap(tc.Message, w-4)
		if !it.Expanded && len(msg) > 2 {
			msg = append(msg[:2:2], "…")
		}
		for _, l := range msg {
			ls = append(ls, th.Muted.Render("    "+l))
		}
	}
	if it.Expanded {
		ls = append(ls, th.Muted.Render("    arguments"))
		for _, l := range wrap(tc.Args(), w-4) {
			ls = append(ls, "    "+l)
		}
		if p := tc.Payload(); p != "" {
			ls = append(ls, th.Muted.Render("    result"))
			for _, l := range wrap(p, w-4) {
				ls = append(ls, "    "+l)
			}
		}
	}
	return ls
}

// wrap hard-wraps plain text to w cells (words where possible).
func wrap(s string, w int) []string {
	if w < 1 {
		w = 1
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		if ansi.StringWidth(para) <= w {
			out = append(out, para)
			continue
		}
		out = append(out, strings.Split(lipgloss.Wrap(para, w, " "), "\n")...)
	}
	return out
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
