package fs

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"staage/tools"
	"staage/tools/workspace"
)

func TestReadFramesLines(t *testing.T) {
	h := newHarness(t, map[string]string{"a.txt": "one\ntwo\nthree\nfour\nfive\n"})
	p := ok[ReadPayload](h, "file_read", map[string]any{"path": "a.txt", "offset": 2, "limit": 2})
	if p.Content != "2\ttwo\n3\tthree\n" {
		t.Fatalf("content %q", p.Content)
	}
	if p.TotalLines != 5 || p.StartLine != 2 || p.EndLine != 3 || !p.Truncated || p.NextOffset != 4 || p.NextCursor != "4" {
		t.Fatalf("frame %+v", p)
	}
	if p.Digest != workspace.Digest([]byte("one\ntwo\nthree\nfour\nfive\n")) {
		t.Fatalf("digest %s is not of the whole file", p.Digest)
	}
	if p.EOL != "lf" || !p.FinalNewline {
		t.Fatalf("eol %s final %v", p.EOL, p.FinalNewline)
	}
	all := ok[ReadPayload](h, "file_read", map[string]any{"path": "a.txt"})
	if all.Truncated || all.EndLine != 5 || !strings.HasPrefix(all.Content, "1\tone\n") {
		t.Fatalf("whole read %+v", all)
	}
	past := ok[ReadPayload](h, "file_read", map[string]any{"path": "a.txt", "offset": 99})
	if past.Content != "" || past.TotalLines != 5 {
		t.Fatalf("past the end %+v", past)
	}
}

func TestReadCRLFAndNoFinalNewline(t *testing.T) {
	h := newHarness(t, map[string]string{"w.txt": "a\r\nb\r\nc", "empty": "", "mixed": "a\r\nb\n"})
	p := ok[ReadPayload](h, "file_read", map[string]any{"path": "w.txt"})
	if p.Content != "1\ta\n2\tb\n3\tc\n" || p.EOL != "crlf" || p.FinalNewline || p.TotalLines != 3 {
		t.Fatalf("%+v", p)
	}
	e := ok[ReadPayload](h, "file_read", map[string]any{"path": "empty"})
	if e.Content != "" || e.TotalLines != 0 || e.EOL != "none" {
		t.Fatalf("empty %+v", e)
	}
	if m := ok[ReadPayload](h, "file_read", map[string]any{"path": "mixed"}); m.EOL != "mixed" {
		t.Fatalf("mixed eol %s", m.EOL)
	}
}

func TestReadClipsAndCapsBytes(t *testing.T) {
	long := strings.Repeat("é", MaxReadLineBytes) // 2 bytes a rune
	var b strings.Builder
	for range 200 {
		b.WriteString(strings.Repeat("x", 1000) + "\n")
	}
	h := newHarness(t, map[string]string{"long": "short\n" + long + "\n", "many": b.String()})
	p := ok[ReadPayload](h, "file_read", map[string]any{"path": "long"})
	if p.ClippedLines != 1 || p.Truncated {
		t.Fatalf("clip %+v", p.Bounds)
	}
	line2 := strings.Split(p.Content, "\n")[1]
	if len(line2) > MaxReadLineBytes+8 || !strings.HasSuffix(line2, "é") {
		t.Fatalf("clipped line is %d bytes or splits a rune", len(line2))
	}
	// The byte cap cuts the page; following nextOffset reads everything.
	seen := 0
	offset := 1
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		p := ok[ReadPayload](h, "file_read", map[string]any{"path": "many", "offset": offset})
		if len(p.Content) > MaxReadOutputBytes {
			t.Fatalf("page of %d bytes", len(p.Content))
		}
		seen += p.EndLine - p.StartLine + 1
		if !p.Truncated {
			break
		}
		offset = p.NextOffset
	}
	if seen != 200 {
		t.Fatalf("read %d lines over the pages, want 200", seen)
	}
}

func TestReadRefusals(t *testing.T) {
	h := newHarness(t, map[string]string{"bin": "ab\x00cd", "dir/x": "x"})
	if err := syscall.Mkfifo(h.path("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", h.path("out")); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(h.path("big"))
	if err != nil {
		t.Fatal(err)
	}
	big.Truncate(MaxFileBytes + 1) // sparse: costs no disk
	big.Close()

	tests := []struct {
		name string
		args any
		want tools.RefusalName
	}{
		{"binary", map[string]any{"path": "bin"}, tools.FileBinary},
		{"missing", map[string]any{"path": "nope"}, tools.FileMissing},
		{"directory", map[string]any{"path": "dir"}, tools.FileNotRegular},
		{"fifo", map[string]any{"path": "fifo"}, tools.FileNotRegular},
		{"too large", map[string]any{"path": "big"}, tools.FileTooLarge},
		{"dotdot", map[string]any{"path": "../x"}, tools.PathEscape},
		{"absolute", map[string]any{"path": "/etc/passwd"}, tools.PathEscape},
		{"symlink out", map[string]any{"path": "out"}, tools.PathEscape},
		{"proc root", map[string]any{"path": "/proc/self/root/etc/passwd"}, tools.PathEscape},
		{"sibling prefix", map[string]any{"path": h.dir + "-evil/x"}, tools.PathEscape},
		{"nul byte", map[string]any{"path": "a\x00b"}, tools.ArgsInvalid},
		{"offset zero", map[string]any{"path": "bin", "offset": 0}, tools.ArgsInvalid},
		{"limit too big", map[string]any{"path": "bin", "limit": MaxReadLines + 1}, tools.ArgsInvalid},
		{"unknown key", map[string]any{"path": "bin", "mode": "raw"}, tools.ArgsInvalid},
		{"empty path", map[string]any{"path": ""}, tools.ArgsInvalid},
		{"no path", map[string]any{}, tools.ArgsInvalid},
		{"path not a string", map[string]any{"path": 7}, tools.ArgsInvalid},
		{"case-variant key", `{"path":"bin","PATH":"/etc/passwd"}`, tools.ArgsInvalid},
		{"malformed json", `{"path":`, tools.ArgsInvalid},
		{"oversized args", `{"path":"` + strings.Repeat("a", tools.MaxArgsBytes) + `"}`, tools.ArgsInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan tools.Result, 1)
			go func() { done <- h.run("file_read", tt.args) }()
			select {
			case res := <-done:
				r, isRef := res.(*tools.Refusal)
				if !isRef || r.Name != tt.want {
					t.Fatalf("got %#v; want refusal %s", res, tt.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("blocked")
			}
		})
	}
}
