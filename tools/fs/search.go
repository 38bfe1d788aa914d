package fs

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"syscall"
	"unicode/utf8"

	"staage/tools"
	"staage/tools/workspace"
)

// Match is one line file_search found.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`

	clipped bool
}

// searchLimits bound one search.
type searchLimits struct {
	maxFileBytes int64 // larger files are skipped (skippedLarge)
	maxScanBytes int64 // bytes read across files before scanCapped
	maxEntries   int   // directory entries walked before scanCapped
	lineClip     int   // bytes of a line returned
	workers      int
	// bufs, when set, recycles read buffers across calls (the handler
	// owns one): a fresh 256 KiB buffer per worker per page was a tenth
	// of the CPU of a search paged to its end.
	bufs *sync.Pool
}

// readBufSize is a worker's first read buffer. A larger file grows it to
// the file's size, once; the grown buffer serves the rest of the call but
// goes back to the handler's pool only up to keepBufSize.
const (
	readBufSize = 256 << 10
	keepBufSize = 1 << 20
)

func defaultSearchLimits() searchLimits {
	return searchLimits{
		maxFileBytes: MaxSearchFileBytes,
		maxScanBytes: MaxScanBytes,
		maxEntries:   MaxWalkEntries,
		lineClip:     MaxSearchLineBytes,
		workers:      max(runtime.GOMAXPROCS(0), 2),
	}
}

// searchResult is what one page of a search found.
type searchResult struct {
	matches []Match
	files   int // files read
	tools.Bounds
}

// fileOut is what one worker found in one file.
type fileOut struct {
	rel           string
	matches       []Match // at most limit+1 past the cursor: enough to fill a page and know there is more
	size          int64   // bytes read
	binary, large bool
	read          bool
}

// batchSize is how many files travel together between the walker, the
// workers and the collector: one channel operation per file made the
// scheduler, not the search, the cost.
const batchSize = 16

type batch struct {
	idx   int
	files []walkFile
	outs  []fileOut
}

// search runs q over the files matching glob (nil: all) after the cursor,
// and returns at most limit matches in path and line order. Files are read
// by parallel workers; results are taken in walk order, so a page is the
// same whatever the scheduling.
func search(ctx context.Context, ws *workspace.Root, q *query, glob *matcher, after cursor, limit int, lim searchLimits) (searchResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	jobs := make(chan *batch, 2)
	done := make(chan *batch, 2)
	var walkCapped bool
	var lastWalked string
	// A bug in a goroutine here must not take the process down: the
	// call fails with tool.failed instead.
	var crashMu sync.Mutex
	var crash error
	recoverTo := func(who string) {
		if r := recover(); r != nil {
			crashMu.Lock()
			if crash == nil {
				crash = fmt.Errorf("file_search %s panicked: %v", who, r)
			}
			crashMu.Unlock()
			cancel()
		}
	}
	go func() {
		defer close(jobs)
		defer recoverTo("walker")
		cur := &batch{}
		send := func() bool {
			select {
			case jobs <- cur:
				cur = &batch{idx: cur.idx + 1}
				return true
			case <-ctx.Done():
				for _, f := range cur.files {
					f.dir.release()
				}
				cur.files = nil
				return false
			}
		}
		opt := walkOptions{after: after, maxEntries: lim.maxEntries}
		if glob != nil {
			opt.prefix = glob.prefix
		}
		walkCapped, _ = walk(ctx, ws.OS(), opt, func(f walkFile) bool {
			if glob != nil && !glob.match(f.rel, f.name) {
				return true
			}
			f.dir.retain()
			cur.files = append(cur.files, f)
			lastWalked = f.rel
			if len(cur.files) == batchSize {
				return send()
			}
			return true
		})
		if len(cur.files) > 0 {
			send()
		}
	}()

	var wg sync.WaitGroup
	for range lim.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer recoverTo("worker")
			s := scanner{q: q, lim: lim, perFile: limit + 1}
			if lim.bufs != nil {
				if b, ok := lim.bufs.Get().(*[]byte); ok {
					s.buf = *b
				}
				defer func() {
					if cap(s.buf) <= keepBufSize {
						lim.bufs.Put(&s.buf)
					}
				}()
			}
			for b := range jobs {
				b.outs = make([]fileOut, len(b.files))
				for i, f := range b.files {
					if ctx.Err() == nil {
						line := 0
						if f.rel == after.Path {
							line = after.Line
						}
						b.outs[i] = s.file(f, line)
					}
					b.outs[i].rel = f.rel
					f.dir.release()
				}
				b.files = nil
				done <- b
			}
		}()
	}
	go func() {
		wg.Wait()
		close(done)
	}()

	var res searchResult
	pending := map[int]*batch{}
	next := 0
	var scanned int64
	stopped := false
	for b := range done {
		if stopped {
			continue
		}
		pending[b.idx] = b
		for !stopped {
			o, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			for _, out := range o.outs {
				if stopped = res.take(out, limit, &scanned, lim.maxScanBytes); stopped {
					break
				}
			}
		}
		if stopped {
			cancel()
		}
	}
	if crash != nil {
		return searchResult{}, crash
	}
	if stopped {
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if walkCapped {
		res.ScanCapped = true
		if lastWalked != "" {
			res.NextCursor = cursor{Path: lastWalked, Line: math.MaxInt32}.encode()
		}
	}
	return res, nil
}

