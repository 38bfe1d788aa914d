package fs

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"staage/tools"
)

// matcher is one compiled doublestar pattern. A pattern without "/" matches
// a base name at any depth (as ripgrep's and fd's globs do: "*.go" finds Go
// files everywhere); one with "/" matches the whole workspace-relative path.
type matcher struct {
	pattern  string
	baseOnly bool
	// Fast paths for the common shapes; kind picks one.
	kind   matchKind
	lit    string // exact name, or the suffix of "*<lit>"
	prefix []string
}

type matchKind int

const (
	matchGlob   matchKind = iota // doublestar.Match
	matchAll                     // "*" or "**"
	matchExact                   // no meta characters
	matchSuffix                  // "*.ext", also "**/*.ext"
)

const globMeta = `*?[]{}\`

func compileGlob(pattern string) (*matcher, error) {
	p := strings.TrimPrefix(pattern, "./")
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return nil, fmt.Errorf("empty pattern")
	}
	if !doublestar.ValidatePattern(p) {
		return nil, fmt.Errorf("malformed pattern %q", pattern)
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return nil, fmt.Errorf("pattern %q climbs out with \"..\"", pattern)
		}
	}
	m := &matcher{pattern: p}
	// "**/x" with no other slash is the same as the base-name form "x".
	if rest, ok := strings.CutPrefix(p, "**/"); ok && !strings.Contains(rest, "/") && rest != "**" {
		p = rest
		m.pattern = p
	}
	m.baseOnly = !strings.Contains(p, "/")
	switch {
	case p == "*" || p == "**":
		m.kind = matchAll
	case !strings.ContainsAny(p, globMeta):
		m.kind, m.lit = matchExact, p
	case m.baseOnly && strings.HasPrefix(p, "*") && !strings.ContainsAny(p[1:], globMeta):
		m.kind, m.lit = matchSuffix, p[1:]
	}
	// The literal leading directories of a path pattern bound the walk.
	if !m.baseOnly {
		parts := strings.Split(p, "/")
		for _, c := range parts[:len(parts)-1] {
			if strings.ContainsAny(c, globMeta) {
				break
			}
			m.prefix = append(m.prefix, c)
		}
	}
	return m, nil
}

// match reports whether the file at rel (base name base) matches.
func (m *matcher) match(rel, base string) bool {
	subject := rel
	if m.baseOnly {
		subject = base
	}
	switch m.kind {
	case matchAll:
		return true
	case matchExact:
		return subject == m.lit
	case matchSuffix:
		return strings.HasSuffix(subject, m.lit)
	}
	ok, _ := doublestar.Match(m.pattern, subject)
	return ok
}

// pathLess orders workspace paths component by component (a directory's
// files right after its name, "a/b" before "a.go"), the order of a walk
// that visits each directory's entries sorted by name.
func pathLess(a, b string) bool {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == '/' {
			return true
		}
		if cb == '/' {
			return false
		}
		return ca < cb
	}
	return len(a) < len(b)
}

// cursor is where the next page starts: after Line of Path (Line 0 for
// file_find, where paths are the unit). It travels as opaque base64 JSON.
type cursor struct {
	Path string `json:"p"`
	Line int    `json:"l,omitempty"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, *tools.Refusal) {
	var c cursor
	if s == "" {
		return c, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.Path == "" || c.Line < 0 {
		return c, tools.Refuse(tools.FindInvalid, "cursor is not one this tool returned; start again without it")
	}
	return c, nil
}

// before reports whether everything at or under dir sorts before the
// cursor, so the walk can skip it without reading it.
func (c cursor) skipsDir(dir string) bool {
	if c.Path == "" {
		return false
	}
	return pathLess(dir, c.Path) && !strings.HasPrefix(c.Path, dir+"/")
}
