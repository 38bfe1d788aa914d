package fs

import (
	"os"
	"strings"
	"testing"

	"staage/textdiff"
	"staage/tools"
	"staage/tools/workspace"
)

func digestOf(s string) string { return workspace.Digest([]byte(s)) }

func TestEditReplacesAndReports(t *testing.T) {
	const src = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"
	h := newHarness(t, map[string]string{"main.go": src})
	if err := os.Chmod(h.path("main.go"), 0o755); err != nil {
		t.Fatal(err)
	}
	read := ok[ReadPayload](h, "file_read", map[string]any{"path": "main.go"})
	p := ok[EditPayload](h, "file_edit", map[string]any{
		"path": "main.go", "digest": read.Digest, "old": `println("hi")`, "new": `println("hello")`,
	})
	want := strings.Replace(src, "hi", "hello", 1)
	if got := h.read("main.go"); got != want {
		t.Fatalf("file = %q", got)
	}
	if p.Digest != digestOf(want) || p.PreviousDigest != read.Digest || p.Replacements != 1 {
		t.Fatalf("payload %+v", p)
	}
	files, err := textdiff.Parse(p.Diff)
	if err != nil || len(files) != 1 {
		t.Fatalf("diff %q: %v", p.Diff, err)
	}
	if a, d := files[0].Stats(); a != 1 || d != 1 {
		t.Fatalf("diff stats +%d -%d", a, d)
	}
	if fi, _ := os.Stat(h.path("main.go")); fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode %v not kept", fi.Mode())
	}
	// The new digest is the one to cite next.
	ok[EditPayload](h, "file_edit", map[string]any{"path": "main.go", "digest": p.Digest, "old": "hello", "new": "bye"})
}

func TestEditRefusals(t *testing.T) {
	const src = "a\nb\na\n"
	h := newHarness(t, map[string]string{"f.txt": src, "bin": "x\x00y"})
	d := digestOf(src)
	tests := []struct {
		name string
		args map[string]any
		want tools.RefusalName
	}{
		{"stale", map[string]any{"path": "f.txt", "digest": digestOf("other"), "old": "b", "new": "c"}, tools.FileStale},
		{"no match", map[string]any{"path": "f.txt", "digest": d, "old": "zzz", "new": "c"}, tools.FileMissing},
		{"no file", map[string]any{"path": "nope.txt", "digest": d, "old": "a", "new": "c"}, tools.FileMissing},
		{"ambiguous", map[string]any{"path": "f.txt", "digest": d, "old": "a", "new": "c"}, tools.FileAmbiguous},
		{"binary", map[string]any{"path": "bin", "digest": digestOf("x\x00y"), "old": "x", "new": "z"}, tools.FileBinary},
		{"escape", map[string]any{"path": "../f.txt", "digest": d, "old": "a", "new": "c"}, tools.PathEscape},
		{"bad digest", map[string]any{"path": "f.txt", "digest": "abc", "old": "a", "new": "c"}, tools.ArgsInvalid},
		{"empty old", map[string]any{"path": "f.txt", "digest": d, "old": "", "new": "c"}, tools.ArgsInvalid},
		{"same", map[string]any{"path": "f.txt", "digest": d, "old": "b", "new": "b"}, tools.ArgsInvalid},
		{"no digest", map[string]any{"path": "f.txt", "old": "b", "new": "c"}, tools.ArgsInvalid},
		{"extra key", map[string]any{"path": "f.txt", "digest": d, "old": "b", "new": "c", "force": true}, tools.ArgsInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.refused("file_edit", tt.args, tt.want)
			if tt.want == tools.FileAmbiguous && r.Details["count"] != 2 {
				t.Fatalf("details %+v", r.Details)
			}
			if tt.want == tools.FileStale && r.Details["digest"] != d {
				t.Fatalf("stale refusal does not carry the current digest: %+v", r.Details)
			}
		})
	}
	if h.read("f.txt") != src {
		t.Fatal("a refused edit changed the file")
	}
	near := h.refused("file_edit", map[string]any{"path": "f.txt", "digest": d, "old": "  b\nx", "new": "c"}, tools.FileMissing)
	if lines, _ := near.Details["nearLines"].([]int); len(lines) != 1 || lines[0] != 2 {
		t.Fatalf("near-miss hint %+v", near.Details)
	}
	p := ok[EditPayload](h, "file_edit", map[string]any{"path": "f.txt", "digest": d, "old": "a", "new": "c", "replaceAll": true})
	if p.Replacements != 2 || h.read("f.txt") != "c\nb\nc\n" {
		t.Fatalf("replaceAll: %+v %q", p, h.read("f.txt"))
	}
}

