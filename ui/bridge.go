// Package ui connects the agent to the console. Its Bridge is both the
// agent's event Sink and the approvals Approver: events and approval
// requests travel, in one order, to the Bubble Tea program (ui/app), which
// renders them. The subpackages hold the models (app, transcript, modal,
// diffview, panes, input, status) and the text sanitizer.
package ui

import (
	"context"
	"errors"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"

	"staage/agent"
	"staage/approvals"
	"staage/ui/modal"
)

// EventMsg carries one agent event into the program.
type EventMsg struct{ Event agent.Event }

// ErrClosed is returned by Approve once the console has exited.
var ErrClosed = errors.New("ui: the console has exited")

// Sender is what the bridge needs of a program (a *tea.Program).
type Sender interface{ Send(tea.Msg) }

// Bridge forwards events and approval requests to the program. Publish
// never blocks the agent loop: messages queue in order and one goroutine
// hands them to the program; consecutive text deltas of a lane are merged
// while they wait, so a fast stream costs the program one message per
// batch instead of one per token.
type Bridge struct {
	mu     sync.Mutex
	wake   *sync.Cond
	prog   Sender
	queue  []tea.Msg
	next   uint64
	closed bool
	done   chan struct{}
}

// NewBridge returns a bridge that buffers until Attach.
func NewBridge() *Bridge {
	b := &Bridge{done: make(chan struct{})}
	b.wake = sync.NewCond(&b.mu)
	return b
}

// Attach connects the program and starts delivering what was buffered.
// Only the first call has an effect.
func (b *Bridge) Attach(p Sender) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.prog != nil || b.closed {
		return
	}
	b.prog = p
	go b.pump()
}

// Close is called when the program has exited: buffered messages are
// dropped and pending and future approvals fail with ErrClosed.
func (b *Bridge) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	b.queue = nil
	close(b.done)
	b.wake.Broadcast()
}

// Publish implements agent.Sink.
func (b *Bridge) Publish(e agent.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	lane, text, thinking, isDelta := deltaOf(e)
	if isDelta {
		if n := len(b.queue); n > 0 {
			if d, ok := b.queue[n-1].(*pendingDelta); ok && d.lane == lane && d.thinking == thinking {
				d.text.WriteString(text)
				return
			}
		}
		d := &pendingDelta{lane: lane, thinking: thinking}
		d.text.WriteString(text)
		b.queue = append(b.queue, d)
	} else {
		b.queue = append(b.queue, EventMsg{Event: e})
	}
	b.wake.Signal()
}

// pendingDelta accumulates consecutive deltas of one lane while they wait
// for the program (a builder: merging stays linear in the text).
type pendingDelta struct {
	lane     string
	thinking bool
	text     strings.Builder
}

func (d *pendingDelta) event() agent.Event {
	if d.thinking {
		return agent.ThinkingDelta{Lane: d.lane, Text: d.text.String()}
	}
	return agent.TextDelta{Lane: d.lane, Text: d.text.String()}
}

func deltaOf(e agent.Event) (lane, text string, thinking, ok bool) {
	switch d := e.(type) {
	case agent.TextDelta:
		return d.Lane, d.Text, false, true
	case agent.ThinkingDelta:
		return d.Lane, d.Text, true, true
	}
	return "", "", false, false
}

// Approve implements approvals.Approver: the request joins the modal's
// FIFO queue and the caller blocks until the operator answers, ctx is done
// (the request is then withdrawn from the screen) or the console exits.
func (b *Bridge) Approve(ctx context.Context, req approvals.Request) (approvals.Decision, error) {
	answer := make(chan approvals.Decision, 1)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return approvals.Decision{}, ErrClosed
	}
	b.next++
	key := b.next
	b.queue = append(b.queue, modal.OpenMsg{Request: modal.Request{Key: key, Req: req, Answer: answer}})
	b.wake.Signal()
	b.mu.Unlock()

	select {
	case d := <-answer:
		return d, nil
	case <-ctx.Done():
		b.withdraw(key)
		// An answer that raced the cancellation still wins: it was
		// given for this very request.
		select {
		case d := <-answer:
			return d, nil
		default:
		}
		return approvals.Decision{}, ctx.Err()
	case <-b.done:
		return approvals.Decision{}, ErrClosed
	}
}

func (b *Bridge) withdraw(key uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	// Still queued: remove it before it ever reaches the screen.
	for i, m := range b.queue {
		if o, ok := m.(modal.OpenMsg); ok && o.Request.Key == key {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			return
		}
	}
	b.queue = append(b.queue, modal.CancelMsg{Key: key})
	b.wake.Signal()
}

func (b *Bridge) pump() {
	for {
		b.mu.Lock()
		for len(b.queue) == 0 && !b.closed {
			b.wake.Wait()
		}
		if b.closed {
			b.mu.Unlock()
			return
		}
		msg := b.queue[0]
		b.queue[0] = nil
		b.queue = b.queue[1:]
		if d, ok := msg.(*pendingDelta); ok {
			msg = EventMsg{Event: d.event()}
		}
		p := b.prog
		b.mu.Unlock()
		// Send blocks until the program takes the message, and is a
		// no-op once the program has exited.
		p.Send(msg)
	}
}

// Static checks: the bridge is both halves.
var (
	_ agent.Sink         = (*Bridge)(nil)
	_ approvals.Approver = (*Bridge)(nil)
)
