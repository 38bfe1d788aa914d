package themes

import (
	"fmt"
	"image/color"

	"github.com/alecthomas/chroma/v2"
)

// ChromaStyle derives the syntax style from the palette, so code in a diff
// uses the same colours as the rest of the console. NO_COLOR gives a style
// with no colour entries.
func (p Palette) ChromaStyle() *chroma.Style {
	e := chroma.StyleEntries{}
	set := func(tt chroma.TokenType, c color.Color, extra string) {
		if c == nil {
			if extra != "" {
				e[tt] = extra
			}
			return
		}
		v := hex(c)
		if extra != "" {
			v = extra + " " + v
		}
		e[tt] = v
	}
	set(chroma.Text, p.Fg, "")
	set(chroma.Keyword, p.Keyword, "")
	set(chroma.KeywordType, p.Type, "")
	set(chroma.NameFunction, p.Func, "")
	set(chroma.NameBuiltin, p.Func, "")
	set(chroma.NameClass, p.Type, "")
	set(chroma.LiteralString, p.String, "")
	set(chroma.LiteralNumber, p.Number, "")
	set(chroma.Comment, p.Comment, "italic")
	set(chroma.Operator, p.Punct, "")
	set(chroma.Punctuation, p.Punct, "")
	set(chroma.GenericInserted, p.Add, "")
	set(chroma.GenericDeleted, p.Del, "")
	st, err := chroma.NewStyle("staage-"+p.Name, e)
	if err != nil {
		// The entries above are built from valid hex colours; an error
		// here is a programming mistake, so fall back to no colour.
		return chroma.MustNewStyle("staage-plain", chroma.StyleEntries{})
	}
	return st
}

func hex(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}
