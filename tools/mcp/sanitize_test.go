package mcp

import (
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestStrip(t *testing.T) {
	for _, c := range []struct {
		in, want string
		removed  int
	}{
		{"plain text\n\twith tab", "plain text\n\twith tab", 0},
		{"red \x1b[31mtext\x1b[0m", "red text", 2},
		{"title\x1b]0;owned\x07 after", "title after", 1},
		{"clip\x1b]52;c;ZXZpbA==\x1b\\ board", "clip board", 1},
		{"dcs\x1bPq#0;2;0;0;0\x1b\\ end", "dcs end", 1},
		{"two-byte \x1bc reset", "two-byte  reset", 1},
		{"charset \x1b(B ok", "charset  ok", 1},
		{"c1 csi \u009b2J done", "c1 csi  done", 1},
		{"c1 osc \u009d0;x\u009c done", "c1 osc  done", 1},
		{"bell\a and nul\x00", "bell and nul", 2},
		{"crlf\r\nline", "crlf\nline", 0},
		{"over\rwrite", "overwrite", 1},
		{"bidi \u202eevil\u202c zw\u200bsp tag\U000E0041", "bidi evil zwsp tag", 4},
		{"bad \xff byte", "bad \ufffd byte", 1},
		{"unterminated \x1b]8;;http://x", "unterminated ", 1},
		{"trailing esc \x1b", "trailing esc ", 1},
		{"naïve 日本", "naïve 日本", 0},
	} {
		got, n := strip(c.in)
		if got != c.want || n != c.removed {
			t.Errorf("strip(%q) = %q, %d; want %q, %d", c.in, got, n, c.want, c.removed)
		}
	}
}

func TestOneLineAndClip(t *testing.T) {
	if got := oneLine("a\n b\t\x1b[1mc\x1b[0m  "); got != "a b c" {
		t.Errorf("oneLine = %q", got)
	}
	if got, cut := clip("aé", 2); got != "a" || !cut {
		t.Errorf("clip = %q %v", got, cut)
	}
	if got, cut := clip("abc", 3); got != "abc" || cut {
		t.Errorf("clip = %q %v", got, cut)
	}
}

// FuzzStrip: whatever a server sends, what is left has no control
// character but newline and tab, no invisible format character, and is
// valid UTF-8.
func FuzzStrip(f *testing.F) {
	for _, s := range []string{"\x1b[31mx", "\x1b]0;t\x07", "\u009b1m", "\u202e", "a\r\nb", "\xff\xfe", poisoned} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, _ := strip(in)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q", in)
		}
		for _, r := range out {
			if r == '\n' || r == '\t' {
				continue
			}
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029 {
				t.Fatalf("strip(%q) kept %U", in, r)
			}
		}
		if again, n := strip(out); again != out || n != 0 {
			t.Fatalf("strip is not idempotent on %q", in)
		}
		// Only U+FFFD (3 bytes) for an invalid byte can lengthen the text.
		if len(out) > 3*len(in) {
			t.Fatalf("strip grew %q", in)
		}
	})
}
