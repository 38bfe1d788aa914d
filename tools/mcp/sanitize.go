package mcp

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Everything an MCP server sends is untrusted. ui/sanitize strips text again
// before it is styled, but descriptions and results also reach the model and
// the journal, and a tools family may not import ui: this is the small local
// stripper. It removes terminal escape sequences whole (not just the ESC
// byte, which would leave "[31m" behind), C0 and C1 controls other than
// newline and tab, and invisible format characters (bidi overrides,
// zero-width characters, tag characters) that can hide text from the operator
// while the model still reads it. Invalid UTF-8 becomes U+FFFD.

// strip returns s without control sequences and the number of removals.
func strip(s string) (string, int) {
	if plain(s) {
		return s, 0
	}
	var b strings.Builder
	b.Grow(len(s))
	removed := 0
	for i := 0; i < len(s); {
		// Copy a run of plain ASCII in one write.
		j := i
		for j < len(s) && s[j] >= 0x20 && s[j] < 0x7f || j < len(s) && (s[j] == '\n' || s[j] == '\t') {
			j++
		}
		if j > i {
			b.WriteString(s[i:j])
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
			removed++
		case r == 0x1b:
			size = escLen(s[i:])
			removed++
		case r >= 0x80 && r <= 0x9f:
			size = c1Len(s[i:], r, size)
			removed++
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			// CRLF: the LF is kept on the next round.
		case r < 0x20 || r == 0x7f:
			removed++
		case unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029:
			removed++
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String(), removed
}

// plain is the fast path: printable ASCII, newlines and tabs.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || (c < 0x20 && c != '\n' && c != '\t') {
			return false
		}
	}
	return true
}

// escLen is the length of the escape sequence at the start of s (s[0] is
// ESC). An unterminated sequence runs to the end of s: better to drop text
// than to pass half a sequence.
func escLen(s string) int {
	if len(s) < 2 {
		return 1
	}
	switch s[1] {
	case '[':
		return 2 + csiLen(s[2:])
	case ']', 'P', 'X', '^', '_':
		return 2 + stringLen(s[2:])
	}
	// nF escapes: intermediates 0x20-0x2f, then one final byte.
	i := 1
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// c1Len handles C1 controls written as code points (U+0080..U+009F): CSI
// and the string introducers take their whole sequence with them.
func c1Len(s string, r rune, size int) int {
	switch r {
	case 0x9b:
		return size + csiLen(s[size:])
	case 0x9d, 0x90, 0x98, 0x9e, 0x9f:
		return size + stringLen(s[size:])
	}
	return size
}

// csiLen is the length of a CSI body: parameter and intermediate bytes, then
// a final byte in 0x40-0x7e.
func csiLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x40 && c <= 0x7e {
			return i + 1
		}
		if c < 0x20 || c >= 0x7f {
			// Not a CSI byte: the sequence ends here, broken.
			return i
		}
	}
	return len(s)
}

// stringLen is the length of an OSC/DCS/SOS/PM/APC body up to and including
// its terminator (BEL, ESC \ or the C1 ST).
func stringLen(s string) int {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case s[i] == 0xc2 && i+1 < len(s) && s[i+1] == 0x9c:
			return i + 2
		}
	}
	return len(s)
}

// oneLine strips s and folds it onto one line, for report lines.
func oneLine(s string) string {
	t, _ := strip(s)
	t = strings.Join(strings.Fields(t), " ")
	return t
}

// clip cuts s to at most max bytes on a rune boundary.
func clip(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max], true
}
