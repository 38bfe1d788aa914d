// Package textdiff makes and reads line-based unified diffs.
//
// Unified renders the difference between two texts as a unified diff that GNU
// patch applies (headers, "@@ -s,n +s,n @@" hunks, "\ No newline at end of
// file" markers); Parse reads such a diff back into hunks of typed lines with
// old and new line numbers, so a viewer can draw it unified or side by side.
// The package touches no files. Its output is a function of its inputs,
// except that a diff taking longer than diffTimeout comes out correct but
// not minimal.
package textdiff

import (
	"strconv"
	"strings"
	"time"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// DefaultContext is the number of context lines diff -u uses.
const DefaultContext = 3

// diffTimeout bounds the line diff. When it expires go-diff returns a valid
// but not minimal diff, which is still a correct patch.
const diffTimeout = 2 * time.Second

// NoNewlineMarker follows a line that has no line terminator.
const NoNewlineMarker = `\ No newline at end of file`

// DevNull is the path a diff names for a side that does not exist (a file
// created or deleted). Unified prints it without the a/ or b/ prefix.
const DevNull = "/dev/null"

// op is one line of the edit script.
type op struct {
	kind     Kind
	old, new int // 0-based indices into the old and new line slices; -1 if absent
}

// Unified returns the unified diff turning old into new, with context lines
// of context around each change (negative means DefaultContext). Paths are
// printed as "a/"+oldPath and "b/"+newPath (apply with patch -p1), except
// DevNull, which is printed as it is. Equal texts give "".
//
// Lines keep their terminators exactly: a CRLF line differs from an LF line,
// and a last line without a newline is followed by NoNewlineMarker.
func Unified(oldPath, newPath, old, new string, context int) string {
	if old == new {
		return ""
	}
	if context < 0 {
		context = DefaultContext
	}
	a, b := splitLines(old), splitLines(new)
	ops := lineOps(a, b)

	var sb strings.Builder
	sb.Grow(len(old)/8 + len(new)/8 + 64)
	sb.WriteString("--- ")
	sb.WriteString(headerPath("a/", oldPath))
	sb.WriteString("\n+++ ")
	sb.WriteString(headerPath("b/", newPath))
	sb.WriteByte('\n')

	for i := 0; i < len(ops); {
		// Find the next change.
		for i < len(ops) && ops[i].kind == Context {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-context, 0)
		// Extend while the gap of context between changes is small
		// enough that the two hunks would touch.
		end := i
		for end < len(ops) {
			if ops[end].kind != Context {
				end++
				continue
			}
			j := end
			for j < len(ops) && ops[j].kind == Context {
				j++
			}
			if j == len(ops) || j-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = j
		}
		writeHunk(&sb, ops[start:end], a, b)
		i = end
	}
	return sb.String()
}

func headerPath(prefix, p string) string {
	if p == DevNull {
		return p
	}
	return prefix + p
}

func writeHunk(sb *strings.Builder, ops []op, a, b []string) {
	oldStart, newStart, oldN, newN := -1, -1, 0, 0
	// The start of an empty range is the line before it; find the first
	// index on each side even if the hunk has no line of that side.
	for _, o := range ops {
		if o.old >= 0 {
			if oldStart < 0 {
				oldStart = o.old + 1
			}
			oldN++
		}
		if o.new >= 0 {
			if newStart < 0 {
				newStart = o.new + 1
			}
			newN++
		}
	}
	if oldN == 0 {
		oldStart = precedingIndex(ops, func(o op) int { return o.old })
	}
	if newN == 0 {
		newStart = precedingIndex(ops, func(o op) int { return o.new })
	}
	sb.WriteString("@@ -")
	writeRange(sb, oldStart, oldN)
	sb.WriteString(" +")
	writeRange(sb, newStart, newN)
	sb.WriteString(" @@\n")
	for _, o := range ops {
		var line string
		switch o.kind {
		case Context:
			sb.WriteByte(' ')
			line = a[o.old]
		case Delete:
			sb.WriteByte('-')
			line = a[o.old]
		case Add:
			sb.WriteByte('+')
			line = b[o.new]
		}
		sb.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			sb.WriteByte('\n')
			sb.WriteString(NoNewlineMarker)
			sb.WriteByte('\n')
		}
	}
}

// precedingIndex is the start GNU diff prints for a hunk side with no lines:
// the number of that side's lines before the hunk. lineOps records it on ops
// that lack the side as -(position+2).
func precedingIndex(ops []op, idx func(op) int) int {
	for _, o := range ops {
		if v := idx(o); v < -1 {
			return -v - 2
		}
	}
	return 0
}

func writeRange(sb *strings.Builder, start, n int) {
	sb.WriteString(strconv.Itoa(start))
	if n != 1 {
		sb.WriteByte(',')
		sb.WriteString(strconv.Itoa(n))
	}
}

// splitLines splits s after every "\n"; the last line may lack one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	out := make([]string, 0, n)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// maxLineIDs is how many distinct lines fit in runes once the surrogate
// range is skipped.
const maxLineIDs = 0x110000 - 0x800

// lineOps computes the line edit script with go-diff in line mode: each
// distinct line becomes one rune, the runes are diffed, and the runes map
// back to line indices. Ops on a missing side carry -(position+2), where
// position is the number of lines of that side before the op, so a hunk
// with an empty side can still name "the line before".
func lineOps(a, b []string) []op {
	ids := make(map[string]rune, len(a)+len(b))
	toRunes := func(lines []string) ([]rune, bool) {
		rs := make([]rune, len(lines))
		for i, l := range lines {
			r, ok := ids[l]
			if !ok {
				n := len(ids)
				if n >= maxLineIDs {
					return nil, false
				}
				r = rune(n)
				if r >= 0xD800 {
					r += 0x800
				}
				ids[l] = r
			}
			rs[i] = r
		}
		return rs, true
	}
	ra, okA := toRunes(a)
	rb, okB := toRunes(b)
	var diffs []diffmatchpatch.Diff
	if okA && okB {
		dmp := diffmatchpatch.New()
		dmp.DiffTimeout = diffTimeout
		diffs = dmp.DiffMainRunes(ra, rb, false)
	} else {
		// Too many distinct lines to encode: replace everything, which
		// is still a correct diff.
		diffs = []diffmatchpatch.Diff{
			{Type: diffmatchpatch.DiffDelete, Text: strings.Repeat("x", len(a))},
			{Type: diffmatchpatch.DiffInsert, Text: strings.Repeat("x", len(b))},
		}
	}
	ops := make([]op, 0, len(a)+len(b))
	i, j := 0, 0
	for _, d := range diffs {
		n := runeCount(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			for k := 0; k < n; k++ {
				ops = append(ops, op{Context, i, j})
				i++
				j++
			}
		case diffmatchpatch.DiffDelete:
			for k := 0; k < n; k++ {
				ops = append(ops, op{Delete, i, -(j + 2)})
				i++
			}
		case diffmatchpatch.DiffInsert:
			for k := 0; k < n; k++ {
				ops = append(ops, op{Add, -(i + 2), j})
				j++
			}
		}
	}
	return ops
}

func runeCount(s string) int {
	n := 0
	for range s {
		n++
	}
	return n
}
