package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanRemovesControlSequences(t *testing.T) {
	cases := []struct {
		name, in, text, marked string
	}{
		{"plain", "hello\nworld", "hello\nworld", "hello\nworld"},
		{"csi cursor move", "a\x1b[2J\x1b[1;1Hb", "ab", "a␛␛b"},
		{"sgr", "\x1b[31mred\x1b[0m", "red", "␛red␛"},
		{"osc52 clipboard bel", "x\x1b]52;c;ZXZpbA==\x07y", "xy", "x␛y"},
		{"osc title st", "\x1b]0;pwned\x1b\\ok", "ok", "␛ok"},
		{"dcs", "\x1bPq#0;2;0;0;0\x1b\\z", "z", "␛z"},
		{"unterminated osc", "a\x1b]0;title forever", "a", "a␛"},
		{"two byte escape", "a\x1bcb\x1b(Bc", "abc", "a␛b␛c"},
		{"c1 csi", "a\u009b2Jb", "ab", "a␛b"},
		{"c1 osc", "a\u009d0;t\u009cb", "ab", "a␛b"},
		{"bel and backspace", "a\x07b\x08c", "abc", "a␇b␈c"},
		{"lone cr", "safe\rEVIL", "safeEVIL", "safe␍EVIL"},
		{"crlf", "a\r\nb", "a\nb", "a\nb"},
		{"tab", "\tx", "    x", "    x"},
		{"bidi override", "abc\u202eevil\u202c", "abcevil", "abc⟦U+202E⟧evil⟦U+202C⟧"},
		{"isolates", "\u2066x\u2069", "x", "⟦U+2066⟧x⟦U+2069⟧"},
		{"zero width", "ad\u200bmin", "admin", "ad⟦U+200B⟧min"},
		{"bom", "\ufeffpkg", "pkg", "⟦U+FEFF⟧pkg"},
		{"wide ok", "世界 ✓", "世界 ✓", "世界 ✓"},
		{"del", "a\x7fb", "ab", "a␡b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Text(tc.in); got != tc.text {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
			}
			if got := Marked(tc.in); got != tc.marked {
				t.Errorf("Marked(%q) = %q, want %q", tc.in, got, tc.marked)
			}
		})
	}
}

func TestInvalidUTF8BecomesReplacement(t *testing.T) {
	got := Text("a\xffb\xc2")
	if !utf8.ValidString(got) || strings.Contains(got, "\xff") {
		t.Fatalf("invalid UTF-8 survived: %q", got)
	}
}

func TestLineShowsNewlines(t *testing.T) {
	if got := Line("rm -rf /\nreboot"); got != "rm -rf /⏎reboot" {
		t.Fatalf("Line = %q", got)
	}
}

func TestCleanCountsRemovals(t *testing.T) {
	r := Clean("\x1b[31mx\u202e", false)
	if r.Removed != 2 || r.Text != "x" {
		t.Fatalf("Clean = %+v", r)
	}
}

// FuzzClean checks the one property that matters: nothing that a terminal
// interprets as control survives.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"\x1b]52;c;AA\x07", "\x1b[31m", "\u202e", "a\x1b", "\u009b1m", "\xc2\x9b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, mark := range []bool{false, true} {
			out := Clean(s, mark).Text
			for _, r := range out {
				if (r < 0x20 && r != '\n') || (r >= 0x7f && r <= 0x9f) || invisible(r) {
					t.Fatalf("Clean(%q, %v) kept %U in %q", s, mark, r, out)
				}
			}
			if !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8 out: %q", out)
			}
		}
	})
}