// take adds one file's outcome in order; true means the page is done.
func (r *searchResult) take(o fileOut, limit int, scanned *int64, maxScan int64) bool {
	switch {
	case o.large:
		r.SkippedLarge++
	case o.binary:
		r.SkippedBinary++
	}
	if o.read {
		r.files++
	}
	*scanned += o.size
	for _, m := range o.matches {
		if len(r.matches) == limit {
			r.Truncated = true
			last := r.matches[len(r.matches)-1]
			r.NextCursor = cursor{Path: last.Path, Line: last.Line}.encode()
			return true
		}
		r.matches = append(r.matches, m)
		if m.clipped {
			r.ClippedLines++
		}
	}
	if *scanned > maxScan {
		r.ScanCapped = true
		r.NextCursor = cursor{Path: o.rel, Line: math.MaxInt32}.encode()
		return true
	}
	return false
}

// scanner is one worker's state: the read buffer is reused across files.
type scanner struct {
	q       *query
	lim     searchLimits
	perFile int
	buf     []byte
	dfa     *lineDFA // built on first use, one per worker
}

func (s *scanner) file(f walkFile, afterLine int) fileOut {
	var out fileOut
	fd, err := f.dir.openat(f.name, syscall.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return out
	}
	data, st := s.read(fd)
	syscall.Close(fd)
	out.size = int64(len(data))
	switch st {
	case readNotRegular:
		return out
	case readLarge:
		out.large = true
		return out
	case readBinary:
		out.read = true
		out.binary = true
		return out
	}
	out.read = true
	s.scan(&out, f.rel, data, afterLine)
	return out
}

type readState int

const (
	readText readState = iota
	readBinary
	readLarge
	readNotRegular
)

// read reads a whole text file into the reused buffer. Most files fit the
// buffer and cost open, read, read, close. A file whose first read shows a
// NUL in its first 8 KiB is binary and is not read further; only a file
// that fills the buffer is stat'ed, to refuse what is not a regular file or
// is over the size cap without reading the rest. The directory entry said
// "regular" and the open was O_NONBLOCK, so a FIFO swapped in meanwhile
// reads as empty rather than blocking.
func (s *scanner) read(fd int) ([]byte, readState) {
	if len(s.buf) == 0 {
		s.buf = make([]byte, readBufSize)
	}
	buf := s.buf
	n := 0
	statted := false
	for {
		if n == len(buf) {
			size := int64(2 * len(buf))
			if !statted {
				statted = true
				var st syscall.Stat_t
				if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
					return nil, readNotRegular
				}
				if st.Size > s.lim.maxFileBytes {
					return nil, readLarge
				}
				size = max(size, st.Size+1)
			}
			if int64(n) > s.lim.maxFileBytes {
				return buf[:n], readLarge
			}
			// One allocation of the file's size, not a doubling
			// series.
			nb := make([]byte, size)
			copy(nb, buf[:n])
			s.buf, buf = nb, nb
		}
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			break
		}
		first := n == 0
		n += m
		if first && workspace.IsBinary(buf[:n]) {
			return buf[:n], readBinary
		}
	}
	if int64(n) > s.lim.maxFileBytes {
		return buf[:n], readLarge
	}
	// The first read may have been short of the 8 KiB IsBinary looks at.
	if workspace.IsBinary(buf[:n]) {
		return buf[:n], readBinary
	}
	return buf[:n], readText
}

