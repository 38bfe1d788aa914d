// Package diffview renders a typed DiffPreview for the approval modal: the
// diff of each file is computed (or parsed) once, drawn unified or side by
// side, scrolled, and browsed file by file. Syntax highlighting is lazy:
// only lines on screen are highlighted, in a command off the event loop,
// and cached; until then they show plain.
package diffview

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"staage/textdiff"
	"staage/themes"
	"staage/tools"
	"staage/ui/sanitize"
)

type rowKind int

const (
	rowHunk rowKind = iota
	rowContext
	rowDel
	rowAdd
	rowPair // split mode: a deleted line beside an added one
)

type row struct {
	kind           rowKind
	oldNo, newNo   int
	oldText, text  string // oldText only in pair rows
	oldOK, newOK   bool   // pair rows: which side is present
	oldDel, newAdd bool
}

// File is one file of the preview, its diff computed once.
type File struct {
	Path           string
	Op             tools.FileOp
	Added, Deleted int
	unified, split []row
	numW           int
}

// View is the diff viewer. It is a value owned by its parent model.
type View struct {
	theme  themes.Theme
	hl     *Highlighter
	files  []File
	cur    int
	split  bool
	offset int
	w, h   int
}

// HighlightedMsg carries highlighted lines back to the event loop.
type HighlightedMsg struct{ Result Highlighted }

// New computes the diff of every file in p. A FileDiff's Unified text is
// parsed when present; otherwise the diff is computed from Old and New.
func New(theme themes.Theme, hl *Highlighter, p tools.DiffPreview) *View {
	v := &View{theme: theme, hl: hl}
	for _, fd := range p.Files {
		v.files = append(v.files, buildFile(fd))
	}
	return v
}

func buildFile(fd tools.FileDiff) File {
	f := File{Path: sanitize.Line(fd.Path), Op: fd.Op}
	var hunks []textdiff.Hunk
	if fd.Unified != "" {
		if fh, err := textdiff.Parse(fd.Unified); err == nil && len(fh) == 1 {
			hunks = fh[0].Hunks
		}
	}
	if hunks == nil && fd.Old != fd.New {
		u := textdiff.Unified(fd.Path, fd.Path, fd.Old, fd.New, textdiff.DefaultContext)
		if fh, err := textdiff.Parse(u); err == nil && len(fh) == 1 {
			hunks = fh[0].Hunks
		}
	}
	maxNo := 1
	for _, h := range hunks {
		f.unified = append(f.unified, row{kind: rowHunk, text: hunkHeader(h)})
		f.split = append(f.split, row{kind: rowHunk, text: hunkHeader(h)})
		var dels, adds []row
		flush := func() {
			n := max(len(dels), len(adds))
			for i := 0; i < n; i++ {
				r := row{kind: rowPair}
				if i < len(dels) {
					r.oldOK, r.oldDel, r.oldNo, r.oldText = true, true, dels[i].oldNo, dels[i].text
				}
				if i < len(adds) {
					r.newOK, r.newAdd, r.newNo, r.text = true, true, adds[i].newNo, adds[i].text
				}
				f.split = append(f.split, r)
			}
			dels, adds = dels[:0], adds[:0]
		}
		for _, l := range h.Lines {
			text := sanitize.Text(l.Text)
			maxNo = max(maxNo, l.OldLine, l.NewLine)
			switch l.Kind {
			case textdiff.Context:
				flush()
				r := row{kind: rowContext, oldNo: l.OldLine, newNo: l.NewLine, text: text}
				f.unified = append(f.unified, r)
				f.split = append(f.split, row{kind: rowPair, oldOK: true, newOK: true, oldNo: l.OldLine, newNo: l.NewLine, oldText: text, text: text})
			case textdiff.Delete:
				f.Deleted++
				r := row{kind: rowDel, oldNo: l.OldLine, text: text}
				f.unified = append(f.unified, r)
				dels = append(dels, r)
			case textdiff.Add:
				f.Added++
				r := row{kind: rowAdd, newNo: l.NewLine, text: text}
				f.unified = append(f.unified, r)
				adds = append(adds, r)
			}
		}
		flush()
	}
	f.numW = len(fmt.Sprint(maxNo))
	return f
}

