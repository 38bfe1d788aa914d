package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"staage/agent"
	"staage/tools"
)

// maxLineProblems caps the per-line problems reported for one file; the
// rest are counted in one summary line.
const maxLineProblems = 20

// Replay is a journal read back.
type Replay struct {
	// Header is the session's header with the provider, sandbox and toolset
	// updated by the latest resume, so digests compare against what the
	// session last ran with.
	Header Header
	// Events are the stream's events in order (coalesced deltas included),
	// then, after Open, the synthetic results for unanswered calls.
	Events []agent.Event
	// Problems are what the reader skipped and why: a torn or garbage tail,
	// unknown event types, bad lines. None of them is fatal.
	Problems []string
	// Unanswered are the tool calls that had no result when the journal
	// ended, in call order. After Open each has a synthetic result.
	Unanswered []Pending
	// Resumes counts earlier resumes of the session.
	Resumes int
	// Size is the file's size when read.
	Size int64

	good      int64 // offset just past the last whole line
	headerErr error
	skipped   int // line problems past maxLineProblems
}

// Pending is a tool call without a result.
type Pending struct {
	Lane string `json:"lane"`
	ID   string `json:"id"`
	Tool string `json:"tool"`
	// Started is true when the handler had begun (tool_started was
	// journaled): its effects may be partly done, so it is shown as
	// interrupted and never re-run.
	Started bool `json:"started"`
}

// Read reads a journal without locking or changing it (listing, export, or
// looking at a session another process holds).
func Read(path string) (*Replay, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	return readFrom(f, path)
}

func readFrom(rd io.Reader, path string) (*Replay, error) {
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("journal: read %s: %w", path, err)
	}
	r := &Replay{Size: int64(len(data))}
	r.parse(data)
	r.Unanswered = unanswered(r.Events)
	return r, nil
}

func (r *Replay) parse(data []byte) {
	lines, torn := splitLines(data)
	r.good = int64(len(data) - len(torn))
	if len(lines) > 0 {
		r.readHeader(lines[0])
	}
	unknown := map[string]int{}
	var unknownOrder []string
	for i, d := range decodeAll(lines[min(1, len(lines)):]) {
		lineNo := i + 2
		if d.err == nil {
			r.Events = append(r.Events, d.e)
			continue
		}
		last := lineNo == len(lines) && len(torn) == 0
		var ue agent.ErrUnknownEvent
		switch {
		case errors.As(d.err, &ue) && ue.Type == lineResumed:
			r.readResumed(lineNo, lines[lineNo-1])
		case errors.As(d.err, &ue) && ue.Type == lineHeader:
			r.lineProblem(fmt.Sprintf("line %d: a second header ignored", lineNo))
		case errors.As(d.err, &ue):
			if unknown[ue.Type] == 0 {
				unknownOrder = append(unknownOrder, ue.Type)
			}
			unknown[ue.Type]++
		case last:
			r.Problems = append(r.Problems, fmt.Sprintf("line %d: garbage last line ignored (%v)", lineNo, d.err))
		default:
			r.lineProblem(fmt.Sprintf("line %d: unreadable line ignored (%v)", lineNo, d.err))
		}
	}
	if len(torn) > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("line %d: torn last line (%d bytes without a newline) ignored; staage stopped while writing it", len(lines)+1, len(torn)))
		if len(lines) == 0 {
			r.headerErr = errors.New("the header line is torn")
		}
	} else if len(lines) == 0 {
		r.headerErr = errors.New("the file is empty")
	}
	if r.skipped > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d more unreadable lines ignored", r.skipped))
	}
	for _, t := range unknownOrder {
		r.Problems = append(r.Problems, fmt.Sprintf("%d event(s) of unknown type %q ignored (written by a newer staage?)", unknown[t], t))
	}
}

// splitLines cuts data into whole lines (without their newline) and the
// torn bytes after the last newline.
func splitLines(data []byte) (lines [][]byte, torn []byte) {
	lines = make([][]byte, 0, bytes.Count(data, []byte{'\n'}))
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return lines, data
		}
		lines = append(lines, data[:nl])
		data = data[nl+1:]
	}
	return lines, nil
}

type decoded struct {
	e   agent.Event
	err error
}

// decodeAll decodes every line. (Decoding on both CPUs was tried: on the
// 2-core target it gained nothing measurable, since the garbage collector
// already uses the second core during a resume.)
func decodeAll(lines [][]byte) []decoded {
	out := make([]decoded, len(lines))
	for i, l := range lines {
		out[i].e, out[i].err = agent.DecodeEvent(l)
	}
	return out
}

