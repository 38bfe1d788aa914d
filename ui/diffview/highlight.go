package diffview

import (
	"path"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"

	"staage/themes"
)

// Highlighter turns lines of code into styled strings with the theme's
// chroma style. Its caches are owned by the event loop: the expensive part
// (finding a lexer, tokenising) runs in a job built by Job, off the loop,
// and the results are merged back with Merge.
type Highlighter struct {
	style   *chroma.Style
	enabled bool
	// lexers caches the lexer name per file extension: lexers.Match
	// costs milliseconds.
	lexers map[string]string
	// lines caches highlighted text per lexer and line text.
	lines map[lineKey]string
}

type lineKey struct{ lexer, text string }

// NewHighlighter builds a highlighter for the palette; without colour it
// leaves code plain.
func NewHighlighter(p themes.Palette) *Highlighter {
	return &Highlighter{style: p.ChromaStyle(), enabled: p.Colored(), lexers: map[string]string{}, lines: map[lineKey]string{}}
}

// Lookup returns the highlighted line if it is cached.
func (h *Highlighter) Lookup(file, text string) (string, bool) {
	if h == nil || !h.enabled {
		return "", false
	}
	lx, ok := h.lexers[ext(file)]
	if !ok {
		return "", false
	}
	s, ok := h.lines[lineKey{lx, text}]
	return s, ok
}

// Enabled reports whether highlighting is on at all.
func (h *Highlighter) Enabled() bool { return h != nil && h.enabled }

// HighlightJob is work to run off the event loop.
type HighlightJob struct {
	style  *chroma.Style
	file   string
	lexer  string // known lexer name, or "" to find one
	texts  []string
	result Highlighted
}

// Highlighted is a job's result, merged back on the loop.
type Highlighted struct {
	Ext   string
	Lexer string
	Lines map[string]string
}

// Job prepares highlighting of texts of file that are not cached yet; nil
// when there is nothing to do.
func (h *Highlighter) Job(file string, texts []string) *HighlightJob {
	if !h.Enabled() {
		return nil
	}
	lx, known := h.lexers[ext(file)]
	var todo []string
	seen := map[string]bool{}
	for _, t := range texts {
		if seen[t] {
			continue
		}
		seen[t] = true
		if known {
			if _, ok := h.lines[lineKey{lx, t}]; ok {
				continue
			}
		}
		todo = append(todo, t)
	}
	if len(todo) == 0 {
		return nil
	}
	return &HighlightJob{style: h.style, file: file, lexer: lx, texts: todo}
}

// Run tokenises the job's lines. It is safe to call from any goroutine.
func (j *HighlightJob) Run() Highlighted {
	var l chroma.Lexer
	if j.lexer != "" {
		l = lexers.Get(j.lexer)
	}
	if l == nil {
		l = lexers.Match(path.Base(j.file))
	}
	if l == nil {
		l = lexers.Fallback
	}
	name := l.Config().Name
	l = chroma.Coalesce(l)
	styles := map[chroma.TokenType]lipgloss.Style{}
	out := Highlighted{Ext: ext(j.file), Lexer: name, Lines: make(map[string]string, len(j.texts))}
	for _, text := range j.texts {
		it, err := l.Tokenise(nil, text)
		if err != nil {
			out.Lines[text] = text
			continue
		}
		var b strings.Builder
		for tok := it(); tok != chroma.EOF; tok = it() {
			v := strings.TrimRight(tok.Value, "\n")
			if v == "" {
				continue
			}
			st, ok := styles[tok.Type]
			if !ok {
				st = tokenStyle(j.style.Get(tok.Type))
				styles[tok.Type] = st
			}
			b.WriteString(st.Render(v))
		}
		out.Lines[text] = b.String()
	}
	return out
}

// Merge stores a job's result.
func (h *Highlighter) Merge(r Highlighted) {
	h.lexers[r.Ext] = r.Lexer
	for t, s := range r.Lines {
		h.lines[lineKey{r.Lexer, t}] = s
	}
}

func tokenStyle(e chroma.StyleEntry) lipgloss.Style {
	s := lipgloss.NewStyle()
	if e.Colour.IsSet() {
		s = s.Foreground(lipgloss.Color(e.Colour.String()))
	}
	if e.Bold == chroma.Yes {
		s = s.Bold(true)
	}
	if e.Italic == chroma.Yes {
		s = s.Italic(true)
	}
	return s
}

// ext keys the lexer cache; files without an extension key by base name
// (Makefile, Dockerfile).
func ext(file string) string {
	b := path.Base(file)
	if i := strings.LastIndexByte(b, '.'); i > 0 {
		return b[i:]
	}
	return b
}
