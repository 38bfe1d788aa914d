package textdiff

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

type diffCase struct {
	name     string
	old, new string
}

func cases() []diffCase {
	var long []string
	for i := range 40 {
		long = append(long, fmt.Sprintf("line %d\n", i))
	}
	longOld := strings.Join(long, "")
	edited := append([]string(nil), long...)
	edited[2] = "changed 2\n"
	edited[30] = "changed 30\n"
	edited = append(edited[:20], append([]string{"inserted\n"}, edited[20:]...)...)
	return []diffCase{
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n"},
		{"create", "", "new\nfile\n"},
		{"delete all", "gone\nlines\n", ""},
		{"append", "a\nb\n", "a\nb\nc\nd\n"},
		{"prepend", "b\nc\n", "a\nb\nc\n"},
		{"insert in middle", "a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nd\nX\ne\nf\ng\nh\n"},
		{"delete in middle", "a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\ne\nf\ng\nh\n"},
		{"two hunks", longOld, strings.Join(edited, "")},
		{"no final newline kept", "a\nb\nc", "a\nB\nc"},
		{"no final newline on last change", "a\nb\nc", "a\nb\nC"},
		{"newline added at end", "a\nb", "a\nb\n"},
		{"newline removed at end", "a\nb\n", "a\nb"},
		{"crlf", "one\r\ntwo\r\nthree\r\n", "one\r\nTWO\r\nthree\r\n"},
		{"crlf no final newline", "one\r\ntwo\r\nthree", "one\r\ntwo\r\nthree!"},
		{"crlf to lf", "one\r\ntwo\r\n", "one\ntwo\n"},
		{"single line no newline", "x", "y"},
		{"blank lines", "\n\n\na\n\n\n", "\n\nb\n\n\n\n"},
		{"unicode", "héllo\n世界\n", "héllo\n世界!\n🙂\n"},
	}
}

// TestUnifiedPatchRoundTrip applies every diff with the real GNU patch and
// checks the result is the new text byte for byte.
func TestUnifiedPatchRoundTrip(t *testing.T) {
	patchBin, err := exec.LookPath("patch")
	if err != nil {
		t.Skip("GNU patch not installed")
	}
	for _, c := range cases() {
		for _, ctx := range []int{0, 1, 3} {
			t.Run(fmt.Sprintf("%s/ctx%d", c.name, ctx), func(t *testing.T) {
				dir := t.TempDir()
				target := filepath.Join(dir, "f.txt")
				if err := os.WriteFile(target, []byte(c.old), 0o644); err != nil {
					t.Fatal(err)
				}
				d := Unified("f.txt", "f.txt", c.old, c.new, ctx)
				if d == "" {
					t.Fatal("empty diff for different texts")
				}
				args := []string{"-p1", "--batch", "--no-backup-if-mismatch", "-s", "-i", "-"}
				if ctx == 0 {
					// Without context GNU patch must not guess.
					args = append([]string{"--fuzz=0"}, args...)
				}
				cmd := exec.Command(patchBin, args...)
				cmd.Dir = dir
				cmd.Stdin = strings.NewReader(d)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("patch failed: %v\n%s\ndiff:\n%s", err, out, d)
				}
				got, err := os.ReadFile(target)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != c.new {
					t.Fatalf("patched text differs\n got %q\nwant %q\ndiff:\n%s", got, c.new, d)
				}
			})
		}
	}
}

