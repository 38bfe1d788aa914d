// Package wiretest is the fake API server the provider tests replay
// recorded wire bodies through, and helpers to drain a stream.
package wiretest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"staage/agent"
	"staage/agent/provider/wire"
)

// Reply is one scripted HTTP response.
type Reply struct {
	Status int
	Header http.Header
	Body   string
	// Hang keeps the response open after Body until the client goes away
	// (headers then silence, or a body that stops mid-way).
	Hang bool
	// NoHeaders blocks before sending anything.
	NoHeaders bool
}

// SSE is a 200 text/event-stream reply of body.
func SSE(body string) Reply {
	return Reply{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: body}
}

// JSONError is an error reply with a JSON body and optional headers
// (pairs of name, value).
func JSONError(status int, body string, header ...string) Reply {
	h := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return Reply{Status: status, Header: h, Body: body}
}

// Server replays Replies in order and records what it received.
type Server struct {
	*httptest.Server
	t       testing.TB
	mu      sync.Mutex
	replies []Reply
	bodies  [][]byte
	headers []http.Header
	paths   []string
}

// NewServer starts a server that answers with replies, one per request.
func NewServer(t testing.TB, replies ...Reply) *Server {
	s := &Server{t: t, replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Push appends replies (for the loop tests, one per model call).
func (s *Server) Push(r ...Reply) {
	s.mu.Lock()
	s.replies = append(s.replies, r...)
	s.mu.Unlock()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.headers = append(s.headers, r.Header.Clone())
	s.paths = append(s.paths, r.URL.Path)
	if len(s.replies) == 0 {
		s.mu.Unlock()
		s.t.Errorf("wiretest: unexpected request %d to %s", len(s.bodies), r.URL.Path)
		http.Error(w, `{"error":"no scripted reply"}`, 500)
		return
	}
	rep := s.replies[0]
	s.replies = s.replies[1:]
	s.mu.Unlock()
	if rep.NoHeaders {
		<-r.Context().Done()
		return
	}
	for k, v := range rep.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(rep.Status)
	_, _ = io.WriteString(w, rep.Body)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if rep.Hang {
		<-r.Context().Done()
	}
}

// Requests returns the bodies received so far.
func (s *Server) Requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

// Headers returns the request headers received so far.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

// Paths returns the request paths received so far.
func (s *Server) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// Fixture reads testdata/name.
func Fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Drain reads a stream to its end: the events, and the error that ended it
// (nil for a clean io.EOF).
func Drain(t testing.TB, s agent.Stream) ([]agent.StreamEvent, error) {
	t.Helper()
	defer s.Close()
	var evs []agent.StreamEvent
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
		if len(evs) > 1_000_000 {
			t.Fatal("stream does not end")
		}
	}
}

// Policy is a retry policy for tests: no real waits (the delays are
// recorded), no jitter, a short idle timeout.
func Policy(delays *[]time.Duration) wire.Policy {
	var mu sync.Mutex
	return wire.Policy{
		MaxAttempts:   4,
		BaseDelay:     time.Second,
		MaxDelay:      30 * time.Second,
		MaxRetryAfter: 60 * time.Second,
		IdleTimeout:   500 * time.Millisecond,
		Jitter:        func(d time.Duration) time.Duration { return d },
		Now:           Now,
		Sleep: func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			*delays = append(*delays, d)
			mu.Unlock()
			return ctx.Err()
		},
	}
}

// Now is the fixed clock of Policy.
func Now() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }

// Text concatenates the text events.
func Text(evs []agent.StreamEvent) string {
	var s string
	for _, e := range evs {
		if e.Kind == agent.StreamText {
			s += e.Text
		}
	}
	return s
}

// Call is a tool call reassembled from stream events.
type Call struct {
	Index     int
	ID, Name  string
	Args      string
	Ended     bool
	StartedAt int
}

// Calls reassembles tool calls by index, in start order.
func Calls(evs []agent.StreamEvent) []*Call {
	by := map[int]*Call{}
	args := map[int]*strings.Builder{}
	var order []*Call
	for i, e := range evs {
		switch e.Kind {
		case agent.StreamToolStart:
			c := &Call{Index: e.Index, ID: e.ID, Name: e.Name, StartedAt: i}
			by[e.Index] = c
			args[e.Index] = &strings.Builder{}
			order = append(order, c)
		case agent.StreamToolDelta:
			if b := args[e.Index]; b != nil {
				b.WriteString(e.ArgsDelta)
			}
		case agent.StreamToolEnd:
			if c := by[e.Index]; c != nil {
				c.Ended = true
			}
		}
	}
	for _, c := range order {
		c.Args = args[c.Index].String()
	}
	return order
}

// Find returns the events of one kind.
func Find(evs []agent.StreamEvent, kind agent.StreamKind) []agent.StreamEvent {
	var out []agent.StreamEvent
	for _, e := range evs {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}
