package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"staage/agent"
)

// ErrLocked is returned when another staage process holds the session.
var ErrLocked = errors.New("session is open in another staage process")

// flushAt bounds the text held back while deltas are coalesced: past it the
// pending text is written (unsynced) even if the stream goes on.
const flushAt = 16 << 10

// durable reports whether events of this type are fsynced before Publish
// returns: the decisions and results a crash must not lose, and the
// conversation turns resume rebuilds history from.
func durable(typ string) bool {
	switch typ {
	case "user", "message", "approval", "tool_started", "tool_result", "turn_done", "child_started", "child_finished":
		return true
	}
	return false
}

// Writer appends a session's events to its journal. It implements
// agent.Sink. A write failure never panics or blocks the loop: the first one
// is kept (Err), reported once through the OnError hook, and later events are
// dropped so a half-written line is never followed by more data.
type Writer struct {
	mu      sync.Mutex
	f       *os.File
	path    string
	id      string
	red     *redactor
	size    int64 // bytes known to be in the file, all whole lines
	err     error
	onError func(error)
	closed  bool
	scratch []byte // reused line buffer
	dirty   bool   // written since the last fsync
	report  error  // a failure not yet handed to onError

	// Coalesced deltas: one pending run per lane, in the order the lanes
	// started streaming, so concurrent lanes (a parent and its children)
	// each still coalesce.
	pending []*run
}

// Create starts a new session journal <dir>/<ID>.jsonl, holding its lock
// until Close. The header is written and fsynced in a temp file that is
// linked into place, so a crash never leaves a journal without a header.
// An empty h.ID is minted; h.Version and h.Started are filled in if zero.
// Values of credential-looking environment variables are redacted from
// every line (see SecretsFromEnv).
func Create(dir string, h Header) (*Writer, error) {
	if h.ID == "" {
		h.ID = NewID(time.Now())
	}
	if !ValidID(h.ID) {
		return nil, fmt.Errorf("journal: invalid session id %q", h.ID)
	}
	if h.Version == 0 {
		h.Version = Version
	}
	if h.Started.IsZero() {
		h.Started = time.Now().UTC()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	line, err := encodeHeader(h)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, h.ID+".jsonl")
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("journal: session %s already exists", h.ID)
	}
	f, err := os.CreateTemp(dir, tempPrefix+h.ID+"-*")
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	tmp := f.Name()
	fail := func(err error) (*Writer, error) {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		return fail(err)
	}
	if err := lockFile(f); err != nil {
		return fail(err)
	}
	line = append(line, '\n')
	if _, err := f.Write(line); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	// Link, not rename: it fails if the name exists, so two processes can
	// never claim one ID. The open descriptor (and its lock) follows the inode.
	if err := os.Link(tmp, path); err != nil {
		return fail(err)
	}
	os.Remove(tmp)
	if err := syncDir(dir); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: %w", err)
	}
	if _, err := f.Seek(0, 2); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: %w", err)
	}
	return &Writer{f: f, path: path, id: h.ID, size: int64(len(line)), red: newRedactor(SecretsFromEnv(os.Environ()))}, nil
}

// Open locks an existing journal for resuming, reads it back and prepares it
// for appending: a torn last line is truncated away, and every tool call the
// conversation holds without a result gets a synthetic refusal appended
// (tool.interrupted if it had started, tool.cancelled if it never ran), so
// the model learns the call did not complete and nothing is re-run. Those
// results are part of Replay.Events. A journal from a newer format or with
// no readable header is refused with an error that says so.
func Open(path string) (*Writer, *Replay, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("journal: no session at %s: %w", path, err)
		}
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, ErrLocked) {
			return nil, nil, fmt.Errorf("journal: %s: %w; close it there first", filepath.Base(path), ErrLocked)
		}
		return nil, nil, fmt.Errorf("journal: lock %s: %w", path, err)
	}
	r, err := readFrom(f, path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if err := r.resumable(); err != nil {
		f.Close()
		return nil, nil, err
	}
	w := &Writer{f: f, path: path, id: r.Header.ID, size: r.good, red: newRedactor(SecretsFromEnv(os.Environ()))}
	if r.good < r.Size {
		if err := f.Truncate(r.good); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("journal: cut torn tail: %w", err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("journal: %w", err)
		}
	}
	for _, res := range r.settleUnanswered() {
		w.Publish(res)
		r.Events = append(r.Events, res)
	}
	if err := w.Err(); err != nil {
		w.Close()
		return nil, nil, err
	}
	return w, r, nil
}

// ID is the session's ID.
func (w *Writer) ID() string { return w.id }

// Path is the journal file.
func (w *Writer) Path() string { return w.path }

// OnError sets a hook called once, with the first write failure, so the
// console can show it. It runs after the writer's lock is released, so it
// may publish (an agent.Error to the console, say); anything it publishes
// back into this writer is dropped, since the writer has failed.
func (w *Writer) OnError(fn func(error)) {
	w.mu.Lock()
	w.onError = fn
	w.mu.Unlock()
}

// SetSecrets adds values that must never be written (beyond the ones taken
// from the environment at Create/Open).
func (w *Writer) SetSecrets(secrets ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	all := append(SecretsFromEnv(os.Environ()), secrets...)
	w.red = newRedactor(all)
}