// TestUnifiedGolden pins the exact text for a few shapes.
func TestUnifiedGolden(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"modify", "a\nb\nc\n", "a\nB\nc\n",
			"--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"create", "", "n\n",
			"--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+n\n"},
		{"no newline", "a\nb", "a\nc",
			"--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"pure insert ctx0", "a\nb\n", "a\nX\nb\n",
			"--- a/x\n+++ b/x\n@@ -1,0 +2 @@\n+X\n"},
		{"equal", "same\n", "same\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldPath := "x"
			if tt.old == "" {
				oldPath = DevNull
			}
			ctx := 3
			if strings.Contains(tt.name, "ctx0") {
				ctx = 0
			}
			got := Unified(oldPath, "x", tt.old, tt.new, ctx)
			if got != tt.want {
				t.Fatalf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestParseReconstructs parses a whole-file diff and rebuilds both texts
// from the typed lines, which checks kinds, line numbers and terminators.
func TestParseReconstructs(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			d := Unified("f", "f", c.old, c.new, 1<<20)
			files, err := Parse(d)
			if err != nil {
				t.Fatalf("parse: %v\n%s", err, d)
			}
			if len(files) != 1 || len(files[0].Hunks) != 1 {
				t.Fatalf("want one file with one hunk, got %+v", files)
			}
			f := files[0]
			if f.OldPath != "f" || f.NewPath != "f" {
				t.Fatalf("paths %q %q", f.OldPath, f.NewPath)
			}
			var oldB, newB strings.Builder
			wantOld, wantNew := 1, 1
			for _, l := range f.Hunks[0].Lines {
				if l.Kind != Add {
					if l.OldLine != wantOld {
						t.Fatalf("old line number %d, want %d (%+v)", l.OldLine, wantOld, l)
					}
					wantOld++
					oldB.WriteString(l.Text + l.EOL)
				}
				if l.Kind != Delete {
					if l.NewLine != wantNew {
						t.Fatalf("new line number %d, want %d (%+v)", l.NewLine, wantNew, l)
					}
					wantNew++
					newB.WriteString(l.Text + l.EOL)
				}
				if strings.ContainsAny(l.Text, "\n") {
					t.Fatalf("text carries a newline: %q", l.Text)
				}
			}
			if oldB.String() != c.old || newB.String() != c.new {
				t.Fatalf("rebuilt\n old %q\n new %q\nwant\n old %q\n new %q", oldB.String(), newB.String(), c.old, c.new)
			}
		})
	}
}

func TestParseHunkNumbers(t *testing.T) {
	d := "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\t2024-01-01\n+++ b/x\n@@ -10,3 +10,4 @@ func main() {\n ctx\n-old\n+new\n+more\n ctx2\n" +
		"--- /dev/null\n+++ b/y\n@@ -0,0 +1 @@\n+only\n"
	files, err := Parse(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("files = %d", len(files))
	}
	h := files[0].Hunks[0]
	if h.OldStart != 10 || h.OldLines != 3 || h.NewStart != 10 || h.NewLines != 4 || h.Section != "func main() {" {
		t.Fatalf("header %+v", h)
	}
	want := []Line{
		{Context, "ctx", "\n", 10, 10},
		{Delete, "old", "\n", 11, 0},
		{Add, "new", "\n", 0, 11},
		{Add, "more", "\n", 0, 12},
		{Context, "ctx2", "\n", 12, 13},
	}
	for i, l := range h.Lines {
		if l != want[i] {
			t.Fatalf("line %d = %+v, want %+v", i, l, want[i])
		}
	}
	if a, d := files[0].Stats(); a != 2 || d != 1 {
		t.Fatalf("stats %d %d", a, d)
	}
	if files[1].OldPath != DevNull || files[1].NewPath != "y" || files[1].Hunks[0].Lines[0].NewLine != 1 {
		t.Fatalf("second file %+v", files[1])
	}
}

func TestParseRejectsMalformed(t *testing.T) {
	bad := map[string]string{
		"short hunk":      "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n",
		"long hunk":       "--- a/x\n+++ b/x\n@@ -1 +1 @@\n a\n b\n-c\n",
		"bad header":      "--- a/x\n+++ b/x\n@@ -a +1 @@\n a\n",
		"no close":        "--- a/x\n+++ b/x\n@@ -1 +1\n a\n",
		"stray":           "--- a/x\n+++ b/x\n@@ -1 +1 @@\n?a\n",
		"orphan hunk":     "@@ -1 +1 @@\n a\n",
		"marker first":    "--- a/x\n+++ b/x\n@@ -1 +1 @@\n\\ No newline at end of file\n a\n",
		"negative range":  "--- a/x\n+++ b/x\n@@ --1 +1 @@\n a\n",
		"negative length": "--- a/x\n+++ b/x\n@@ -1,-1 +1 @@\n a\n",
	}
	for name, d := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse(d); err == nil {
				t.Fatalf("Parse accepted %q", d)
			}
		})
	}
}

