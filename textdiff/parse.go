package textdiff

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is the role of one line in a hunk.
type Kind int

// Line kinds.
const (
	Context Kind = iota // in both texts
	Delete              // only in the old text
	Add                 // only in the new text
)

func (k Kind) String() string {
	switch k {
	case Context:
		return "context"
	case Delete:
		return "delete"
	case Add:
		return "add"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Line is one line of a hunk.
type Line struct {
	Kind Kind
	// Text is the line without its terminator. It is untrusted: a viewer
	// must sanitize it before it reaches a terminal.
	Text string
	// EOL is the terminator the line had: "\n", "\r\n", or "" for a last
	// line without a newline.
	EOL string
	// OldLine and NewLine are 1-based line numbers; 0 on the side the line
	// is not part of (OldLine for Add, NewLine for Delete).
	OldLine, NewLine int
}

// Hunk is one "@@" section.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	// Section is the text after the closing "@@", if any (a function name
	// some diff tools print).
	Section string
	Lines   []Line
}

// FileHunks is the diff of one file.
type FileHunks struct {
	// OldPath and NewPath are the header paths with a leading "a/" or "b/"
	// removed; DevNull stays as it is.
	OldPath, NewPath string
	Hunks            []Hunk
}

// Stats counts added and deleted lines.
func (f FileHunks) Stats() (added, deleted int) {
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case Add:
				added++
			case Delete:
				deleted++
			}
		}
	}
	return added, deleted
}

// Parse reads a unified diff of one or more files. Lines before a file's
// "---" header (such as "diff --git" or "index" lines) are skipped. A hunk
// whose line counts do not match its header is an error.
func Parse(unified string) ([]FileHunks, error) {
	lines := strings.SplitAfter(unified, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	var files []FileHunks
	for i := 0; i < len(lines); {
		if !isFileHeader(lines, i) {
			if strings.HasPrefix(lines[i], "@@ ") {
				return nil, fmt.Errorf("line %d: hunk before a file header", i+1)
			}
			i++
			continue
		}
		f := FileHunks{
			OldPath: headerName(lines[i][4:], "a/"),
			NewPath: headerName(lines[i+1][4:], "b/"),
		}
		i += 2
		for i < len(lines) && strings.HasPrefix(lines[i], "@@ ") {
			h, next, err := parseHunk(lines, i)
			if err != nil {
				return nil, err
			}
			f.Hunks = append(f.Hunks, h)
			i = next
		}
		if i < len(lines) && strings.ContainsRune(" +-", rune(lines[i][0])) && !isFileHeader(lines, i) {
			return nil, fmt.Errorf("line %d: hunk has more lines than its header says", i+1)
		}
		files = append(files, f)
	}
	return files, nil
}

func isFileHeader(lines []string, i int) bool {
	return strings.HasPrefix(lines[i], "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ")
}

// headerName takes the path from a header line: up to a tab (diff -u puts a
// timestamp there), without the line end and the a/ or b/ prefix.
func headerName(s, prefix string) string {
	s = strings.TrimRight(s, "\r\n")
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	if s == DevNull {
		return s
	}
	return strings.TrimPrefix(s, prefix)
}

func parseHunk(lines []string, i int) (Hunk, int, error) {
	var h Hunk
	hdr := strings.TrimRight(lines[i], "\r\n")
	rest, ok := strings.CutPrefix(hdr, "@@ -")
	if !ok {
		return h, 0, fmt.Errorf("line %d: bad hunk header %q", i+1, hdr)
	}
	end := strings.Index(rest, " @@")
	if end < 0 {
		return h, 0, fmt.Errorf("line %d: bad hunk header %q", i+1, hdr)
	}
	h.Section = strings.TrimPrefix(rest[end+3:], " ")
	oldR, newR, ok := strings.Cut(rest[:end], " +")
	if !ok {
		return h, 0, fmt.Errorf("line %d: bad hunk header %q", i+1, hdr)
	}
	var err error
	if h.OldStart, h.OldLines, err = parseRange(oldR); err != nil {
		return h, 0, fmt.Errorf("line %d: %w", i+1, err)
	}
	if h.NewStart, h.NewLines, err = parseRange(newR); err != nil {
		return h, 0, fmt.Errorf("line %d: %w", i+1, err)
	}
	oldNo, newNo := h.OldStart, h.NewStart
	if h.OldLines == 0 {
		oldNo++
	}
	if h.NewLines == 0 {
		newNo++
	}
	oldLeft, newLeft := h.OldLines, h.NewLines
	i++
	for i < len(lines) && (oldLeft > 0 || newLeft > 0) {
		raw := lines[i]
		var l Line
		if raw == "\n" || raw == "\r\n" {
			// Some tools strip the space of an empty context line.
			raw = " " + raw
		}
		body := raw[1:]
		switch raw[0] {
		case ' ':
			l = Line{Kind: Context, OldLine: oldNo, NewLine: newNo}
			oldNo++
			newNo++
			oldLeft--
			newLeft--
		case '-':
			l = Line{Kind: Delete, OldLine: oldNo}
			oldNo++
			oldLeft--
		case '+':
			l = Line{Kind: Add, NewLine: newNo}
			newNo++
			newLeft--
		case '\\':
			if err := markNoNewline(&h, i); err != nil {
				return h, 0, err
			}
			i++
			continue
		default:
			return h, 0, fmt.Errorf("line %d: unexpected %q inside a hunk", i+1, strings.TrimRight(raw, "\r\n"))
		}
		if oldLeft < 0 || newLeft < 0 {
			return h, 0, fmt.Errorf("line %d: hunk has more lines than its header says", i+1)
		}
		l.Text, l.EOL = splitEOL(body)
		h.Lines = append(h.Lines, l)
		i++
	}
	if oldLeft > 0 || newLeft > 0 {
		return h, 0, fmt.Errorf("hunk at line %d: %d old and %d new lines missing", i+1, oldLeft, newLeft)
	}
	// A marker may follow the last line of the hunk.
	if i < len(lines) && strings.HasPrefix(lines[i], `\`) {
		if err := markNoNewline(&h, i); err != nil {
			return h, 0, err
		}
		i++
	}
	return h, i, nil
}

func markNoNewline(h *Hunk, i int) error {
	if len(h.Lines) == 0 {
		return fmt.Errorf("line %d: %q before any line", i+1, NoNewlineMarker)
	}
	last := &h.Lines[len(h.Lines)-1]
	// The diff printed a "\n" after the line only to end the diff line;
	// the line itself has none (a "\r" before it belongs to the text).
	if last.EOL == "\r\n" {
		last.Text += "\r"
	}
	last.EOL = ""
	return nil
}

func splitEOL(s string) (text, eol string) {
	if t, ok := strings.CutSuffix(s, "\r\n"); ok {
		return t, "\r\n"
	}
	if t, ok := strings.CutSuffix(s, "\n"); ok {
		return t, "\n"
	}
	return s, ""
}

func parseRange(s string) (start, n int, err error) {
	a, b, hasN := strings.Cut(s, ",")
	if start, err = strconv.Atoi(a); err != nil || start < 0 {
		return 0, 0, fmt.Errorf("bad range %q", s)
	}
	n = 1
	if hasN {
		if n, err = strconv.Atoi(b); err != nil || n < 0 {
			return 0, 0, fmt.Errorf("bad range %q", s)
		}
	}
	return start, n, nil
}
