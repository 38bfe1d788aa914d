package journal

import (
	"strings"
	"unicode/utf8"
)

// Sanitize makes untrusted text (model output, tool output, file contents)
// safe to print or export: terminal escape sequences are removed whole, and
// other control characters, bidi overrides and zero-width characters are
// dropped. Newlines and tabs stay; a CR is dropped so "\r\n" reads as "\n"
// and a bare CR cannot overwrite a line.
func Sanitize(s string) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1b {
			i = skipEscape(s, i)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
			i++
			continue
		}
		if r == 0x9b { // C1 CSI: skip its parameters like ESC [
			i = skipCSI(s, i+size)
			continue
		}
		if !dropRune(r) {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func isClean(s string) bool {
	for _, r := range s {
		if dropRune(r) || r == 0x1b || r == 0x9b || r == utf8.RuneError {
			return false
		}
	}
	return true
}

func dropRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return true
	case r >= 0x200b && r <= 0x200f, // zero-width, LRM/RLM
		r >= 0x202a && r <= 0x202e, // bidi embeddings and overrides
		r >= 0x2066 && r <= 0x2069, // bidi isolates
		r == 0xfeff, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// skipEscape returns the index after the escape sequence starting at i.
func skipEscape(s string, i int) int {
	i++ // ESC
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC: until BEL or ST
		for j := i + 1; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return len(s)
	default:
		// Two-byte sequences (ESC c, ESC 7, charset selects ESC ( B).
		if s[i] >= 0x20 && s[i] <= 0x2f && i+1 < len(s) {
			return i + 2
		}
		return i + 1
	}
}

// skipCSI skips parameter and intermediate bytes up to the final byte.
func skipCSI(s string, i int) int {
	for ; i < len(s); i++ {
		if s[i] >= 0x40 && s[i] <= 0x7e {
			return i + 1
		}
	}
	return i
}
