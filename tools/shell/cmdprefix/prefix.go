package cmdprefix

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// prefixWord is what one word of a grantable prefix may look like: a program
// name or path, a subcommand, a module name. No shell syntax, no spaces.
var prefixWord = regexp.MustCompile(`^[A-Za-z0-9_./+:@%-]+$`)

// subcommand is what a second word must look like to be proposed.
var subcommand = regexp.MustCompile(`^[a-z][a-z0-9._:-]*$`)

// Words splits a granted prefix into its words; ok is false for a prefix that
// could never be matched safely.
func Words(prefix string) ([]string, bool) {
	ws := strings.Fields(prefix)
	if len(ws) == 0 {
		return nil, false
	}
	for _, w := range ws {
		if !prefixWord.MatchString(w) {
			return nil, false
		}
	}
	if wrappers[path.Base(ws[0])] {
		return nil, false
	}
	return ws, true
}

// Matches reports whether cmd is covered by a grant for prefix: it is one
// simple command of literal words, its leading words are the prefix's words,
// and nothing in it asks again.
func Matches(cmd, prefix string) bool {
	pw, ok := Words(prefix)
	if !ok {
		return false
	}
	words, err := Simple(cmd)
	if err != nil || len(words) < len(pw) || !slices.Equal(words[:len(pw)], pw) {
		return false
	}
	return !dangerous(words, len(pw))
}

// Why says in one line why cmd is not covered by prefix ("" when it is), for
// the approval modal and tests.
func Why(cmd, prefix string) string {
	pw, ok := Words(prefix)
	if !ok {
		return "the prefix is not grantable"
	}
	words, err := Simple(cmd)
	if err != nil {
		return "the command " + err.Error()
	}
	if len(words) < len(pw) || !slices.Equal(words[:len(pw)], pw) {
		return "the command does not start with the prefix"
	}
	if dangerous(words, len(pw)) {
		return "the command uses a wrapper, a subcommand or a flag that runs other programs"
	}
	return ""
}

// Candidates proposes the prefixes the operator may grant for cmd, shortest
// first: the program, and the program with its subcommand. An interpreter is
// proposed only with its module (python3 -m pytest). None when the command
// could not be covered by any prefix.
func Candidates(cmd string) []string {
	words, err := Simple(cmd)
	if err != nil {
		return nil
	}
	var out []string
	add := func(n int) {
		if n > len(words) {
			return
		}
		p := strings.Join(words[:n], " ")
		if !slices.Contains(out, p) && Matches(cmd, p) {
			out = append(out, p)
		}
	}
	prog := path.Base(words[0])
	if _, interp := interpreters[prog]; interp {
		if len(words) >= 3 && words[1] == "-m" {
			add(3)
		}
		return out
	}
	add(1)
	if len(words) >= 2 && subcommand.MatchString(words[1]) {
		add(2)
	}
	return out
}
