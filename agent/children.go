package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
)

// ChildTurn starts a child thread in a lane of its own.
type ChildTurn struct {
	Parent    string
	Mode      string // "scout" | "write"
	Objective string
	Worktree  string
	// Turn is the child's turn; its Lane is assigned here and Child is
	// forced on: no human is attached to a child.
	Turn Turn
}

// ChildOutcome is how a child's turn ended.
type ChildOutcome struct {
	Lane string
	Done TurnDone
	// Text is the child's last assistant text (its answer).
	Text string
}

// childSeq numbers child lanes within a session.
type childSeq struct{ n atomic.Int64 }

// RunChild runs a child thread to its end and publishes child_started. The
// caller reads the outcome, builds the envelope and publishes it with
// FinishChild, so the envelope's shape stays the delegating tool's business.
func (s *Session) RunChild(ctx context.Context, ct ChildTurn) (ChildOutcome, error) {
	lane := fmt.Sprintf("%s-%d", ct.Mode, s.children.n.Add(1))
	s.publish(ChildStarted{Lane: ct.Parent, Child: lane, Mode: ct.Mode, Objective: ct.Objective, Worktree: ct.Worktree})
	t := ct.Turn
	t.Lane, t.Child = lane, true
	td, err := s.RunTurn(ctx, t)
	if err != nil {
		return ChildOutcome{Lane: lane}, err
	}
	return ChildOutcome{Lane: lane, Done: td, Text: s.lastText(lane)}, nil
}

// FinishChild publishes a child's envelope to its parent's lane.
func (s *Session) FinishChild(parent, child, status string, envelope any) {
	b, err := json.Marshal(envelope)
	if err != nil {
		b = []byte(`{}`)
	}
	s.publish(ChildFinished{Lane: parent, Child: child, Status: status, Envelope: b})
}

func (s *Session) lastText(lane string) string {
	h := s.state.History(lane)
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == RoleAssistant && h[i].Text != "" {
			return h[i].Text
		}
	}
	return ""
}