func hunkHeader(h textdiff.Hunk) string {
	s := fmt.Sprintf("@@ -%d,%d +%d,%d @@", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
	if h.Section != "" {
		s += " " + sanitize.Line(h.Section)
	}
	return s
}

// Files is the number of files.
func (v *View) Files() int { return len(v.files) }

// Current is the index of the file on screen.
func (v *View) Current() int { return v.cur }

// File returns file i.
func (v *View) File(i int) File { return v.files[i] }

// Split reports side-by-side mode.
func (v *View) Split() bool { return v.split }

// SetSize sets the viewer's box (the file header line included).
func (v *View) SetSize(w, h int) {
	v.w, v.h = max(w, 10), max(h, 2)
	v.clamp()
}

// ToggleSplit switches unified and side-by-side.
func (v *View) ToggleSplit() { v.split = !v.split; v.clamp() }

// NextFile moves to the next (dir>0) or previous file.
func (v *View) NextFile(dir int) {
	if len(v.files) == 0 {
		return
	}
	v.cur = (v.cur + dir + len(v.files)) % len(v.files)
	v.offset = 0
}

// Scroll moves by n rows.
func (v *View) Scroll(n int) { v.offset += n; v.clamp() }

// Page moves by a page.
func (v *View) Page(dir int) { v.Scroll(dir * max(v.bodyH()-1, 1)) }

func (v *View) bodyH() int { return v.h - 1 }

func (v *View) rows() []row {
	if len(v.files) == 0 {
		return nil
	}
	if v.split {
		return v.files[v.cur].split
	}
	return v.files[v.cur].unified
}

func (v *View) clamp() {
	v.offset = min(v.offset, len(v.rows())-v.bodyH())
	v.offset = max(v.offset, 0)
}

// Rows is the number of rows of the current file in the current mode.
func (v *View) Rows() int { return len(v.rows()) }

// HighlightCmd highlights the visible lines that are not cached yet.
func (v *View) HighlightCmd() tea.Cmd {
	if len(v.files) == 0 || !v.hl.Enabled() {
		return nil
	}
	rs := v.rows()
	end := min(v.offset+v.bodyH(), len(rs))
	var texts []string
	for _, r := range rs[v.offset:end] {
		switch r.kind {
		case rowHunk:
		case rowPair:
			if r.oldOK {
				texts = append(texts, r.oldText)
			}
			if r.newOK {
				texts = append(texts, r.text)
			}
		default:
			texts = append(texts, r.text)
		}
	}
	job := v.hl.Job(v.files[v.cur].Path, texts)
	if job == nil {
		return nil
	}
	return func() tea.Msg { return HighlightedMsg{Result: job.Run()} }
}

// View renders the file header and the visible rows, exactly h lines.
func (v *View) View() string {
	th := v.theme
	out := make([]string, 0, v.h)
	if len(v.files) == 0 {
		out = append(out, th.Muted.Render("(no changes)"))
	} else {
		f := v.files[v.cur]
		mode := "unified"
		if v.split {
			mode = "split"
		}
		head := fmt.Sprintf("%s %s  %s %s", th.Bold.Render(f.Path), th.Muted.Render("("+string(f.Op)+")"),
			th.OK.Render(fmt.Sprintf("+%d", f.Added)), th.Error.Render(fmt.Sprintf("-%d", f.Deleted)))
		if len(v.files) > 1 {
			head = th.Accent.Render(fmt.Sprintf("file %d of %d", v.cur+1, len(v.files))) + "  " + head
		}
		head += th.Muted.Render("  · " + mode)
		out = append(out, ansi.Truncate(head, v.w, "…"))
		rs := v.rows()
		end := min(v.offset+v.bodyH(), len(rs))
		for _, r := range rs[v.offset:end] {
			if v.split && r.kind == rowPair {
				out = append(out, v.pairLine(f, r))
			} else {
				out = append(out, v.unifiedLine(f, r))
			}
		}
	}
	for len(out) < v.h {
		out = append(out, "")
	}
	return strings.Join(out, "\n")
}

func (v *View) num(n, w int) string {
	if n == 0 {
		return strings.Repeat(" ", w)
	}
	return fmt.Sprintf("%*d", w, n)
}

func (v *View) code(f File, text string) string {
	if s, ok := v.hl.Lookup(f.Path, text); ok {
		return s
	}
	return v.theme.DiffContext.Render(text)
}

func (v *View) unifiedLine(f File, r row) string {
	th := v.theme
	if r.kind == rowHunk {
		return ansi.Truncate(th.DiffHunk.Render(r.text), v.w, "…")
	}
	nums := th.LineNo.Render(v.num(r.oldNo, f.numW) + " " + v.num(r.newNo, f.numW) + " ")
	var sign string
	switch r.kind {
	case rowAdd:
		sign = th.DiffAdd.Render("+")
	case rowDel:
		sign = th.DiffDel.Render("-")
	default:
		sign = " "
	}
	return ansi.Truncate(nums+sign+" "+v.code(f, r.text), v.w, "…")
}

func (v *View) pairLine(f File, r row) string {
	th := v.theme
	half := (v.w - 1) / 2
	side := func(ok, changed bool, no int, text string, mark string, st func(string) string) string {
		if !ok {
			return strings.Repeat(" ", half)
		}
		sign := " "
		if changed {
			sign = st(mark)
		}
		s := th.LineNo.Render(v.num(no, f.numW)) + sign + v.code(f, text)
		s = ansi.Truncate(s, half, "…")
		if pad := half - ansi.StringWidth(s); pad > 0 {
			s += strings.Repeat(" ", pad)
		}
		return s
	}
	left := side(r.oldOK, r.oldDel, r.oldNo, r.oldText, "-", func(s string) string { return th.DiffDel.Render(s) })
	right := side(r.newOK, r.newAdd, r.newNo, r.text, "+", func(s string) string { return th.DiffAdd.Render(s) })
	return left + th.Subtle.Render("│") + right
}

// Update merges highlighted lines. It reports whether the message was for
// the viewer.
func (v *View) Update(msg tea.Msg) bool {
	if m, ok := msg.(HighlightedMsg); ok {
		v.hl.Merge(m.Result)
		return true
	}
	return false
}
