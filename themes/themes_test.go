package themes

import (
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"

	"staage/tools"
)

func TestSelect(t *testing.T) {
	cases := []struct {
		env  Env
		want string
	}{
		{Env{DarkBackground: true}, Dark},
		{Env{DarkBackground: false}, Light},
		{Env{Override: HighContrast}, HighContrast},
		{Env{Override: Light, DarkBackground: true}, Light},
		{Env{NoColor: "1", Override: Dark}, NoColor},
		{Env{Override: "bogus", DarkBackground: true}, Dark},
	}
	for _, c := range cases {
		if got := Select(c.env).Name; got != c.want {
			t.Errorf("Select(%+v) = %s, want %s", c.env, got, c.want)
		}
	}
}

func TestEffectColoursDistinctInEveryPalette(t *testing.T) {
	for _, p := range []Palette{DarkPalette(), LightPalette(), HighContrastPalette()} {
		seen := map[string]tools.EffectClass{}
		for _, e := range tools.EffectClasses() {
			h := hex(p.EffectColor(e))
			if prev, ok := seen[h]; ok {
				t.Errorf("%s: %s and %s share %s", p.Name, prev, e, h)
			}
			seen[h] = e
		}
		if hex(p.EffectColor("bogus")) != hex(p.EffectIrrev) {
			t.Errorf("%s: an unknown class is not drawn as irreversible", p.Name)
		}
	}
}

func TestNoColorBadgeIsText(t *testing.T) {
	th := New(NoColorPalette())
	b := th.Badge(tools.EffectReversible)
	if b != "[reversible]" {
		t.Fatalf("badge = %q", b)
	}
	if s := th.Text.Render("x"); strings.Contains(s, "\x1b[3") || strings.Contains(s, "\x1b[38") {
		t.Fatalf("NO_COLOR text has colour: %q", s)
	}
}

func TestChromaStyleFollowsPalette(t *testing.T) {
	p := DarkPalette()
	st := p.ChromaStyle()
	if got := st.Get(chroma.Keyword).Colour.String(); got != hex(p.Keyword) {
		t.Fatalf("keyword colour %s, palette says %s", got, hex(p.Keyword))
	}
	if st := NoColorPalette().ChromaStyle(); st.Get(chroma.Keyword).Colour.IsSet() {
		t.Fatal("NO_COLOR chroma style has colours")
	}
}

func TestBoxIsExactSize(t *testing.T) {
	th := New(DarkPalette())
	out := Box(th.Pane.GetBorderStyle(), th.Muted, "TITLE", []string{"a very long line that will not fit in the box at all", "b"}, 20, 5, 1)
	lines := strings.Split(out, "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if w := lipglossWidth(l); w != 20 {
			t.Fatalf("line %q is %d wide", l, w)
		}
	}
}
