package proc

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// Limits bound captured output: the first Head bytes and the last Tail bytes
// are kept; the middle is counted, not stored. Zero values take the defaults.
type Limits struct {
	Head int
	Tail int
}

// Default limits: a failing build says most in its last lines, so the tail
// is the larger half.
const (
	DefaultHead = 8 << 10
	DefaultTail = 24 << 10
)

func (l Limits) withDefaults() Limits {
	if l.Head <= 0 {
		l.Head = DefaultHead
	}
	if l.Tail <= 0 {
		l.Tail = DefaultTail
	}
	return l
}

// capture keeps a head and a ring-buffer tail and counts everything.
type capture struct {
	mu    sync.Mutex
	lim   Limits
	head  []byte
	tail  []byte // ring of lim.Tail bytes once full
	pos   int    // next write position in tail once it is full
	full  bool
	total int64
	lines int64 // newlines seen in total
}

func newCapture(l Limits) *capture {
	l = l.withDefaults()
	return &capture{lim: l, head: make([]byte, 0, min(l.Head, 4096))}
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	c.total += int64(n)
	c.lines += int64(bytes.Count(p, []byte{'\n'}))
	if room := c.lim.Head - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if !c.full {
			room := c.lim.Tail - len(c.tail)
			k := min(room, len(p))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			if len(c.tail) == c.lim.Tail {
				c.full = true
				c.pos = 0
			}
			continue
		}
		// Keep only what can still matter: the last Tail bytes of p.
		if len(p) > c.lim.Tail {
			p = p[len(p)-c.lim.Tail:]
		}
		k := copy(c.tail[c.pos:], p)
		p = p[k:]
		c.pos = (c.pos + k) % c.lim.Tail
	}
	return n, nil
}

// result assembles the bounded text. When bytes were dropped, the tail starts
// at a line boundary and a marker line names how many lines were clipped.
func (c *capture) result() (text string, clipped int, truncated bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var tail []byte
	if c.full {
		tail = append(append([]byte{}, c.tail[c.pos:]...), c.tail[:c.pos]...)
	} else {
		tail = c.tail
	}
	kept := int64(len(c.head) + len(tail))
	if kept == c.total {
		return validUTF8(string(c.head) + string(tail)), 0, false
	}
	// Drop the partial first line of the tail so it starts cleanly.
	if i := bytes.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 {
		tail = tail[i+1:]
	}
	head := c.head
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1]
	}
	keptLines := int64(bytes.Count(head, []byte{'\n'}) + bytes.Count(tail, []byte{'\n'}))
	clipped = int(c.lines - keptLines)
	if clipped < 1 {
		clipped = 1 // part of a line was dropped at least
	}
	var b strings.Builder
	b.Write(head)
	if len(head) > 0 && head[len(head)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "… [%d lines clipped] …\n", clipped)
	b.Write(tail)
	return validUTF8(b.String()), clipped, true
}

// validUTF8 replaces invalid sequences, so the output is safe to put in JSON
// and cut at byte boundaries without producing garbage runes.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
