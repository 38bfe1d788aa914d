package fs

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// query is a compiled file_search pattern.
type query struct {
	literal []byte         // literal mode: the bytes to find
	re      *regexp.Regexp // regexp mode, line-confined
	// required is a literal every match of re contains (nil if none): the
	// search finds it with bytes.Index and runs re only on those lines.
	required []byte
	// finder looks for literal or required.
	finder literalFinder
	// prog is the compiled program for lineDFA: it scans whole files for
	// patterns without a required literal, and confirms the candidate
	// lines of those with one; regexp only locates the match on lines the
	// DFA reported.
	prog *syntax.Prog
}

// rareByteRank: a required literal of one byte is worth looking for first
// only if it is rarer than the 40 commonest bytes of source code ('-', ':',
// '{' are; letters, space, '_', '(' are not).
const rareByteRank = 40

// maxPatternBytes bounds a search pattern.
const maxPatternBytes = 4096

func compileQuery(pattern string, literal bool) (*query, error) {
	if pattern == "" {
		return nil, fmt.Errorf("empty pattern")
	}
	if len(pattern) > maxPatternBytes {
		return nil, fmt.Errorf("pattern is %d bytes, over the %d byte limit", len(pattern), maxPatternBytes)
	}
	if literal {
		for i := 0; i < len(pattern); i++ {
			if pattern[i] == '\n' {
				return nil, fmt.Errorf("a literal cannot contain a newline: the search is line by line")
			}
		}
		lit := []byte(pattern)
		return &query{literal: lit, finder: newLiteralFinder(lit)}, nil
	}
	// Multi-line ^ and $, and no newline in negated classes: a match stays
	// within one line, as in grep and ripgrep.
	flags := syntax.Perl &^ syntax.OneLine &^ syntax.ClassNL
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, err
	}
	tree = lineConfine(tree.Simplify())
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, err
	}
	q := &query{re: re}
	if lit := requiredLiteral(tree); len(lit) >= 2 || len(lit) == 1 && byteRanks[lit[0]] >= rareByteRank {
		q.required = lit
		q.finder = newLiteralFinder(lit)
	}
	if q.prog, err = syntax.Compile(tree); err != nil {
		return nil, err
	}
	return q, nil
}

// progFor compiles the line-confined program of a pattern (what lineDFA
// runs), whether or not the pattern has a required literal.
func progFor(pattern string) (*syntax.Prog, error) {
	tree, err := syntax.Parse(pattern, syntax.Perl&^syntax.OneLine&^syntax.ClassNL)
	if err != nil {
		return nil, err
	}
	return syntax.Compile(lineConfine(tree.Simplify()))
}

// lineConfine rewrites a parsed regexp so that no match can cross a line
// end: "." never matches "\n" (even under (?s)), classes lose "\n", a
// literal newline can never match, and \A, \z become ^, $ of a line.
func lineConfine(re *syntax.Regexp) *syntax.Regexp {
	switch re.Op {
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpCharClass:
		re.Rune = removeNewline(re.Rune)
		if len(re.Rune) == 0 {
			re.Op = syntax.OpNoMatch
		}
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return &syntax.Regexp{Op: syntax.OpNoMatch}
			}
		}
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		re.Op = syntax.OpEndLine
	}
	for i, s := range re.Sub {
		re.Sub[i] = lineConfine(s)
	}
	return re
}

// removeNewline drops '\n' from a class given as sorted [lo, hi] pairs.
func removeNewline(ranges []rune) []rune {
	out := make([]rune, 0, len(ranges)+2)
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo <= '\n' && '\n' <= hi {
			if lo < '\n' {
				out = append(out, lo, '\n'-1)
			}
			if hi > '\n' {
				out = append(out, '\n'+1, hi)
			}
			continue
		}
		out = append(out, lo, hi)
	}
	return out
}

// requiredLiteral returns the longest case-sensitive literal that every
// match must contain, or nil.
func requiredLiteral(re *syntax.Regexp) []byte {
	var best []byte
	consider := func(b []byte) {
		if len(b) > len(best) {
			best = b
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			consider(runesToBytes(re.Rune))
		}
	case syntax.OpCapture:
		consider(requiredLiteral(re.Sub[0]))
	case syntax.OpPlus:
		consider(requiredLiteral(re.Sub[0]))
	case syntax.OpRepeat:
		if re.Min >= 1 {
			consider(requiredLiteral(re.Sub[0]))
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			consider(requiredLiteral(s))
		}
	}
	return best
}

func runesToBytes(rs []rune) []byte {
	b := make([]byte, 0, len(rs))
	for _, r := range rs {
		b = utf8.AppendRune(b, r)
	}
	return b
}
