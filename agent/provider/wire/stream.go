package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"staage/agent"
)

// Attempt is one HTTP request's worth of a response, already mapped to
// stream events. Next returns io.EOF after the final StreamStop and any
// other error when the attempt failed.
type Attempt interface {
	Next() (agent.StreamEvent, error)
	Close() error
}

// Opener starts one attempt.
type Opener func(ctx context.Context) (Attempt, error)

// Classifier turns an attempt's error into a Fault.
type Classifier func(ctx context.Context, err error) *Fault

// NewStream drives attempts until one completes, retrying retryable faults
// that happen before the attempt emitted anything, with a StreamWarning for
// each retry. The first request is sent by the first Next.
func NewStream(ctx context.Context, provider string, p Policy, open Opener, classify Classifier) agent.Stream {
	ctx, cancel := context.WithCancel(ctx)
	return &stream{ctx: ctx, cancel: cancel, provider: provider, policy: p.WithDefaults(), open: open, classify: classify}
}

type stream struct {
	ctx      context.Context
	cancel   context.CancelFunc
	provider string
	policy   Policy
	open     Opener
	classify Classifier

	// mu is held by Next for its whole run; Close only cancels when a Next
	// is in flight (the cancel ends that Next, which then cleans up).
	mu       sync.Mutex
	cur      Attempt
	attempts int
	emitted  bool
	delay    time.Duration // the wait before the next attempt
	final    error
}

func (s *stream) Next() (agent.StreamEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.final != nil {
			return agent.StreamEvent{}, s.final
		}
		if s.cur == nil {
			if s.attempts > 0 {
				if err := s.policy.Sleep(s.ctx, s.delay); err != nil {
					return s.fail(s.fault(err))
				}
			}
			s.attempts++
			a, err := s.open(s.ctx)
			if err != nil {
				f := s.fault(err)
				if w, ok := s.retry(f); ok {
					return w, nil
				}
				return s.fail(f)
			}
			s.cur, s.emitted = a, false
		}
		ev, err := s.cur.Next()
		switch {
		case err == nil:
			s.emitted = true
			return ev, nil
		case errors.Is(err, io.EOF):
			s.closeAttempt()
			s.final = io.EOF
			return agent.StreamEvent{}, io.EOF
		}
		s.closeAttempt()
		f := s.fault(err)
		if !s.emitted {
			if w, ok := s.retry(f); ok {
				return w, nil
			}
		}
		f.AfterOutput = s.emitted
		return s.fail(f)
	}
}

// retry decides on another attempt and words the warning the operator sees.
func (s *stream) retry(f *Fault) (agent.StreamEvent, bool) {
	if !f.Retryable || s.attempts >= s.policy.MaxAttempts || s.ctx.Err() != nil {
		return agent.StreamEvent{}, false
	}
	d, capped := s.policy.Delay(s.attempts, f)
	s.delay = d
	msg := fmt.Sprintf("%s: %s; retrying in %s (attempt %d of %d)",
		s.provider, f.Label(), roundDelay(d), s.attempts+1, s.policy.MaxAttempts)
	if capped {
		msg += fmt.Sprintf(" — the server asked to wait %s, capped", roundDelay(f.RetryAfter))
	}
	return agent.StreamEvent{Kind: agent.StreamWarning, Message: msg}, true
}

func (s *stream) fault(err error) *Fault {
	f := s.classifyErr(err)
	if f.RetryAfter == 0 && f.Header != nil {
		f.RetryAfter, _ = RetryAfter(f.Header, s.policy.Now())
	}
	return f
}

func (s *stream) classifyErr(err error) *Fault {
	var f *Fault
	if errors.As(err, &f) {
		return f
	}
	if s.ctx.Err() != nil {
		return &Fault{Provider: s.provider, Kind: FaultCanceled, Err: err}
	}
	if s.classify != nil {
		if f := s.classify(s.ctx, err); f != nil {
			return f
		}
	}
	if f := CommonFault(s.ctx, s.provider, err); f != nil {
		return f
	}
	return &Fault{Provider: s.provider, Kind: FaultNetwork, Message: scrub(err.Error()), Err: err}
}

func (s *stream) fail(f *Fault) (agent.StreamEvent, error) {
	s.final = f
	s.cancel()
	return agent.StreamEvent{}, f
}

func (s *stream) closeAttempt() {
	if s.cur != nil {
		_ = s.cur.Close()
		s.cur = nil
	}
}

// Close ends the stream: the current body is closed and any wait is cut.
// It is safe to call while another goroutine is blocked in Next.
func (s *stream) Close() error {
	s.cancel()
	if s.mu.TryLock() {
		defer s.mu.Unlock()
		s.closeAttempt()
		if s.final == nil {
			s.final = &Fault{Provider: s.provider, Kind: FaultCanceled}
		}
	}
	return nil
}
