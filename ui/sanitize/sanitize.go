// Package sanitize makes untrusted text safe to put on the operator's
// terminal. Model text, tool output, file contents, arguments and tool
// descriptions pass through here before any style is applied: terminal
// control sequences (CSI, OSC, DCS, APC, PM, SOS and two-byte escapes), C0
// and C1 control characters, bidi overrides and zero-width characters are
// removed. Text mode removes them silently (and counts them); Marked mode
// replaces each removal with a visible marker, for places where what was
// hidden matters (arguments, commands, paths).
package sanitize

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// TabWidth is how many spaces a tab becomes: a literal tab would let the
// terminal, not the layout, decide where the next column is.
const TabWidth = 4

// Result is sanitized text and what was taken out of it.
type Result struct {
	Text string
	// Removed counts the sequences and characters removed or replaced.
	Removed int
}

// Text strips s silently and returns the safe text.
func Text(s string) string { return Clean(s, false).Text }

// Marked strips s and puts a visible marker where something was removed.
func Marked(s string) string { return Clean(s, true).Text }

// Line is Marked with newlines also shown as markers: one line of text for
// a single-line field (a path, a one-line command digest).
func Line(s string) string {
	r := Clean(s, true).Text
	if !strings.ContainsAny(r, "\n") {
		return r
	}
	return strings.ReplaceAll(r, "\n", "⏎")
}

// Clean sanitizes s. With mark set, each removal is replaced by a marker:
// "␛" for an escape sequence, the control picture for a control character
// (␇ for BEL) and "⟦U+202E⟧" for an invisible format character.
func Clean(s string, mark bool) Result {
	if isPlain(s) {
		return Result{Text: s}
	}
	var b strings.Builder
	b.Grow(len(s))
	removed := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			// Invalid UTF-8: a terminal could read a lone byte as a C1.
			b.WriteRune(utf8.RuneError)
			removed++
			i++
			continue
		case r == 0x1b:
			n := escapeLen(s[i:])
			removed++
			if mark {
				b.WriteString("␛")
			}
			i += n
			continue
		case r == 0x9b || r == 0x9d || r == 0x90 || r == 0x98 || r == 0x9e || r == 0x9f:
			// C1 introducers (CSI, OSC, DCS, SOS, PM, APC) as code
			// points: drop the whole sequence they open.
			n := c1Len(s[i:], size, r)
			removed++
			if mark {
				b.WriteString("␛")
			}
			i += n
			continue
		case r == '\n':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteString(strings.Repeat(" ", TabWidth))
		case r == '\r':
			// CRLF is an ordinary line end; a lone CR would let text
			// overwrite what came before it on the same line.
			if i+1 < len(s) && s[i+1] == '\n' {
				break
			}
			removed++
			if mark {
				b.WriteString("␍")
			}
		case r < 0x20 || r == 0x7f:
			removed++
			if mark {
				b.WriteString(controlPicture(r))
			}
		case r >= 0x80 && r <= 0x9f:
			removed++
			if mark {
				b.WriteString("␛")
			}
		case invisible(r):
			removed++
			if mark {
				fmt.Fprintf(&b, "⟦U+%04X⟧", r)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return Result{Text: b.String(), Removed: removed}
}

// isPlain is the fast path: printable ASCII, newlines and spaces only.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || (c < 0x20 && c != '\n') || c == 0x7f {
			return false
		}
	}
	return true
}

// invisible reports format characters that reorder or hide text: bidi
// embeddings, overrides and isolates, marks, zero-width characters, the
// byte-order mark, line/paragraph separators and interlinear annotations.
func invisible(r rune) bool {
	switch {
	case r >= 0x202a && r <= 0x202e, // LRE RLE PDF LRO RLO
		r >= 0x2066 && r <= 0x2069,                // LRI RLI FSI PDI
		r == 0x200e || r == 0x200f || r == 0x061c, // LRM RLM ALM
		r >= 0x200b && r <= 0x200d,                // ZWSP ZWNJ ZWJ
		r >= 0x2060 && r <= 0x2064,                // WJ and invisible operators
		r == 0xfeff, r == 0x180e, r == 0x00ad,
		r == 0x2028 || r == 0x2029,
		r >= 0xfff9 && r <= 0xfffb,
		r >= 0xe0000 && r <= 0xe007f: // tag characters
		return true
	}
	return false
}

func controlPicture(r rune) string {
	if r == 0x7f {
		return "␡"
	}
	return string(rune(0x2400 + r))
}

// escapeLen is the length of the escape sequence at the start of s (which
// begins with ESC). An unterminated string sequence runs to the end of s:
// better to drop text than to let half a sequence through.
func escapeLen(s string) int {
	if len(s) < 2 {
		return 1
	}
	switch s[1] {
	case '[': // CSI: parameters and intermediates, then a final byte 0x40–0x7e.
		for j := 2; j < len(s); j++ {
			if s[j] >= 0x40 && s[j] <= 0x7e {
				return j + 1
			}
			if s[j] < 0x20 && s[j] != 0x1b {
				// A control in the middle ends the sequence here;
				// the control itself is handled on its own.
				return j
			}
			if s[j] == 0x1b {
				return j
			}
		}
		return len(s)
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC: until ST or BEL.
		return stringSeqLen(s, 2)
	default:
		// Two-byte escapes (ESC 7, ESC c, ESC ( B ...): ESC, any
		// intermediates 0x20–0x2f, then one final byte.
		j := 1
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) {
			j++
		}
		return j
	}
}

// stringSeqLen finds the end of a control string starting at from: BEL,
// ESC \, or the C1 ST (U+009C).
func stringSeqLen(s string, from int) int {
	for j := from; j < len(s); j++ {
		switch s[j] {
		case 0x07:
			return j + 1
		case 0x1b:
			if j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
			return j
		case 0xc2:
			if j+1 < len(s) && s[j+1] == 0x9c {
				return j + 2
			}
		}
	}
	return len(s)
}

func c1Len(s string, size int, r rune) int {
	if r == 0x9b { // CSI
		for j := size; j < len(s); j++ {
			if s[j] >= 0x40 && s[j] <= 0x7e {
				return j + 1
			}
			if s[j] < 0x20 || s[j] >= 0x80 {
				return j
			}
		}
		return len(s)
	}
	return stringSeqLen(s, size)
}
