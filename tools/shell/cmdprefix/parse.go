// Package cmdprefix decides whether a bash command is covered by a prefix
// grant ("go test", "git status"). It answers yes only for a command it fully
// understands: one simple command of plain literal words, parsed with
// mvdan.cc/sh, whose leading words are the prefix and whose other words carry
// no flag known to run a program. Anything else (chaining, pipes, background
// jobs, substitutions, redirections, here-docs, assignments, wrappers such as
// bash -c or xargs, globs, escapes, non-ASCII text, unparseable input) asks
// the operator again.
package cmdprefix

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// MaxCommandBytes bounds what the parser is given.
const MaxCommandBytes = 16 << 10

// Simple parses cmd and returns its words when it is exactly one simple
// command made of literal words. The error says, for the operator, why it is
// not.
func Simple(cmd string) ([]string, error) {
	if len(cmd) > MaxCommandBytes {
		return nil, errors.New("too long")
	}
	for i, r := range cmd {
		// Printable ASCII and the space only: no newline, no tab, no
		// control or format character, no look-alike of a letter or a
		// separator from another script.
		if r < 0x20 || r > 0x7e {
			return nil, fmt.Errorf("character %q at byte %d is not plain ASCII text", r, i)
		}
	}
	p := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true))
	f, err := p.Parse(strings.NewReader(cmd), "")
	if err != nil {
		return nil, fmt.Errorf("does not parse: %w", err)
	}
	if len(f.Stmts) != 1 {
		return nil, fmt.Errorf("%d statements, not one", len(f.Stmts))
	}
	if len(f.Last) > 0 {
		return nil, errors.New("has a comment")
	}
	st := f.Stmts[0]
	switch {
	case len(st.Comments) > 0:
		return nil, errors.New("has a comment")
	case st.Negated:
		return nil, errors.New("is negated")
	case st.Background || st.Coprocess || st.Disown:
		return nil, errors.New("runs in the background")
	case len(st.Redirs) > 0:
		return nil, errors.New("has a redirection")
	case st.Semicolon.IsValid():
		return nil, errors.New("ends with a separator")
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		return nil, fmt.Errorf("is not a simple command (%T)", st.Cmd)
	}
	if len(call.Assigns) > 0 {
		return nil, errors.New("sets environment variables")
	}
	if len(call.Args) == 0 {
		return nil, errors.New("has no command")
	}
	words := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		v, err := literal(w)
		if err != nil {
			return nil, err
		}
		words = append(words, v)
	}
	if words[0] == "" {
		return nil, errors.New("empty command name")
	}
	return words, nil
}

// unquotedSpecial are the characters that make bash do something to an
// unquoted word: escapes, globs, braces, tilde, expansions, history.
const unquotedSpecial = "\\*?[]{}~$!`"

// literal is the value bash gives a word, when the word is plain text: bare
// literals without special characters, single quotes, and double quotes
// holding only plain text.
func literal(w *syntax.Word) (string, error) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, unquotedSpecial) {
				return "", fmt.Errorf("word %q has a special character", p.Value)
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", errors.New("has $'...' quoting")
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", errors.New(`has $"..." quoting`)
			}
			for _, dp := range p.Parts {
				lit, ok := dp.(*syntax.Lit)
				if !ok {
					return "", fmt.Errorf("has an expansion inside double quotes (%T)", dp)
				}
				if strings.ContainsAny(lit.Value, "\\$`!") {
					return "", errors.New("has an escape or expansion inside double quotes")
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", fmt.Errorf("has an expansion or substitution (%T)", part)
		}
	}
	return b.String(), nil
}