func TestEditKeepsCRLFAndMissingFinalNewline(t *testing.T) {
	const src = "one\r\ntwo\r\nthree"
	h := newHarness(t, map[string]string{"w.txt": src, "mixed.txt": "lf\ncr one\r\ncr two\r\n"})
	ok[EditPayload](h, "file_edit", map[string]any{"path": "w.txt", "digest": digestOf(src), "old": "one\ntwo", "new": "1\n2\n2.5"})
	if got := h.read("w.txt"); got != "1\r\n2\r\n2.5\r\nthree" {
		t.Fatalf("crlf edit = %q", got)
	}
	ok[EditPayload](h, "file_edit", map[string]any{"path": "w.txt", "digest": digestOf("1\r\n2\r\n2.5\r\nthree"), "old": "three", "new": "3"})
	if got := h.read("w.txt"); got != "1\r\n2\r\n2.5\r\n3" {
		t.Fatalf("final line edit = %q", got)
	}
	// In a mixed file, a multi-line old written with LF finds the CRLF
	// stretch and keeps it CRLF.
	mixed := h.read("mixed.txt")
	ok[EditPayload](h, "file_edit", map[string]any{"path": "mixed.txt", "digest": digestOf(mixed), "old": "cr one\ncr two", "new": "cr 1\ncr 2"})
	if got := h.read("mixed.txt"); got != "lf\ncr 1\r\ncr 2\r\n" {
		t.Fatalf("mixed edit = %q", got)
	}
}

// TestEditPreviewIsWhatRuns: the preview is computed without writing; a run
// after it writes exactly the previewed text; a change in between is stale.
func TestEditPreviewIsWhatRuns(t *testing.T) {
	const src = "alpha\nbeta\ngamma\n"
	h := newHarness(t, map[string]string{"g.txt": src})
	args := map[string]any{"path": "g.txt", "digest": digestOf(src), "old": "beta", "new": "BETA"}
	pv, err := h.preview("file_edit", args)
	if err != nil {
		t.Fatal(err)
	}
	f := pv.Files[0]
	if f.Path != "g.txt" || f.Op != tools.FileModify || f.Old != src || f.New != "alpha\nBETA\ngamma\n" || f.Digest != digestOf(src) {
		t.Fatalf("preview %+v", f)
	}
	if f.Unified != textdiff.Unified("g.txt", "g.txt", f.Old, f.New, 3) {
		t.Fatalf("preview diff %q", f.Unified)
	}
	if h.read("g.txt") != src {
		t.Fatal("preview wrote the file")
	}
	p := ok[EditPayload](h, "file_edit", args)
	if h.read("g.txt") != f.New || p.Diff != f.Unified {
		t.Fatal("the run wrote something other than the preview")
	}

	// Preview, then someone changes the file, then the approved call runs.
	h.write("g.txt", src)
	if _, err := h.preview("file_edit", args); err != nil {
		t.Fatal(err)
	}
	h.write("g.txt", "alpha\nbeta\ngamma\ndelta\n")
	h.refused("file_edit", args, tools.FileStale)
	if h.read("g.txt") != "alpha\nbeta\ngamma\ndelta\n" {
		t.Fatal("stale run wrote")
	}
	// Preview refuses as the run would.
	if _, err := h.preview("file_edit", args); refusalOf(err) != tools.FileStale {
		t.Fatalf("stale preview: %v", err)
	}
}

func TestReplaceHelpers(t *testing.T) {
	if got := string(toCRLF([]byte("a\nb\r\nc"))); got != "a\r\nb\r\nc" {
		t.Fatalf("toCRLF %q", got)
	}
	if got := matchLines([]byte("x\nab\nab ab\n"), []byte("ab"), 10); len(got) != 3 || got[0] != 2 || got[2] != 3 {
		t.Fatalf("matchLines %v", got)
	}
}
