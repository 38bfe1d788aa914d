package diffview

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"staage/textdiff"
	"staage/themes"
	"staage/tools"
)

func newView(p themes.Palette, files ...tools.FileDiff) *View {
	v := New(themes.New(p), NewHighlighter(p), tools.DiffPreview{Files: files})
	v.SetSize(100, 20)
	return v
}

func plain(s string) string { return ansi.Strip(s) }

func TestUnifiedFromOldNewAndFromUnifiedAgree(t *testing.T) {
	old := "a\nb\nc\nd\n"
	nw := "a\nB\nc\nd\ne\n"
	computed := newView(themes.DarkPalette(), tools.FileDiff{Path: "x.txt", Op: tools.FileModify, Old: old, New: nw})
	parsed := newView(themes.DarkPalette(), tools.FileDiff{Path: "x.txt", Op: tools.FileModify, Old: old, New: nw,
		Unified: textdiff.Unified("x.txt", "x.txt", old, nw, 3)})
	if computed.View() != parsed.View() {
		t.Fatalf("computed and parsed differ:\n%s\n---\n%s", plain(computed.View()), plain(parsed.View()))
	}
	f := computed.File(0)
	if f.Added != 2 || f.Deleted != 1 {
		t.Fatalf("stats +%d -%d", f.Added, f.Deleted)
	}
}

func TestSplitPairsDeletesWithAdds(t *testing.T) {
	v := newView(themes.NoColorPalette(), tools.FileDiff{Path: "x.go", Op: tools.FileModify, Old: "one\ntwo\nkeep\n", New: "ONE\nkeep\nnew\n"})
	v.ToggleSplit()
	out := plain(v.View())
	if !strings.Contains(out, "1-one") || !strings.Contains(out, "1+ONE") {
		t.Fatalf("a changed line is not shown beside its replacement:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "2-two") && strings.Contains(l, "+") {
			t.Fatalf("an unpaired delete has something beside it: %q", l)
		}
	}
}

func TestLinesAreSanitized(t *testing.T) {
	v := newView(themes.DarkPalette(), tools.FileDiff{Path: "evil\x1b]0;t\x07.go", Op: tools.FileModify, Old: "x\n", New: "y\x1b[2J\u202e\n"})
	out := v.View()
	for _, bad := range []string{"\x1b]0;", "\x1b[2J", "\u202e"} {
		if strings.Contains(out, bad) {
			t.Fatalf("%q in the diff view", bad)
		}
	}
}

func bigFile(n int) tools.FileDiff {
	var old, nw strings.Builder
	for i := 0; i < n; i++ {
		l := fmt.Sprintf("\tv%d := f(%d)\n", i, i)
		old.WriteString(l)
		if i%100 == 50 {
			l = fmt.Sprintf("\tv%d := g(%d)\n", i, i)
		}
		nw.WriteString(l)
	}
	return tools.FileDiff{Path: "big.go", Op: tools.FileModify, Old: old.String(), New: nw.String()}
}

// TestHighlightOnlyVisibleLines: the highlight job covers what is on
// screen, never the whole file, and its result is reused.
func TestHighlightOnlyVisibleLines(t *testing.T) {
	v := newView(themes.DarkPalette(), bigFile(5000))
	cmd := v.HighlightCmd()
	if cmd == nil {
		t.Fatal("no highlight job for visible lines")
	}
	msg := cmd().(HighlightedMsg)
	if n := len(msg.Result.Lines); n == 0 || n > 19 {
		t.Fatalf("highlighted %d lines for a 19-row window", n)
	}
	if msg.Result.Lexer != "Go" {
		t.Fatalf("lexer %q for a .go file", msg.Result.Lexer)
	}
	before := v.View()
	v.Update(msg)
	if v.View() == before {
		t.Fatal("merged highlighting did not change the view")
	}
	if v.HighlightCmd() != nil {
		t.Fatal("cached lines were highlighted again")
	}
	v.Page(1)
	if v.HighlightCmd() == nil {
		t.Fatal("new visible lines were not highlighted")
	}
}

func TestNoColorSkipsHighlighting(t *testing.T) {
	v := newView(themes.NoColorPalette(), bigFile(100))
	if v.HighlightCmd() != nil {
		t.Fatal("highlighting under NO_COLOR")
	}
}

func TestScrollClampsAndFilesCycle(t *testing.T) {
	v := newView(themes.DarkPalette(), bigFile(5000), tools.FileDiff{Path: "b.md", Op: tools.FileCreate, New: "# b\n"})
	v.Scroll(1 << 20)
	if v.offset != v.Rows()-v.bodyH() {
		t.Fatalf("offset %d not clamped to %d", v.offset, v.Rows()-v.bodyH())
	}
	v.Scroll(-1 << 20)
	if v.offset != 0 {
		t.Fatal("offset below zero")
	}
	v.NextFile(1)
	if v.Current() != 1 || !strings.Contains(plain(v.View()), "b.md (create)") {
		t.Fatal("] did not move to the second file")
	}
	v.NextFile(1)
	if v.Current() != 0 {
		t.Fatal("files do not cycle")
	}
}

func BenchmarkDiffOpen5000(b *testing.B) {
	fd := bigFile(5000)
	th, hl := themes.New(themes.DarkPalette()), NewHighlighter(themes.DarkPalette())
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		v := New(th, hl, tools.DiffPreview{Files: []tools.FileDiff{fd}})
		v.SetSize(116, 30)
		_ = v.View()
	}
}

func BenchmarkHighlightWindow(b *testing.B) {
	fd := bigFile(5000)
	p := themes.DarkPalette()
	th := themes.New(p)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		v := New(th, NewHighlighter(p), tools.DiffPreview{Files: []tools.FileDiff{fd}})
		v.SetSize(116, 30)
		v.Update(v.HighlightCmd()().(HighlightedMsg))
	}
}

var _ tea.Msg = HighlightedMsg{}
