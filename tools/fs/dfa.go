package fs

import (
	"bytes"
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// lineDFA answers one question fast: does this line contain a match? It is
// a lazily built DFA over the compiled program of a line-confined regexp
// (see lineConfine), for patterns with no literal to look for first, where
// Go's regexp (an NFA simulation on large inputs) is tens of times slower
// than ripgrep. States are sets of program counters, built on first use
// and cached, with a transition table for ASCII and a map for other runes.
// Only lines it reports are handed to regexp for the match's position.
//
// Empty-width assertions (^, $, \b, \B) are resolved when the next rune is
// known: a state also remembers the class of the rune before it.
type lineDFA struct {
	prog   *syntax.Prog
	states map[string]*dstate
	start  *dstate
	key    []byte // scratch for state keys
	stack  []uint32
	seen   []uint32 // generation marks per pc, for closures
	gen    uint32
	// matched is the sentinel target of a transition that finds a match.
	matched *dstate
	// needWord and needLine say which assertions the program has; the
	// class of the previous rune is only kept as far as they need it, so
	// that "nothing in progress" is one state (or two, or three), not one
	// per class.
	needWord, needLine bool
	// maxStates is maxDFAStates (tests lower it to exercise the reset).
	maxStates int
	resets    int
}

// maxDFAStates bounds the cache; past it the cache is dropped and rebuilt,
// so memory stays bounded whatever the pattern.
const maxDFAStates = 4096

// prev classes: what came before the current position.
const (
	prevLineStart = iota // start of a line (or of the text)
	prevWord             // a word character [0-9A-Za-z_]
	prevOther
)

type dstate struct {
	pcs  []uint32 // unresolved: rune and empty-width instructions' targets
	prev uint8
	// fast is the transition on each ASCII byte once computed. nil
	// sends the scan to the slow path: not computed yet, a transition
	// that finds a match, or a byte that starts a multi-byte rune.
	fast [256]*dstate
	// stay marks the ASCII bytes whose transition is back to this same
	// state (1), filled as transitions are computed; nstay counts them.
	// Runs of such bytes are skipped by a loop with no dependency from one
	// byte to the next, several times faster than stepping the DFA: an
	// idle state skips ordinary text, "[a-z]+" skips a word.
	stay  [256]byte
	nstay int
	other map[rune]*dstate
	end   int8 // 0 unknown, 1 no match at the end of the line, 2 match
}

func newLineDFA(prog *syntax.Prog) *lineDFA {
	d := &lineDFA{prog: prog, seen: make([]uint32, len(prog.Inst)), matched: &dstate{}, maxStates: maxDFAStates}
	for _, inst := range prog.Inst {
		if inst.Op == syntax.InstEmptyWidth {
			op := syntax.EmptyOp(inst.Arg)
			d.needWord = d.needWord || op&(syntax.EmptyWordBoundary|syntax.EmptyNoWordBoundary) != 0
			d.needLine = d.needLine || op&(syntax.EmptyBeginLine|syntax.EmptyBeginText) != 0
		}
	}
	d.reset()
	return d
}

func (d *lineDFA) reset() {
	d.states = make(map[string]*dstate)
	d.start = d.state(nil, prevLineStart)
}

// canonical folds previous-rune classes the program cannot tell apart: for
// \b a line start is a non-word position; without ^ or \b nothing is kept.
func (d *lineDFA) canonical(prev uint8) uint8 {
	switch {
	case !d.needWord && !d.needLine:
		return prevOther
	case !d.needLine && prev == prevLineStart:
		return prevOther
	case !d.needWord && prev == prevWord:
		return prevOther
	}
	return prev
}

// state interns the state (pcs, prev); pcs must be sorted and unique.
func (d *lineDFA) state(pcs []uint32, prev uint8) *dstate {
	prev = d.canonical(prev)
	d.key = d.key[:0]
	d.key = append(d.key, prev)
	for _, pc := range pcs {
		d.key = append(d.key, byte(pc), byte(pc>>8), byte(pc>>16), byte(pc>>24))
	}
	if s, ok := d.states[string(d.key)]; ok {
		return s
	}
	s := &dstate{pcs: slices.Clone(pcs), prev: prev}
	d.states[string(d.key)] = s
	return s
}

func prevRune(prev uint8) rune {
	switch prev {
	case prevLineStart:
		return '\n'
	case prevWord:
		return 'a'
	}
	return ' '
}

func classOf(r rune) uint8 {
	if syntax.IsWordChar(r) {
		return prevWord
	}
	return prevOther
}

// closure follows the empty transitions of s's pcs, plus the program start
// (the search is unanchored), under the assertions that hold between the
// previous rune and next (-1: end of line). It returns the rune
// instructions reached and whether a match instruction was.
func (d *lineDFA) closure(s *dstate, next rune) (runes []uint32, matched bool) {
	var flags syntax.EmptyOp
	if next < 0 {
		flags = syntax.EmptyOpContext(prevRune(s.prev), '\n')
	} else {
		flags = syntax.EmptyOpContext(prevRune(s.prev), next)
	}
	d.gen++
	if d.gen == 0 {
		clear(d.seen)
		d.gen = 1
	}
	d.stack = append(d.stack[:0], uint32(d.prog.Start))
	d.stack = append(d.stack, s.pcs...)
	for len(d.stack) > 0 {
		pc := d.stack[len(d.stack)-1]
		d.stack = d.stack[:len(d.stack)-1]
		if d.seen[pc] == d.gen {
			continue
		}
		d.seen[pc] = d.gen
		inst := &d.prog.Inst[pc]
		switch inst.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			d.stack = append(d.stack, inst.Out, inst.Arg)
		case syntax.InstCapture, syntax.InstNop:
			d.stack = append(d.stack, inst.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(inst.Arg)&^flags == 0 {
				d.stack = append(d.stack, inst.Out)
			}
		case syntax.InstMatch:
			matched = true
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			runes = append(runes, pc)
		}
	}
	return runes, matched
}

// step computes the transition of s on r: the next state, or d.matched.
func (d *lineDFA) step(s *dstate, r rune) *dstate {
	runes, matched := d.closure(s, r)
	if matched {
		return d.matched
	}
	var next []uint32
	for _, pc := range runes {
		inst := &d.prog.Inst[pc]
		if inst.MatchRune(r) {
			next = append(next, inst.Out)
		}
	}
	slices.Sort(next)
	next = slices.Compact(next)
	if len(d.states) >= d.maxStates {
		// Drop the cache; s stays valid (the caller holds it) and is
		// re-interned as needed.
		d.reset()
		d.resets++
	}
	return d.state(next, classOf(r))
}

func (d *lineDFA) endMatch(s *dstate) bool {
	if s.end == 0 {
		_, m := d.closure(s, -1)
		s.end = 1
		if m {
			s.end = 2
		}
	}
	return s.end == 2
}

// nextMatchLine returns the start and end (exclusive, before '\n') of the
// first line at or after pos that contains a match, or ok false. pos must
// be at a line start. The newline is a transition like any other: to the
// start state, or to matched when the line ends in a match. The hot loop
// is one table load and one nil check a byte.
func (d *lineDFA) nextMatchLine(data []byte, pos int) (ls, le int, ok bool) {
	s := d.start
	i := pos
	for i < len(data) {
		if s.nstay > 0 {
			stay := &s.stay
			// Byte by byte; a run that lasts goes on eight bytes a
			// round, combined without branches (short runs, as in
			// words, would only pay for the failed rounds).
			for run := 0; i < len(data) && stay[data[i]] != 0; run++ {
				i++
				if run == 16 {
					for i+8 <= len(data) {
						w := data[i : i+8 : i+8]
						if stay[w[0]]&stay[w[1]]&stay[w[2]]&stay[w[3]]&stay[w[4]]&stay[w[5]]&stay[w[6]]&stay[w[7]] == 0 {
							break
						}
						i += 8
					}
				}
			}
			if i == len(data) {
				break
			}
		}
		if t := s.fast[data[i]]; t != nil {
			s = t
			i++
			continue
		}
		b := data[i]
		var t *dstate
		n := 1
		if b < utf8.RuneSelf {
			t = d.stepByte(s, b)
			if t != d.matched {
				s.fast[b] = t
				if t == s {
					s.stay[b] = 1
					s.nstay++
				}
			}
		} else {
			var r rune
			r, n = utf8.DecodeRune(data[i:])
			var found bool
			if t, found = s.other[r]; !found {
				t = d.step(s, r)
				if s.other == nil {
					s.other = make(map[rune]*dstate)
				}
				s.other[r] = t
			}
		}
		if t == d.matched {
			ls = pos
			if j := bytes.LastIndexByte(data[pos:i], '\n'); j >= 0 {
				ls = pos + j + 1
			}
			if b == '\n' {
				return ls, i, true
			}
			return ls, lineEnd(data, i), true
		}
		s = t
		i += n
	}
	// An unterminated last line ends at the end of the data.
	if len(data) > pos && data[len(data)-1] != '\n' && d.endMatch(s) {
		ls = pos
		if j := bytes.LastIndexByte(data[pos:], '\n'); j >= 0 {
			ls = pos + j + 1
		}
		return ls, len(data), true
	}
	return 0, 0, false
}

// stepByte is step for an ASCII byte, with '\n' ending the line.
func (d *lineDFA) stepByte(s *dstate, b byte) *dstate {
	if b == '\n' {
		if d.endMatch(s) {
			return d.matched
		}
		return d.start
	}
	return d.step(s, rune(b))
}
