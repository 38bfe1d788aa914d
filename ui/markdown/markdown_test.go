package markdown

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"staage/themes"
)

func TestSplitKeepsFencesWhole(t *testing.T) {
	md := "# Title\n\npara one\nstill one\n\n```go\nfunc a() {\n\n}\n```\n\n- a\n- b\n\n\n1. x"
	got := Split(md)
	want := []string{"# Title", "para one\nstill one", "```go\nfunc a() {\n\n}\n```", "- a\n- b", "1. x"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Split = %q", got)
	}
}

func TestBlocksMatchWholeRendering(t *testing.T) {
	r := New(themes.DarkPalette())
	md := "# Title\n\nSome **bold** text.\n\n```go\nx := 1\n```\n\n- one\n- two"
	var b Blocks
	got := strings.Join(b.Render(r, md, 60), "\n")
	want := strings.Join(r.Render(md, 60), "\n")
	if ansi.Strip(got) != ansi.Strip(want) {
		t.Fatalf("blockwise:\n%s\nwhole:\n%s", ansi.Strip(got), ansi.Strip(want))
	}
}

func TestBlocksReuseUnchangedBlocks(t *testing.T) {
	r := New(themes.DarkPalette())
	var b Blocks
	b.Render(r, "first\n\nsecond", 40)
	first := b.outs[0]
	b.Render(r, "first\n\nsecond and more", 40)
	if &b.outs[0][0] != &first[0] {
		t.Fatal("an unchanged block was rendered again")
	}
}

func TestRenderSanitizes(t *testing.T) {
	r := New(themes.DarkPalette())
	out := strings.Join(r.Render("hi \x1b]52;c;eA==\x07 \u202e", 40), "\n")
	if strings.Contains(out, "\x1b]52") || strings.Contains(out, "\u202e") {
		t.Fatalf("unsafe output %q", out)
	}
}

func TestCodeBlocksUseThePalette(t *testing.T) {
	p := themes.DarkPalette()
	out := strings.Join(New(p).Render("```go\nfunc main() {}\n```", 60), "\n")
	r, g, b, _ := p.Keyword.RGBA()
	want := fmt.Sprintf("38;2;%d;%d;%d", r>>8, g>>8, b>>8)
	if !strings.Contains(out, want) {
		t.Fatalf("keyword not in the palette's colour %s: %q", want, out)
	}
}
