package wire

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"staage/agent"
	"staage/tools"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		h    map[string]string
		want time.Duration
		ok   bool
	}{
		{map[string]string{"Retry-After": "2"}, 2 * time.Second, true},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, true},
		{map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second, true},
		{map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
		{map[string]string{"Retry-After-Ms": "junk", "Retry-After": "9"}, 9 * time.Second, true},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{map[string]string{"Retry-After": "-3"}, 0, false},
		{map[string]string{"Retry-After": "1e300"}, 0, false},
		{map[string]string{}, 0, false},
	}
	for _, c := range cases {
		h := http.Header{}
		for k, v := range c.h {
			h.Set(k, v)
		}
		d, ok := RetryAfter(h, now)
		if d != c.want || ok != c.ok {
			t.Errorf("RetryAfter(%v) = %v, %v; want %v, %v", c.h, d, ok, c.want, c.ok)
		}
	}
	if _, ok := RetryAfter(nil, now); ok {
		t.Error("nil header gave a hint")
	}
}

func TestBackoffDoublesAndCaps(t *testing.T) {
	p := Policy{BaseDelay: time.Second, MaxDelay: 5 * time.Second, Jitter: func(d time.Duration) time.Duration { return d }}.WithDefaults()
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i, w := range want {
		if got := p.Backoff(i + 1); got != w {
			t.Errorf("Backoff(%d) = %v, want %v", i+1, got, w)
		}
	}
	d, capped := p.Delay(1, &Fault{RetryAfter: time.Hour})
	if d != 60*time.Second || !capped {
		t.Errorf("Delay = %v, %v", d, capped)
	}
}

func TestJitterStaysInRange(t *testing.T) {
	for range 1000 {
		d := halfJitter(10 * time.Second)
		if d < 5*time.Second || d > 10*time.Second {
			t.Fatalf("jitter %v out of [5s, 10s]", d)
		}
	}
}

func TestRetryableStatus(t *testing.T) {
	for code, want := range map[int]bool{408: true, 409: true, 429: true, 500: true, 502: true, 503: true, 529: true, 400: false, 401: false, 403: false, 404: false, 413: false} {
		if RetryableStatus(code) != want {
			t.Errorf("RetryableStatus(%d) != %v", code, want)
		}
	}
}

func TestCheckNames(t *testing.T) {
	ok := []tools.CatalogEntry{{Name: "file_read"}, {Name: "mcp__search-docs"}, {Name: strings.Repeat("a", 64)}}
	if err := CheckNames("p", ok); err != nil {
		t.Errorf("valid names refused: %v", err)
	}
	for _, bad := range [][]tools.CatalogEntry{
		{{Name: ""}}, {{Name: "a b"}}, {{Name: "a.b"}}, {{Name: "ünï"}}, {{Name: strings.Repeat("a", 65)}}, {{Name: "x"}, {Name: "x"}},
	} {
		if err := CheckNames("p", bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestScrubDropsQueryStrings(t *testing.T) {
	got := scrub(`Post "https://gw.example/v1/messages?key=sk-123&x=1": connection reset`)
	if strings.Contains(got, "sk-123") || !strings.Contains(got, "https://gw.example/v1/messages?…") {
		t.Errorf("scrub = %q", got)
	}
}

func TestIdleTransport(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/noheaders":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/trickle":
			// Bytes every 100ms for 800ms: never idle for the 400ms timeout.
			for range 8 {
				_, _ = w.Write([]byte(": ping\n\n"))
				w.(http.Flusher).Flush()
				time.Sleep(100 * time.Millisecond)
			}
			_, _ = w.Write([]byte("end"))
		case "/stall":
			_, _ = w.Write([]byte("start"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	defer close(release)
	c := HTTPClient(nil, 400*time.Millisecond)

	_, err := c.Get(srv.URL + "/noheaders")
	if !errors.Is(err, ErrIdleTimeout) {
		t.Errorf("no headers: err = %v", err)
	}

	resp, err := c.Get(srv.URL + "/trickle")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !strings.HasSuffix(string(b), "end") {
		t.Errorf("trickle: %q, %v", b, err)
	}

	resp, err = c.Get(srv.URL + "/stall")
	if err != nil {
		t.Fatal(err)
	}
	b, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "start" || !errors.Is(err, ErrIdleTimeout) {
		t.Errorf("stall: %q, %v", b, err)
	}
	f := CommonFault(context.Background(), "p", err)
	if f == nil || f.Kind != FaultIdle || !f.Retryable {
		t.Errorf("fault = %+v", f)
	}
}

// fakeAttempt replays events then an error.
type fakeAttempt struct {
	evs []agent.StreamEvent
	err error
}

func (a *fakeAttempt) Next() (agent.StreamEvent, error) {
	if len(a.evs) > 0 {
		e := a.evs[0]
		a.evs = a.evs[1:]
		return e, nil
	}
	return agent.StreamEvent{}, a.err
}
func (a *fakeAttempt) Close() error { return nil }

func TestStreamNeverRetriesAfterOutput(t *testing.T) {
	opened := 0
	open := func(ctx context.Context) (Attempt, error) {
		opened++
		return &fakeAttempt{evs: []agent.StreamEvent{{Kind: agent.StreamText, Text: "partial"}},
			err: &Fault{Provider: "p", Kind: FaultServer, Retryable: true}}, nil
	}
	s := NewStream(context.Background(), "p", Policy{Sleep: func(context.Context, time.Duration) error { return nil }}, open, nil)
	if ev, err := s.Next(); err != nil || ev.Text != "partial" {
		t.Fatalf("first = %+v, %v", ev, err)
	}
	_, err := s.Next()
	var f *Fault
	if !errors.As(err, &f) || !f.StreamCut() || f.FaultKind() != "server_error" || opened != 1 {
		t.Errorf("err = %v, opened = %d", err, opened)
	}
	if _, err2 := s.Next(); err2 != err {
		t.Errorf("the stream did not stay failed: %v", err2)
	}
}

func TestStreamCloseCancelsAWait(t *testing.T) {
	open := func(ctx context.Context) (Attempt, error) {
		return nil, &Fault{Provider: "p", Kind: FaultRateLimited, Retryable: true, RetryAfter: time.Hour}
	}
	s := NewStream(context.Background(), "p", Policy{MaxRetryAfter: time.Hour}, open, nil)
	if ev, err := s.Next(); err != nil || ev.Kind != agent.StreamWarning {
		t.Fatalf("first = %+v, %v", ev, err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.Next(); done <- err }()
	time.Sleep(20 * time.Millisecond)
	_ = s.Close()
	select {
	case err := <-done:
		var f *Fault
		if !errors.As(err, &f) || f.Kind != FaultCanceled {
			t.Errorf("err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not cut the retry wait")
	}
}
