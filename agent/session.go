package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"staage/approvals"
	"staage/tools"
)

// MainLane is the operator's own thread.
const MainLane = "main"

// DefaultMaxSteps bounds model calls per turn.
const DefaultMaxSteps = 50

// Stop reasons of a turn (TurnDone.Stop).
const (
	StopEndTurn     = "end_turn"
	StopMaxSteps    = "max_steps"
	StopMaxTokens   = "max_tokens"
	StopInterrupted = "interrupted"
	StopIncomplete  = "incomplete"
	StopError       = "error"
)

// SessionConfig wires a session.
type SessionConfig struct {
	Provider Provider
	Toolset  *tools.Toolset
	Gate     *approvals.Gate
	Sink     Sink
	System   string
	// MaxSteps bounds model calls per turn (DefaultMaxSteps when zero).
	MaxSteps  int
	MaxTokens int
	// Sandbox describes bash's containment, for approval requests.
	Sandbox string
	// Cost prices a response's usage; nil when prices are unknown.
	Cost func(Usage) float64
}

// Session is the agent side of one console session: the state, the loop and
// the one ordered event stream.
type Session struct {
	cfg      SessionConfig
	state    *State
	children childSeq

	pubMu sync.Mutex
}

// NewSession builds a session.
func NewSession(cfg SessionConfig) *Session {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.Sink == nil {
		cfg.Sink = SinkFunc(func(Event) {})
	}
	return &Session{cfg: cfg, state: NewState()}
}

// State is the live state (read-only use).
func (s *Session) State() *State { return s.state }

// Toolset is the session's full toolset.
func (s *Session) Toolset() *tools.Toolset { return s.cfg.Toolset }

// ProviderName names the model for the operator.
func (s *Session) ProviderName() string {
	if s.cfg.Provider == nil {
		return "no model"
	}
	return s.cfg.Provider.Name()
}

// publish applies e to the state and hands it to the sink, in one order for
// every lane.
func (s *Session) publish(e Event) {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	s.state.Apply(e)
	s.cfg.Sink.Publish(e)
}

// Turn describes one turn.
type Turn struct {
	Lane   string
	Prompt string
	// Profile narrows the toolset for this turn (Full when zero).
	Profile tools.Profile
	// Toolset replaces the session's toolset (a write child rooted in its
	// worktree); nil uses the session's.
	Toolset *tools.Toolset
	// Child turns never ask a human.
	Child bool
	// Gate replaces the session's gate (a write child's derived gate).
	Gate *approvals.Gate
	// System replaces the session's system prompt.
	System string
}

// Run runs one turn of the operator's prompt on a lane with every tool.
func (s *Session) Run(ctx context.Context, lane, prompt string) (TurnDone, error) {
	return s.RunTurn(ctx, Turn{Lane: lane, Prompt: prompt, Profile: tools.Full()})
}

// RunTurn runs one turn: the model is called until it answers without tool
// calls, the step budget is spent, the stream is cut, or ctx is cancelled
// (which interrupts a running tool). Faults become events and a TurnDone;
// the returned error is only for a misconfigured session.
func (s *Session) RunTurn(ctx context.Context, t Turn) (TurnDone, error) {
	if s.cfg.Provider == nil || s.cfg.Toolset == nil || s.cfg.Gate == nil {
		return TurnDone{}, errors.New("agent: session needs a provider, a toolset and a gate")
	}
	if t.Lane == "" {
		t.Lane = MainLane
	}
	full := s.cfg.Toolset
	if t.Toolset != nil {
		full = t.Toolset
	}
	offered := full.Narrow(t.Profile)
	gate := s.cfg.Gate
	if t.Gate != nil {
		gate = t.Gate
	}
	system := s.cfg.System
	if t.System != "" {
		system = t.System
	}
	s.publish(UserMessage{Lane: t.Lane, Text: t.Prompt})
	done := func(stop string) (TurnDone, error) {
		td := TurnDone{Lane: t.Lane, Stop: stop}
		s.publish(td)
		return td, nil
	}
	for step := 0; step < s.cfg.MaxSteps; step++ {
		if ctx.Err() != nil {
			return done(StopInterrupted)
		}
		resp := s.stream(ctx, t.Lane, Request{
			System: system, Messages: s.state.History(t.Lane),
			Tools: offered.Catalog(), MaxTokens: s.cfg.MaxTokens,
		})
		if resp.stop != "" {
			return done(resp.stop)
		}
		if len(resp.calls) == 0 {
			if resp.reason == StopMaxTokens {
				return done(StopMaxTokens)
			}
			return done(StopEndTurn)
		}
		if stop := s.dispatchAll(ctx, t, gate, full, offered, resp.calls); stop != "" {
			return done(stop)
		}
	}
	s.publish(Warning{Lane: t.Lane, Message: fmt.Sprintf("the turn used its %d model calls and was stopped", s.cfg.MaxSteps)})
	return done(StopMaxSteps)
}

// dispatchAll runs one response's calls in order. After an interrupt the
// rest are answered as cancelled, so every call the model made has a result.
func (s *Session) dispatchAll(ctx context.Context, t Turn, gate *approvals.Gate, full, offered *tools.Toolset, calls []ToolCallPart) string {
	for i, c := range calls {
		if ctx.Err() != nil {
			for _, rest := range calls[i:] {
				s.publish(ToolCall{Lane: t.Lane, ID: rest.ID, Tool: rest.Name, Input: inputJSON(rest.Input)})
				s.publishResult(t.Lane, rest.ID, rest.Name, tools.Refuse(tools.ToolCancelled, "the turn was interrupted before this call ran"))
			}
			return StopInterrupted
		}
		s.dispatch(ctx, t, gate, full, offered, c)
	}
	if ctx.Err() != nil {
		return StopInterrupted
	}
	return ""
}