// Err returns the first write failure, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Publish appends e. Text and thinking deltas are coalesced in memory, one
// run per lane; any other event first writes the pending runs, so the file
// keeps each lane's order and the order of everything else. Decisions, results and conversation turns are fsynced
// before Publish returns.
func (w *Writer) Publish(e agent.Event) {
	w.mu.Lock()
	defer w.unlock()
	if w.closed || w.err != nil {
		return
	}
	switch d := e.(type) {
	case agent.TextDelta:
		w.coalesce("text", d.Lane, d.Text)
		return
	case agent.ThinkingDelta:
		w.coalesce("thinking", d.Lane, d.Text)
		return
	}
	w.flushPending(false)
	line, err := agent.EncodeEvent(e)
	if err != nil {
		// An event that cannot be encoded is a bug in its producer; keep the
		// journal going and say what was lost.
		line, _ = agent.EncodeEvent(agent.Warning{Message: "journal: event not recorded: " + err.Error()})
	}
	w.write(line, durable(e.Type()))
}

// MarkResumed appends a line recording the provider and toolset the session
// continues with, fsynced, so the next resume compares digests against it.
func (w *Writer) MarkResumed(h Header) error {
	line, err := jsonLine(resumedLine{Type: lineResumed, At: time.Now().UTC(), Provider: h.Provider, Sandbox: h.Sandbox, Tools: h.Tools})
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.unlock()
	if w.closed {
		return errors.New("journal: closed")
	}
	w.flushPending(false)
	w.write(line, true)
	return w.err
}

// Flush writes pending coalesced text and fsyncs the file.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.unlock()
	if w.closed {
		return w.err
	}
	w.flushPending(true)
	return w.err
}

// Close flushes, fsyncs, releases the lock and closes the file. It is safe
// to call more than once.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.unlock()
	if w.closed {
		return w.err
	}
	w.flushPending(true)
	w.closed = true
	_ = unlockFile(w.f)
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("journal: close: %w", err)
	}
	return w.err
}

// run is a lane's pending streamed text of one type.
type run struct {
	typ, lane string
	text      strings.Builder
}

func (w *Writer) coalesce(typ, lane, text string) {
	if text == "" {
		return
	}
	var r *run
	for _, p := range w.pending {
		if p.lane == lane {
			r = p
			break
		}
	}
	if r != nil && r.typ != typ {
		// Thinking turned into text (or back) on this lane: everything
		// pending goes first, so the lane's own order is kept.
		w.flushPending(false)
		r = nil
	}
	if r == nil {
		r = &run{typ: typ, lane: lane}
		w.pending = append(w.pending, r)
	}
	r.text.WriteString(text)
	if r.text.Len() >= flushAt {
		s := r.text.String()
		keep := w.red.holdBack(s)
		w.writeDelta(r.typ, r.lane, s[:len(s)-keep])
		r.text.Reset()
		r.text.WriteString(s[len(s)-keep:])
	}
}

// flushPending writes every pending run, lane by lane in the order they
// started; with sync it also fsyncs.
func (w *Writer) flushPending(sync bool) {
	for _, r := range w.pending {
		w.writeDelta(r.typ, r.lane, r.text.String())
	}
	w.pending = w.pending[:0]
	if sync && w.dirty && w.err == nil {
		w.sync()
	}
}

func (w *Writer) sync() {
	if err := w.f.Sync(); err != nil {
		w.fail(fmt.Errorf("journal: fsync: %w", err))
		return
	}
	w.dirty = false
}

func (w *Writer) writeDelta(typ, lane, text string) {
	if text == "" {
		return
	}
	var e agent.Event = agent.TextDelta{Lane: lane, Text: text}
	if typ == "thinking" {
		e = agent.ThinkingDelta{Lane: lane, Text: text}
	}
	line, err := agent.EncodeEvent(e)
	if err != nil {
		w.fail(err)
		return
	}
	w.write(line, false)
}

// write appends one line with a single write(2), so a killed process leaves
// either the whole line in the page cache or none of it.
func (w *Writer) write(line []byte, sync bool) {
	if w.err != nil {
		return
	}
	line = w.red.apply(line)
	w.scratch = append(append(w.scratch[:0], line...), '\n')
	n, err := w.f.Write(w.scratch)
	if cap(w.scratch) > 1<<20 {
		w.scratch = nil // do not pin one huge tool result forever
	}
	if err != nil {
		// Cut a partial line back off so the file stays whole lines; if
		// that fails too, the reader drops the torn tail on resume.
		if n > 0 {
			_ = w.f.Truncate(w.size)
		}
		w.fail(fmt.Errorf("journal: write: %w", err))
		return
	}
	w.size += int64(n)
	w.dirty = true
	if sync {
		w.sync()
	}
}

func (w *Writer) fail(err error) {
	if w.err != nil {
		return
	}
	w.err, w.report = err, err
}

// unlock releases the lock and then tells the hook about a new failure.
func (w *Writer) unlock() {
	err, hook := w.report, w.onError
	w.report = nil
	w.mu.Unlock()
	if err != nil && hook != nil {
		hook(err)
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