// TestRandomEditsRoundTrip checks many random edits with GNU patch, since
// hunk merging has many edge cases.
func TestRandomEditsRoundTrip(t *testing.T) {
	patchBin, err := exec.LookPath("patch")
	if err != nil {
		t.Skip("GNU patch not installed")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for iter := range 40 {
		old := randomText(rng, 60)
		lines := splitLines(old)
		for range rng.IntN(8) + 1 {
			k := rng.IntN(len(lines) + 1)
			switch rng.IntN(3) {
			case 0:
				lines = append(lines[:k], append([]string{fmt.Sprintf("ins %d\n", rng.IntN(5))}, lines[k:]...)...)
			case 1:
				if k < len(lines) {
					lines = append(lines[:k], lines[k+1:]...)
				}
			default:
				if k < len(lines) {
					lines[k] = fmt.Sprintf("mod %d\n", rng.IntN(5))
				}
			}
		}
		nw := strings.Join(lines, "")
		if rng.IntN(4) == 0 {
			nw = strings.TrimSuffix(nw, "\n")
		}
		if nw == old {
			continue
		}
		ctx := rng.IntN(4)
		target := filepath.Join(dir, "f")
		if err := os.WriteFile(target, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		d := Unified("f", "f", old, nw, ctx)
		cmd := exec.Command(patchBin, "--fuzz=0", "-p1", "--batch", "--no-backup-if-mismatch", "-s", "-i", "-")
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(d)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("iter %d: patch failed: %v\n%s\n%s", iter, err, out, d)
		}
		got, _ := os.ReadFile(target)
		if string(got) != nw {
			t.Fatalf("iter %d ctx %d: patched text differs\n%s", iter, ctx, d)
		}
		if _, err := Parse(d); err != nil {
			t.Fatalf("iter %d: parse: %v", iter, err)
		}
	}
}

func randomText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		fmt.Fprintf(&b, "l%d\n", rng.IntN(10))
	}
	return b.String()
}

func FuzzParse(f *testing.F) {
	for _, c := range cases() {
		f.Add(Unified("f", "f", c.old, c.new, 3))
	}
	f.Add("--- a/x\n+++ b/x\n@@ -1 +1 @@\n\\\n")
	f.Fuzz(func(t *testing.T, s string) {
		files, err := Parse(s)
		if err != nil {
			return
		}
		for _, fh := range files {
			for _, h := range fh.Hunks {
				var o, n int
				for _, l := range h.Lines {
					if l.Kind != Add {
						o++
					}
					if l.Kind != Delete {
						n++
					}
				}
				if o != h.OldLines || n != h.NewLines {
					t.Fatalf("counts %d/%d vs header %d/%d", o, n, h.OldLines, h.NewLines)
				}
			}
		}
	})
}

func BenchmarkUnified5000Lines50Edits(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	var lines []string
	for i := range 5000 {
		lines = append(lines, fmt.Sprintf("func f%d() int { return %d }\n", i, rng.IntN(1000)))
	}
	old := strings.Join(lines, "")
	for range 50 {
		k := rng.IntN(len(lines))
		lines[k] = "// edited " + lines[k]
	}
	nw := strings.Join(lines, "")
	b.ReportAllocs()
	b.SetBytes(int64(len(old)))
	for b.Loop() {
		if Unified("f.go", "f.go", old, nw, 3) == "" {
			b.Fatal("empty")
		}
	}
}
