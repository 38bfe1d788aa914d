// Package markdown renders sanitized markdown for the console's panes with
// glamour, caching one renderer per width (building one costs far more than
// rendering a short message).
package markdown

import (
	"fmt"
	"image/color"
	"regexp"
	"strings"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"

	"staage/themes"
	"staage/ui/sanitize"
)

// Renderer renders markdown at a given width. It is not safe for concurrent
// use: the console calls it from its event loop only.
type Renderer struct {
	style   ansi.StyleConfig
	byWidth map[int]*glamour.TermRenderer
}

// New returns a renderer whose style follows the palette (NO_COLOR renders
// without colour).
func New(p themes.Palette) *Renderer {
	var st ansi.StyleConfig
	switch {
	case !p.Colored():
		st = styles.NoTTYStyleConfig
	case p.IsDark:
		st = styles.DarkStyleConfig
	default:
		st = styles.LightStyleConfig
	}
	zero := uint(0)
	// The panes draw their own frame; glamour's document margin would
	// only waste two columns on each side.
	st.Document.Margin = &zero
	st.Document.BlockPrefix = ""
	st.Document.BlockSuffix = ""
	if p.Colored() {
		// Code blocks use the palette's syntax colours, like diffs do.
		st.CodeBlock.Chroma = codeColours(p)
	}
	return &Renderer{style: st, byWidth: map[int]*glamour.TermRenderer{}}
}

// Render sanitizes md, renders it at width and returns its lines without
// leading or trailing blank lines. A rendering failure falls back to the
// sanitized text: the operator must see what the model said.
func (r *Renderer) Render(md string, width int) []string {
	if width < 8 {
		width = 8
	}
	md = sanitize.Text(md)
	tr := r.byWidth[width]
	if tr == nil {
		var err error
		tr, err = glamour.NewTermRenderer(glamour.WithStyles(r.style), glamour.WithWordWrap(width),
			// Full colour: the program downsamples to what the terminal has.
			glamour.WithChromaFormatter("terminal16m"))
		if err != nil {
			return plain(md)
		}
		r.byWidth[width] = tr
	}
	out, err := tr.Render(md)
	if err != nil {
		return plain(md)
	}
	lines := strings.Split(out, "\n")
	for i := range lines {
		lines[i] = trimStyledRight(lines[i])
	}
	return trimBlank(lines)
}

func plain(s string) []string { return trimBlank(strings.Split(s, "\n")) }

func trimBlank(lines []string) []string {
	isBlank := func(s string) bool { return strings.TrimSpace(stripSGR(s)) == "" }
	for len(lines) > 0 && isBlank(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && isBlank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// stripSGR removes glamour's own styling to test a line for blankness.
func stripSGR(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	return sanitize.Text(s)
}

// trailingPad matches the styled spaces glamour pads every line with.
var trailingPad = regexp.MustCompile(`(?:\x1b\[[0-9;]*m|[ \x{00a0}])+$`)

// trimStyledRight drops trailing padding (it only costs bytes and cell
// diffs) and closes any style left open.
func trimStyledRight(s string) string {
	t := trailingPad.ReplaceAllString(s, "")
	if strings.Contains(t, "\x1b") {
		t += "\x1b[m"
	}
	return t
}

// codeColours is the palette's syntax colours in glamour's terms.
func codeColours(p themes.Palette) *ansi.Chroma {
	c := func(col color.Color) ansi.StylePrimitive {
		if col == nil {
			return ansi.StylePrimitive{}
		}
		r, g, b, _ := col.RGBA()
		h := fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
		return ansi.StylePrimitive{Color: &h}
	}
	return &ansi.Chroma{
		Text: c(p.Fg), Comment: c(p.Comment), CommentPreproc: c(p.Keyword),
		Keyword: c(p.Keyword), KeywordReserved: c(p.Keyword), KeywordNamespace: c(p.Keyword), KeywordType: c(p.Type),
		Operator: c(p.Punct), Punctuation: c(p.Punct), Name: c(p.Fg), NameBuiltin: c(p.Func),
		NameTag: c(p.Keyword), NameAttribute: c(p.Func), NameClass: c(p.Type), NameConstant: c(p.Number),
		NameDecorator: c(p.Func), NameFunction: c(p.Func), Literal: c(p.String), LiteralNumber: c(p.Number),
		LiteralString: c(p.String), LiteralStringEscape: c(p.Number), GenericDeleted: c(p.Del),
		GenericInserted: c(p.Add), Error: c(p.Error),
	}
}