// scan finds matching lines: one Match per line, line numbers counted
// incrementally with bytes.Count, no per-line allocation except for hits.
func (s *scanner) scan(out *fileOut, rel string, data []byte, afterLine int) {
	q := s.q
	line := 1
	counted := 0 // newlines before this offset are in line
	pos := 0     // search resumes here, always at a line start
	for pos <= len(data) {
		var start, end int // the match within data
		switch {
		case q.literal != nil:
			i := q.finder.index(data[pos:])
			if i < 0 {
				return
			}
			start, end = pos+i, pos+i+len(q.literal)
		case q.required != nil:
			i := q.finder.index(data[pos:])
			if i < 0 {
				return
			}
			at := pos + i
			ls := bytes.LastIndexByte(data[:at], '\n') + 1
			le := lineEnd(data, at)
			if s.dfa == nil {
				s.dfa = newLineDFA(q.prog)
			}
			var loc []int
			if _, _, ok := s.dfa.nextMatchLine(data[:le], ls); ok {
				if loc = q.re.FindIndex(data[ls:le]); loc == nil {
					loc = []int{0, 0}
				}
			}
			if loc == nil {
				line += bytes.Count(data[counted:le], nl)
				if le >= len(data) {
					return
				}
				line++
				counted = le + 1
				pos = le + 1
				continue
			}
			start, end = ls+loc[0], ls+loc[1]
		default:
			if s.dfa == nil {
				s.dfa = newLineDFA(q.prog)
			}
			ls, le, ok := s.dfa.nextMatchLine(data, pos)
			if !ok {
				return
			}
			start, end = ls, ls
			if loc := q.re.FindIndex(data[ls:le]); loc != nil {
				start, end = ls+loc[0], ls+loc[1]
			}
		}
		line += bytes.Count(data[counted:start], nl)
		counted = start
		ls := bytes.LastIndexByte(data[:start], '\n') + 1
		le := lineEnd(data, start)
		if line > afterLine {
			if len(out.matches) == s.perFile {
				return
			}
			text, clipped := clipLine(data[ls:le], start-ls, end-ls, s.lim.lineClip)
			out.matches = append(out.matches, Match{Path: rel, Line: line, Text: text, clipped: clipped})
		}
		if le >= len(data) {
			return
		}
		line++
		counted = le + 1
		pos = le + 1
	}
}

var nl = []byte{'\n'}

func lineEnd(data []byte, at int) int {
	if i := bytes.IndexByte(data[at:], '\n'); i >= 0 {
		return at + i
	}
	return len(data)
}

// clipLine returns the line without a trailing CR, cut to at most max bytes
// on rune boundaries around the match [ms, me) when it is longer.
func clipLine(l []byte, ms, me, limit int) (string, bool) {
	if n := len(l); n > 0 && l[n-1] == '\r' {
		l = l[:n-1]
	}
	if len(l) <= limit {
		return string(l), false
	}
	from := 0
	if me > limit {
		// Keep some text before the match, then as much as fits.
		from = max(min(ms-limit/4, len(l)-limit), 0)
	}
	to := min(from+limit, len(l))
	for from > 0 && from < len(l) && !utf8.RuneStart(l[from]) {
		from++
	}
	for to < len(l) && to > from && !utf8.RuneStart(l[to]) {
		to--
	}
	return string(l[from:to]), true
}
