// Package script is the offline provider: it replays a scripted conversation,
// one response per model call. It backs the tests and the embedded demo, and
// it is the default when no model is configured.
package script

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"staage/agent"
)

// Script is the file format:
//
//	{"responses":[{"text":"…","tool_calls":[{"id":"c1","name":"file_read","input":{…}}]}, …]}
type Script struct {
	Name      string     `json:"name,omitempty"`
	Responses []Response `json:"responses"`
}

// Response is one scripted model response.
type Response struct {
	Text      string     `json:"text,omitempty"`
	Thinking  string     `json:"thinking,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// DelayMS paces the streamed words (the demo uses it to look alive).
	DelayMS int `json:"delay_ms,omitempty"`
	// Cut ends the stream with an error after the text, before its stop:
	// a scripted fault.
	Cut bool `json:"cut,omitempty"`
}

// ToolCall is one scripted call. Input is sent to the loop exactly as
// written, so scripts can exercise malformed arguments (a JSON string holds
// raw text: "input_raw").
type ToolCall struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input,omitempty"`
	InputRaw *string         `json:"input_raw,omitempty"`
}

// Provider replays a Script.
type Provider struct {
	name   string
	script Script

	mu   sync.Mutex
	next int
	// Requests records what the loop sent, for tests.
	requests []agent.Request
}

// Parse reads a script, naming the line and column of a syntax error.
func Parse(b []byte) (Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line, col := position(b, se.Offset)
			return Script{}, fmt.Errorf("script: line %d, column %d: %v", line, col, se)
		case errors.As(err, &te):
			line, col := position(b, te.Offset)
			return Script{}, fmt.Errorf("script: line %d, column %d: %s must be %s", line, col, te.Field, te.Type)
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			line, _ := position(b, int64(len(b)))
			return Script{}, fmt.Errorf("script: line %d: unexpected end of file", line)
		}
		return Script{}, fmt.Errorf("script: %w", err)
	}
	if dec.More() {
		return Script{}, errors.New("script: trailing data after the script object")
	}
	for i, r := range s.Responses {
		for j, c := range r.ToolCalls {
			if c.Name == "" {
				return Script{}, fmt.Errorf("script: response %d, call %d: no tool name", i+1, j+1)
			}
			if c.ID == "" {
				s.Responses[i].ToolCalls[j].ID = fmt.Sprintf("r%dc%d", i+1, j+1)
			}
		}
	}
	return s, nil
}

func position(b []byte, off int64) (line, col int) {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	line = 1 + bytes.Count(b[:off], []byte("\n"))
	col = int(off) - bytes.LastIndexByte(b[:off], '\n')
	return line, col
}

// New parses a script into a provider.
func New(b []byte) (*Provider, error) {
	s, err := Parse(b)
	if err != nil {
		return nil, err
	}
	name := "script"
	if s.Name != "" {
		name = "script/" + s.Name
	}
	return &Provider{name: name, script: s}, nil
}

// WithName sets the name the status bar shows ("offline demo").
func (p *Provider) WithName(name string) *Provider { p.name = name; return p }

// Name names the provider.
func (p *Provider) Name() string { return p.name }

// Remaining counts responses not yet played.
func (p *Provider) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.script.Responses) - p.next
}

// Requests returns what the loop sent so far.
func (p *Provider) Requests() []agent.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]agent.Request(nil), p.requests...)
}

// Skip advances past n responses (resume continues a script where the
// journal says it stopped).
func (p *Provider) Skip(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next = min(p.next+n, len(p.script.Responses))
}

// Stream plays the next response. When responses run out it answers with an
// empty end_turn, so the turn ends.
func (p *Provider) Stream(ctx context.Context, req agent.Request) (agent.Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.requests = append(p.requests, req)
	var r Response
	exhausted := p.next >= len(p.script.Responses)
	if !exhausted {
		r = p.script.Responses[p.next]
		p.next++
	}
	p.mu.Unlock()
	return &stream{ctx: ctx, events: events(r, exhausted), delay: time.Duration(r.DelayMS) * time.Millisecond, cut: r.Cut}, nil
}

func events(r Response, exhausted bool) []agent.StreamEvent {
	var evs []agent.StreamEvent
	if exhausted {
		return []agent.StreamEvent{{Kind: agent.StreamStop, StopReason: "end_turn"}}
	}
	if r.Thinking != "" {
		evs = append(evs, agent.StreamEvent{Kind: agent.StreamThinking, Text: r.Thinking},
			agent.StreamEvent{Kind: agent.StreamThinking, Signature: "script"})
	}
	for _, w := range splitWords(r.Text) {
		evs = append(evs, agent.StreamEvent{Kind: agent.StreamText, Text: w})
	}
	for i, c := range r.ToolCalls {
		args := string(c.Input)
		if c.InputRaw != nil {
			args = *c.InputRaw
		}
		evs = append(evs, agent.StreamEvent{Kind: agent.StreamToolStart, Index: i, ID: c.ID, Name: c.Name})
		// Fragments, as real providers send them.
		for len(args) > 0 {
			n := min(16, len(args))
			evs = append(evs, agent.StreamEvent{Kind: agent.StreamToolDelta, Index: i, ArgsDelta: args[:n]})
			args = args[n:]
		}
		evs = append(evs, agent.StreamEvent{Kind: agent.StreamToolEnd, Index: i})
	}
	out := int64(len(r.Text)/4 + 1)
	evs = append(evs, agent.StreamEvent{Kind: agent.StreamUsage, Usage: agent.Usage{InputTokens: 0, OutputTokens: out}})
	stop := "end_turn"
	if len(r.ToolCalls) > 0 {
		stop = "tool_use"
	}
	evs = append(evs, agent.StreamEvent{Kind: agent.StreamStop, StopReason: stop})
	return evs
}

// splitWords keeps whitespace attached so the deltas concatenate exactly.
func splitWords(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexAny(s[1:], " \n")
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

type stream struct {
	ctx    context.Context
	events []agent.StreamEvent
	i      int
	delay  time.Duration
	cut    bool
}

// errCut is the scripted fault of a response with "cut": true.
var errCut = errors.New("scripted cut: connection reset before the response ended")

func (s *stream) Next() (agent.StreamEvent, error) {
	if err := s.ctx.Err(); err != nil {
		return agent.StreamEvent{}, err
	}
	if s.i >= len(s.events) {
		return agent.StreamEvent{}, io.EOF
	}
	ev := s.events[s.i]
	if s.cut && ev.Kind != agent.StreamText {
		return agent.StreamEvent{}, errCut
	}
	if s.delay > 0 && ev.Kind == agent.StreamText {
		t := time.NewTimer(s.delay)
		select {
		case <-s.ctx.Done():
			t.Stop()
			return agent.StreamEvent{}, s.ctx.Err()
		case <-t.C:
		}
	}
	s.i++
	return ev, nil
}

func (s *stream) Close() error { return nil }
