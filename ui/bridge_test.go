package ui

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"staage/agent"
	"staage/approvals"
	"staage/tools"
	"staage/ui/modal"
)

// recorder is a fake program: it records messages and, like the console,
// answers approval requests in the order they reach it.
type recorder struct {
	mu   sync.Mutex
	msgs []tea.Msg
	got  chan tea.Msg
}

func newRecorder() *recorder { return &recorder{got: make(chan tea.Msg, 1000)} }

func (r *recorder) Send(m tea.Msg) {
	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
	r.got <- m
}

func (r *recorder) next(t *testing.T) tea.Msg {
	t.Helper()
	select {
	case m := <-r.got:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message")
		return nil
	}
}

func req(id string) approvals.Request {
	return approvals.Request{ID: id, Descriptor: tools.Descriptor{Name: "bash", Effect: tools.EffectIrreversible}}
}

func TestBridgeBuffersUntilAttach(t *testing.T) {
	b := NewBridge()
	b.Publish(agent.UserMessage{Lane: "main", Text: "hi"})
	b.Publish(agent.TurnDone{Lane: "main", Stop: "end_turn"})
	r := newRecorder()
	b.Attach(r)
	if m := r.next(t).(EventMsg); m.Event.(agent.UserMessage).Text != "hi" {
		t.Fatalf("first = %#v", m)
	}
	if _, ok := r.next(t).(EventMsg).Event.(agent.TurnDone); !ok {
		t.Fatal("order lost")
	}
}

func TestBridgeMergesDeltasWhileWaiting(t *testing.T) {
	b := NewBridge()
	for i := 0; i < 5000; i++ {
		b.Publish(agent.TextDelta{Lane: "main", Text: "x"})
	}
	b.Publish(agent.TextDelta{Lane: "child", Text: "y"})
	b.Publish(agent.TextDelta{Lane: "main", Text: "z"})
	r := newRecorder()
	b.Attach(r)
	first := r.next(t).(EventMsg).Event.(agent.TextDelta)
	if len(first.Text) != 5000 {
		t.Fatalf("first batch has %d bytes, want 5000 merged", len(first.Text))
	}
	if d := r.next(t).(EventMsg).Event.(agent.TextDelta); d.Lane != "child" {
		t.Fatal("lanes merged together")
	}
	if d := r.next(t).(EventMsg).Event.(agent.TextDelta); d.Text != "z" {
		t.Fatal("a delta merged across another lane's")
	}
}

func TestBridgeApproveFIFOFromManyGoroutines(t *testing.T) {
	b := NewBridge()
	r := newRecorder()
	b.Attach(r)
	const n = 20
	var wg sync.WaitGroup
	results := make([]approvals.Decision, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			d, err := b.Approve(context.Background(), req(fmt.Sprint(i)))
			if err != nil {
				t.Error(err)
			}
			results[i] = d
		}(i)
	}
	// Answer in arrival order, naming each decision after its request.
	for i := 0; i < n; i++ {
		o := r.next(t).(modal.OpenMsg)
		o.Request.Answer <- approvals.Decision{Verdict: approvals.Approve, Note: o.Request.Req.ID}
	}
	wg.Wait()
	for i, d := range results {
		if d.Note != fmt.Sprint(i) {
			t.Fatalf("request %d got the answer for %q", i, d.Note)
		}
	}
}

func TestBridgeCancelWithdrawsFromScreen(t *testing.T) {
	b := NewBridge()
	r := newRecorder()
	b.Attach(r)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := b.Approve(ctx, req("a")); errc <- err }()
	o := r.next(t).(modal.OpenMsg)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	c, ok := r.next(t).(modal.CancelMsg)
	if !ok || c.Key != o.Request.Key {
		t.Fatalf("no cancel for the withdrawn request: %#v", c)
	}
}

func TestBridgeCancelBeforeDeliveryNeverShows(t *testing.T) {
	b := NewBridge() // not attached: the request waits in the queue
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := b.Approve(ctx, req("a")); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	<-errc
	b.Publish(agent.TurnDone{Lane: "main"})
	r := newRecorder()
	b.Attach(r)
	if _, ok := r.next(t).(EventMsg); !ok {
		t.Fatal("a withdrawn request still reached the program")
	}
}

func TestBridgeCloseReleasesApprovals(t *testing.T) {
	b := NewBridge()
	b.Attach(newRecorder())
	errc := make(chan error, 1)
	go func() { _, err := b.Approve(context.Background(), req("a")); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	b.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Approve still blocked after Close")
	}
	if _, err := b.Approve(context.Background(), req("b")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Approve after Close: %v", err)
	}
	b.Publish(agent.TurnDone{}) // must not block or panic
}

// TestBridgePublishNeverBlocks: with a program that never takes messages,
// Publish still returns at once.
func TestBridgePublishNeverBlocks(t *testing.T) {
	b := NewBridge()
	stuck := make(blocked)
	defer close(stuck)
	b.Attach(stuck)
	done := make(chan struct{})
	go func() {
		for i := 0; i < 10000; i++ {
			b.Publish(agent.ToolStarted{Lane: "main", ID: fmt.Sprint(i)})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish blocked on a stuck program")
	}
	b.Close()
}

// blocked is a program that takes no message until it is closed.
type blocked chan struct{}

func (b blocked) Send(tea.Msg) { <-b }

// BenchmarkBridgePublishDelta is what the agent loop pays per streamed
// delta while the program is busy (the delta merges into the queue).
func BenchmarkBridgePublishDelta(b *testing.B) {
	br := NewBridge()
	stuck := make(blocked)
	defer close(stuck)
	br.Attach(stuck)
	d := agent.TextDelta{Lane: "main", Text: "tok "}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		br.Publish(d)
		if i%4096 == 4095 {
			b.StopTimer()
			br.mu.Lock()
			br.queue = br.queue[:0]
			br.mu.Unlock()
			b.StartTimer()
		}
	}
	b.StopTimer()
	br.Close()
}
