package fs

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
)

// lineMatches lists the 0-based lines the DFA reports, and the lines the
// confined regexp matches one by one: they must agree.
func lineMatches(t testing.TB, q *query, text string) (dfa, re []int) {
	return lineMatchesWith(t, newLineDFA(q.prog), q, text)
}

func lineMatchesWith(t testing.TB, d *lineDFA, q *query, text string) (dfa, re []int) {
	data := []byte(text)
	pos := 0
	for pos <= len(data) {
		ls, le, ok := d.nextMatchLine(data, pos)
		if !ok {
			break
		}
		if ls < pos || le < ls || le > len(data) || (le < len(data) && data[le] != '\n') || (ls > 0 && data[ls-1] != '\n') {
			t.Fatalf("bad line bounds [%d,%d) from %d in %q", ls, le, pos, text)
		}
		dfa = append(dfa, strings.Count(text[:ls], "\n"))
		pos = le + 1
	}
	lines := strings.Split(text, "\n")
	if strings.HasSuffix(text, "\n") || text == "" { // an empty file has no line
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if q.re.MatchString(l) {
			re = append(re, i)
		}
	}
	return dfa, re
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestLineDFAAgreesWithRegexp(t *testing.T) {
	patterns := []string{
		`[0-9]{2,}`, `^a`, `b$`, `^$`, `\bfoo\b`, `\Bo\B`, `x*`, `(?i)héllo`, `[^a-z]+`,
		`a|bc|d$`, `(ab)+c?`, `.`, `^.{3}$`, `é+`, `\pL\d`, `(?s).a`, `a\sb`, `[[:upper:]]{2}`,
		`^\s*//`, `\w+\(\)`, `z{0}`, `(?m)^x$`, `(a|ab)(c|bcd)(d*)`, `[^\n]x`,
	}
	texts := []string{
		"", "a", "\n", "a\nb\n", "foo bar\nfoobar\n foo\n", "héllo HÉLLO\n", "12 345\nx\n\n",
		"ab abc\nababc\r\n", "\xff\xfe invalid\n", "emoji 🙂x\nlast line without newline", "zzz\n\n\n",
		"a b\na\tb\nab\n", "AB cd EF\n", "  // comment\ncode // trailing\n", "f() g(x)\n", "abcd\nabcbcd\n",
	}
	for _, p := range patterns {
		q, err := compileQuery(p, false)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if q.prog == nil {
			q.prog = compileProg(t, p)
		}
		for _, text := range texts {
			if d, r := lineMatches(t, q, text); !equalInts(d, r) {
				t.Errorf("%q on %q: dfa lines %v, regexp lines %v", p, text, d, r)
			}
		}
	}
}

// compileProg builds the DFA program for a pattern that has a required
// literal (the search would use the literal, the test wants the DFA).
func compileProg(t testing.TB, p string) *syntax.Prog {
	t.Helper()
	prog, err := progFor(p)
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

func TestLineDFACacheReset(t *testing.T) {
	// Many distinct states: (a|b)*a(a|b){8} needs 2^9 DFA states; with
	// the cache capped at 16 it is dropped and rebuilt again and again.
	q, err := compileQuery(`[ab]*a[ab]{8}x`, false)
	if err != nil {
		t.Fatal(err)
	}
	if q.prog == nil {
		t.Fatal("expected the DFA path")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var b strings.Builder
	for range 200 {
		for range 60 {
			b.WriteByte("ab"[rng.IntN(2)])
		}
		if rng.IntN(3) == 0 {
			b.WriteByte('x')
		}
		b.WriteByte('\n')
	}
	dfa := newLineDFA(q.prog)
	dfa.maxStates = 16
	d, r := lineMatchesWith(t, dfa, q, b.String())
	if !equalInts(d, r) {
		t.Fatalf("dfa %v regexp %v", d, r)
	}
	if dfa.resets == 0 || len(r) == 0 {
		t.Fatalf("the cache was never reset (%d resets, %d matches)", dfa.resets, len(r))
	}
}

func FuzzLineDFA(f *testing.F) {
	f.Add(`[0-9]+x`, "a1x\nb\n12x")
	f.Add(`^\s*$`, "\n \n\t\nx")
	f.Add(`\bé\B`, "é éé\n")
	f.Fuzz(func(t *testing.T, pattern, text string) {
		if len(pattern) > 64 || len(text) > 512 {
			return
		}
		prog, err := progFor(pattern)
		if err != nil {
			return
		}
		q, err := compileQuery(pattern, false)
		if err != nil {
			return
		}
		q.prog = prog
		if _, err := regexp.Compile(pattern); err != nil {
			return
		}
		if d, r := lineMatches(t, q, text); !equalInts(d, r) {
			t.Fatalf("%q on %q: dfa lines %v, regexp lines %v", pattern, text, d, r)
		}
	})
}
