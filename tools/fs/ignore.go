package fs

import (
	"bufio"
	"bytes"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ignoreRule is one line of a .gitignore, compiled.
type ignoreRule struct {
	negate  bool
	dirOnly bool
	m       *matcher
	// inside is set for "dir/**": it ignores what is inside dir, not dir
	// itself (so "!dir/keep" can still re-include), unlike doublestar,
	// whose "dir/**" also matches "dir".
	inside string
}

// ignorer holds the rules of one directory's .gitignore and points at the
// directory above. Git's precedence: within a file the last matching line
// wins; a deeper file wins over a shallower one.
type ignorer struct {
	parent *ignorer
	base   string // the directory the rules are relative to ("" for the root)
	rules  []ignoreRule
}

// parseIgnore compiles a .gitignore body. Lines it cannot compile are
// skipped, as git skips them.
func parseIgnore(parent *ignorer, base string, data []byte) *ignorer {
	ig := &ignorer{parent: parent, base: base}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if r, ok := compileIgnoreLine(line); ok {
			ig.rules = append(ig.rules, r)
		}
	}
	if len(ig.rules) == 0 {
		return parent
	}
	return ig
}

func compileIgnoreLine(line string) (ignoreRule, bool) {
	var r ignoreRule
	if line == "" || strings.HasPrefix(line, "#") {
		return r, false
	}
	// Trailing spaces are dropped unless escaped.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if strings.HasPrefix(line, "!") {
		r.negate = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return r, false
	}
	// A slash anywhere but the end anchors the pattern to the directory
	// of the .gitignore; otherwise it matches a name at any depth.
	anchored := strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	// Braces are literal in gitignore but alternatives in doublestar.
	line = strings.NewReplacer("{", `\{`, "}", `\}`).Replace(line)
	if !doublestar.ValidatePattern(line) {
		return r, false
	}
	m := &matcher{pattern: line, baseOnly: !anchored}
	switch {
	case !strings.ContainsAny(line, globMeta):
		m.kind, m.lit = matchExact, line
	case !anchored && strings.HasPrefix(line, "*") && !strings.ContainsAny(line[1:], globMeta):
		m.kind, m.lit = matchSuffix, line[1:]
	}
	r.m = m
	if dir, ok := strings.CutSuffix(line, "/**"); ok && anchored {
		r.inside = dir
	}
	return r, true
}

// ignored reports whether the entry at rel (a path below every base in the
// chain) is ignored.
func (ig *ignorer) ignored(rel, name string, isDir bool) bool {
	for g := ig; g != nil; g = g.parent {
		sub := rel
		if g.base != "" {
			sub = rel[len(g.base)+1:]
		}
		for i := len(g.rules) - 1; i >= 0; i-- {
			r := g.rules[i]
			if r.dirOnly && !isDir || r.inside != "" && sub == r.inside {
				continue
			}
			if r.m.match(sub, name) {
				return !r.negate
			}
		}
	}
	return false
}