func (r *Replay) lineProblem(p string) {
	if len(r.Problems) >= maxLineProblems {
		r.skipped++
		return
	}
	r.Problems = append(r.Problems, p)
}

func (r *Replay) readHeader(line []byte) {
	var h headerLine
	if err := json.Unmarshal(line, &h); err != nil {
		r.headerErr = fmt.Errorf("the header line is unreadable (%v)", err)
		r.Problems = append(r.Problems, "line 1: "+r.headerErr.Error())
		return
	}
	if h.Type != lineHeader || h.Version <= 0 || h.ID == "" {
		r.headerErr = errors.New("the first line is not a staage session header")
		r.Problems = append(r.Problems, "line 1: "+r.headerErr.Error())
		return
	}
	r.Header = h.Header
}

func (r *Replay) readResumed(lineNo int, line []byte) {
	var rl resumedLine
	if err := json.Unmarshal(line, &rl); err != nil {
		r.lineProblem(fmt.Sprintf("line %d: unreadable resume record ignored (%v)", lineNo, err))
		return
	}
	r.Resumes++
	r.Header.Provider, r.Header.Sandbox, r.Header.Tools = rl.Provider, rl.Sandbox, rl.Tools
}

// resumable refuses journals that must not be appended to.
func (r *Replay) resumable() error {
	if r.headerErr != nil {
		return fmt.Errorf("journal: cannot resume: %v (truncated, or not a staage session journal)", r.headerErr)
	}
	if r.Header.Version > Version {
		return fmt.Errorf("journal: cannot resume session %s: it was written by a newer staage (journal format %d; this build reads up to %d)", r.Header.ID, r.Header.Version, Version)
	}
	return nil
}

// unanswered finds the tool calls of the conversation that have no result.
// Calls come from assistant messages (fsynced) and tool_call events, since a
// crash may fall between the two.
func unanswered(events []agent.Event) []Pending {
	type key struct{ lane, id string }
	idx := map[key]int{}
	var calls []Pending
	var done []bool
	add := func(lane, id, tool string) {
		k := key{lane, id}
		if _, ok := idx[k]; ok || id == "" {
			return
		}
		idx[k] = len(calls)
		calls = append(calls, Pending{Lane: lane, ID: id, Tool: tool})
		done = append(done, false)
	}
	for _, e := range events {
		switch v := e.(type) {
		case agent.AssistantMessage:
			for _, c := range v.Message.ToolCalls {
				add(v.Lane, c.ID, c.Name)
			}
		case agent.ToolCall:
			add(v.Lane, v.ID, v.Tool)
		case agent.ToolStarted:
			add(v.Lane, v.ID, v.Tool)
			calls[idx[key{v.Lane, v.ID}]].Started = true
		case agent.ToolResult:
			if i, ok := idx[key{v.Lane, v.ID}]; ok {
				done[i] = true
			}
		}
	}
	var out []Pending
	for i, c := range calls {
		if !done[i] {
			out = append(out, c)
		}
	}
	return out
}

// settleUnanswered builds the synthetic results Open appends.
func (r *Replay) settleUnanswered() []agent.ToolResult {
	var out []agent.ToolResult
	for _, p := range r.Unanswered {
		res := agent.ToolResult{Lane: p.Lane, ID: p.ID, Tool: p.Tool}
		if p.Started {
			res.Refusal = tools.ToolInterrupted
			res.Message = "staage stopped while this call was running; it did not report a result and was not re-run. Its effects may be partly applied: check before retrying."
		} else {
			res.Refusal = tools.ToolCancelled
			res.Message = "staage stopped before this call ran; it was not run."
		}
		out = append(out, res)
	}
	return out
}

// Interrupted reports whether the call lane/id was settled as interrupted.
func (r *Replay) Interrupted(lane, id string) bool {
	return slices.ContainsFunc(r.Unanswered, func(p Pending) bool { return p.Lane == lane && p.ID == id && p.Started })
}

// PathFor is the journal file of session id in dir, refusing IDs that are
// not plain names.
func PathFor(dir, id string) (string, error) {
	if !ValidID(id) {
		return "", fmt.Errorf("journal: %q is %w", id, ErrInvalidID)
	}
	return filepath.Join(dir, id+".jsonl"), nil
}

func jsonLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return b, nil
}
