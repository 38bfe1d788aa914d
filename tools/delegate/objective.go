package delegate

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Minimums for an objective a child can act on. A child starts with none of
// the parent's context: "look into it" names nothing to look into.
const (
	minObjectiveWords   = 4
	minObjectiveContent = 2
)

// vagueList holds words that carry no subject on their own: pronouns,
// articles, fillers, and verbs and nouns that say "do something about
// something".
const vagueList = `a an the this that these those it its them they there here
	and or but so to of in on at for from with by into onto about around over out up
	is are be been was were do does did done can could would should will shall may might must
	please just also some any all every more stuff thing things something anything everything
	whatever look see check help fix investigate explore figure go make sure work handle deal
	code bug bugs issue issues problem problems error errors me my our we us you your i what why how`

// checkObjective trims the objective and returns what is wrong with it,
// or "" when a child can act on it. The rule: at least four words, at
// least two of which are not vague (names, paths, identifiers, specific
// verbs and nouns), and at most MaxObjectiveRunes characters.
func checkObjective(s string) (string, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return s, "the objective is empty; say what the child should find or change, where, and what to bring back"
	}
	if n := utf8.RuneCountInString(s); n > MaxObjectiveRunes {
		return s, fmt.Sprintf("the objective is %d characters, over %d; a child takes one bounded objective", n, MaxObjectiveRunes)
	}
	vague := map[string]bool{}
	for _, w := range strings.Fields(vagueList) {
		vague[w] = true
	}
	words, content := 0, 0
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(",;:!?()[]{}\"'`", r)
	}) {
		if !strings.ContainsFunc(tok, unicode.IsLetter) {
			continue
		}
		words++
		if !vague[strings.ToLower(strings.Trim(tok, "."))] {
			content++
		}
	}
	if words < minObjectiveWords || content < minObjectiveContent {
		return s, fmt.Sprintf("the objective %q is too vague for a child that has none of your context; "+
			"name what to find or change (files, functions, symptoms) and what answer to bring back", clipRunes(s, 200))
	}
	return s, ""
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
